//! GPU kernels: array (being written).

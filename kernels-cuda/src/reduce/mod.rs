//! GPU kernels: reduce (being written).

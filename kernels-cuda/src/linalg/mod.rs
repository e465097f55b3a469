//! GPU kernels: linalg (being written).

//! GPU kernels: nn (being written).

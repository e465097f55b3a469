//! GPU kernels: math (being written).

//! nn kernels.

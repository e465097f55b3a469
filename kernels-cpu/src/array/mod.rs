//! array kernels.

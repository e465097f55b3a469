//! reduce kernels.

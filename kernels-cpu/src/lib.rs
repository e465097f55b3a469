//! CPU kernels of opreg's standard ops.
//!
//! Not written yet: the kernel registry, `#[kernel]` and the CPU kernels
//! arrive with the "Kernels" issue. The crate exists now so the workspace has
//! its final layout.

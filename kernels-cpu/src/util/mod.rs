//! Helpers shared by the kernels: broadcasting, element-wise loops, shape
//! checks.

pub mod broadcast;
pub mod elementwise;

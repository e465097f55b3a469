//! GPU kernels of the linear-algebra ops: MatMul through cuBLAS.

mod matmul;

pub use matmul::{GemmElement, GemmPlan, MatMulGpu};

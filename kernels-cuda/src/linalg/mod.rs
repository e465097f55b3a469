//! GPU kernels of the linear-algebra ops through cuBLAS: `MatMul`,
//! `BatchMatMulV2` and `BatchMatMulV3`.

mod batch_matmul;
mod matmul;

pub use crate::gemm::{GemmElement, GemmPlan};
pub use batch_matmul::{BatchMatMulV2Gpu, BatchMatMulV3Gpu, BatchedGemmPlan};
pub use matmul::MatMulGpu;

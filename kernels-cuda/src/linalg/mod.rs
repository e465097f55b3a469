//! GPU kernels of the linear-algebra ops through cuBLAS: `MatMul`,
//! `BatchMatMulV2`, `BatchMatMulV3` and, with the `array` and `reduce`
//! groups (whose layout and sum kernels it uses), `Einsum`.

mod batch_matmul;
#[cfg(all(feature = "array", feature = "reduce"))]
mod einsum;
mod matmul;

pub use crate::gemm::{GemmElement, GemmPlan};
pub use batch_matmul::{BatchMatMulV2Gpu, BatchMatMulV3Gpu, BatchedGemmPlan};
#[cfg(all(feature = "array", feature = "reduce"))]
pub use einsum::{EinsumGpu, einsum_sources};
pub use matmul::MatMulGpu;

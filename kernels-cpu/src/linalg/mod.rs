//! MatMul, BatchMatMulV2/V3 and Einsum, and the matrix-product engine
//! (`gemm`) they share with Conv2D. Einsum lays its operands out with the
//! `array` group's strided copy (so `linalg` turns that group on).

mod batch_matmul;
mod einsum;
pub(crate) mod gemm;
mod matmul;

pub use batch_matmul::{BatchMatMulKernel, BatchMatMulV3Kernel, BatchMatMulV3MixedKernel};
pub use einsum::EinsumKernel;
pub use matmul::MatMulKernel;

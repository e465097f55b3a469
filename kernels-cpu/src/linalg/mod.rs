//! MatMul, and the matrix-product engine (`gemm`) it shares with Conv2D.

pub(crate) mod gemm;
mod matmul;

pub use matmul::MatMulKernel;

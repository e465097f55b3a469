//! `MatMul`: the product of two matrices, either optionally transposed.

use std::marker::PhantomData;

use super::gemm::{GemmElement, matmul};
use opreg_standard_ops::MatMul;
use registry_core::kernel;
use registry_core::kernel::{
    BuildKernel, KernelError, OpKernel, OpKernelConstruction, OpKernelContext,
};

/// `MatMul` on the CPU: `product = op(a) · op(b)` where `op` transposes
/// when `transpose_a`/`transpose_b` is set.
///
/// Floating-point and complex types run on the `gemm` crate (`bfloat16`
/// through `f32`, rounded once at the end); integers use a blocked loop with
/// wrapping arithmetic. Transposes are read through strides (no copy).
/// `grad_a`/`grad_b` are hints TensorFlow ignores on the CPU, as here.
#[kernel(op = MatMul, device = CPU, T = [float, double, half, bfloat16, complex64, complex128, int32, int64])]
#[derive(Debug)]
pub struct MatMulKernel<T> {
    transpose_a: bool,
    transpose_b: bool,
    _t: PhantomData<fn() -> T>,
}

impl<T: GemmElement> BuildKernel for MatMulKernel<T> {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        Ok(Self {
            transpose_a: ctx.attr("transpose_a")?,
            transpose_b: ctx.attr("transpose_b")?,
            _t: PhantomData,
        })
    }
}

impl<T: GemmElement> OpKernel for MatMulKernel<T> {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        matmul::<T>(ctx, self.transpose_a, self.transpose_b).map(drop)
    }
}

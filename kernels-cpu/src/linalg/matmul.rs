//! `MatMul`: the product of two matrices, either optionally transposed.

use std::marker::PhantomData;

use super::gemm::{GemmElement, MatMulParams};
use opreg_standard_ops::MatMul;
use registry_core::kernel;
use registry_core::kernel::{
    BuildKernel, KernelError, OpKernel, OpKernelConstruction, OpKernelContext,
};
use registry_core::tensor::Tensor;

/// `MatMul` on the CPU: `product = op(a) · op(b)` where `op` transposes
/// when `transpose_a`/`transpose_b` is set.
///
/// Floating-point and complex types run on the `gemm` crate (`bfloat16`
/// through `f32`, rounded once at the end); integers use a blocked loop with
/// wrapping arithmetic. Transposes are read through strides (no copy). A
/// constant `b` (weights) is packed once, before the first run, where the
/// `f32` product has a packed form.
/// `grad_a`/`grad_b` are hints TensorFlow ignores on the CPU, as here.
#[kernel(op = MatMul, device = CPU, T = [float, double, half, bfloat16, complex64, complex128, int32, int64])]
#[derive(Debug)]
pub struct MatMulKernel<T> {
    params: MatMulParams,
    _t: PhantomData<fn() -> T>,
}

impl<T: GemmElement> BuildKernel for MatMulKernel<T> {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        Ok(Self {
            params: MatMulParams::from_attrs(ctx)?,
            _t: PhantomData,
        })
    }
}

impl<T: GemmElement> OpKernel for MatMulKernel<T> {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        self.params.multiply::<T>(ctx).map(drop)
    }

    fn prepare_constant_input(&self, index: usize, value: &Tensor) {
        self.params.offer_constant::<T>(index, value);
    }
}

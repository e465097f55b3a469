//! `MatMul`: the product of two matrices, either optionally transposed.

use std::marker::PhantomData;

use opreg_standard_ops::MatMul;
use registry_core::kernel;
use registry_core::kernel::{
    BuildKernel, KernelError, OpKernel, OpKernelConstruction, OpKernelContext,
};
use registry_core::tensor::Tensor;

use super::gemm::{GemmElement, MatMut, MatRef};

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
        let a = ctx.input(0)?.clone();
        let b = ctx.input(1)?.clone();
        let (a_dims, b_dims) = (matrix_dims(&a, 0)?, matrix_dims(&b, 1)?);
        // TF's dim_pair: the contracted dimension of each operand.
        let a_inner = usize::from(!self.transpose_a);
        let b_inner = usize::from(self.transpose_b);
        registry_core::kernel_ensure!(
            a_dims[a_inner] == b_dims[b_inner],
            "Matrix size-incompatible: In[0]: {}, In[1]: {}",
            a.shape(),
            b.shape()
        );
        let (m, k, n) = (a_dims[1 - a_inner], a_dims[a_inner], b_dims[1 - b_inner]);
        let out = ctx.allocate_output(0, [m, n])?;
        if m == 0 || n == 0 || k == 0 {
            // Empty product, or k = 0: the zero-filled output is the answer.
            return Ok(());
        }
        let a_view = MatRef::row_major(a.as_slice::<T>()?, a_dims[0], a_dims[1])?;
        let b_view = MatRef::row_major(b.as_slice::<T>()?, b_dims[0], b_dims[1])?;
        let a_view = if self.transpose_a { a_view.t() } else { a_view };
        let b_view = if self.transpose_b { b_view.t() } else { b_view };
        T::gemm(
            a_view,
            b_view,
            MatMut::row_major(out.as_mut_slice::<T>()?, m, n)?,
        )
    }
}

/// The two dimensions of input `index`, or TF's error when it is not a
/// matrix.
fn matrix_dims(t: &Tensor, index: usize) -> Result<[usize; 2], KernelError> {
    match *t.dims() {
        [rows, cols] => Ok([rows, cols]),
        _ => Err(KernelError::invalid_argument(format!(
            "In[{index}] is not a matrix. Instead it has shape {}",
            t.shape()
        ))),
    }
}

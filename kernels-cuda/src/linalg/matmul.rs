//! `MatMul` on the GPU through cuBLAS (`cublasGemmEx`, [`crate::gemm`]).

use std::marker::PhantomData;

use opreg_standard_ops::MatMul;
use registry_core::kernel;
use registry_core::kernel::{
    BuildKernel, KernelError, OpKernel, OpKernelConstruction, OpKernelContext,
};
use registry_core::tensor::TensorShape;

use crate::gemm::{GemmElement, GemmPlan, run_gemm};
use opreg_cuda::{GpuContext, GpuTensors};

/// `MatMul` on the GPU through cuBLAS (half, bfloat16, float, double):
/// `product = op(a) · op(b)` where `op` transposes when
/// `transpose_a`/`transpose_b` is set. `k = 0` gives zeros; an empty output
/// makes no cuBLAS call.
///
/// Generic over the element type for cuBLAS's typed scale factors
/// ([`GemmElement`]).
#[kernel(op = MatMul, device = GPU, T = [half, bfloat16, float, double])]
pub struct MatMulGpu<T> {
    transpose_a: bool,
    transpose_b: bool,
    _t: PhantomData<fn() -> T>,
}

impl<T: GemmElement> BuildKernel for MatMulGpu<T> {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        ctx.gpu()?;
        Ok(Self {
            transpose_a: ctx.attr("transpose_a")?,
            transpose_b: ctx.attr("transpose_b")?,
            _t: PhantomData,
        })
    }
}

impl<T: GemmElement> OpKernel for MatMulGpu<T> {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        let a_ptr = ctx.gpu_input(0, T::DTYPE)?;
        let b_ptr = ctx.gpu_input(1, T::DTYPE)?;
        let plan = GemmPlan::new(
            ctx.input(0)?.shape(),
            ctx.input(1)?.shape(),
            self.transpose_a,
            self.transpose_b,
        )?;
        let shape = TensorShape::new([plan.m, plan.n])?;
        if plan.m == 0 || plan.n == 0 || plan.k == 0 {
            // Empty product, or k = 0: zeros.
            let out = ctx.gpu()?.zeros(T::DTYPE, shape)?;
            return ctx.set_output(0, out);
        }
        // The GEMM (beta = 0) writes all m * n output elements.
        ctx.allocate_output(0, shape)?;
        let c_ptr = ctx.gpu_output(0)?;
        // SAFETY: a and b are this node's inputs of T on the GPU (checked
        // by `gpu_input`) with the shapes `plan` was made from; the output
        // was just allocated on the device with m * n elements of T, apart
        // from the inputs.
        unsafe { run_gemm::<T>(ctx.gpu()?, &plan, a_ptr, b_ptr, c_ptr, "MatMul") }
    }
}

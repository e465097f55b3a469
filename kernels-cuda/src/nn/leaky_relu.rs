//! `LeakyRelu` on the GPU: `x > 0 ? x : x * alpha`, as TF's `LeakyReluOp`
//! and the CPU kernel (a select, not a maximum: `alpha` may be above 1 or
//! negative; `alpha` is rounded to the element type first, half floats
//! multiply in `float` and round once).

use cudarc::driver::{CudaFunction, PushKernelArg};
use opreg_standard_ops::LeakyRelu;
use registry_core::kernel;
use registry_core::kernel::{
    BuildKernel, KernelError, OpKernel, OpKernelConstruction, OpKernelContext,
};
use registry_core::proto::DataType;

use super::sources::{self, nn_sources};
use opreg_cuda::{GpuContext, GpuTensors, gpu_error, grid_for};

/// `LeakyRelu` on the GPU (half, bfloat16, float, double, TF's GPU types),
/// in place when the input can be forwarded.
#[kernel(
    op = LeakyRelu,
    device = GPU,
    T = [half, bfloat16, float, double],
    sources = nn_sources
)]
#[derive(Debug)]
pub struct LeakyReluGpu {
    func: CudaFunction,
    dtype: DataType,
    alpha: f32,
}

impl BuildKernel for LeakyReluGpu {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        let dtype = ctx.attr("T")?;
        let func = ctx
            .gpu()?
            .function(&sources::leaky_relu(dtype)?, "leaky_relu")?;
        Ok(Self {
            func,
            dtype,
            alpha: ctx.attr("alpha")?,
        })
    }
}

impl OpKernel for LeakyReluGpu {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        // Checked before the output is allocated.
        ctx.gpu_input(0, self.dtype)?;
        let shape = ctx.input(0)?.shape().clone();
        let n = shape.num_elements();
        let forwarded = ctx.forward_input_or_allocate_output(&[0], 0, shape)?;
        if n == 0 {
            return Ok(());
        }
        let y = ctx.gpu_output(0)?;
        let x = ctx.gpu_operand(0, self.dtype, forwarded, y)?;
        let (len, alpha) = (n as i64, self.alpha);
        let mut launch = ctx.gpu()?.stream().launch_builder(&self.func);
        launch.arg(&x).arg(&y).arg(&len).arg(&alpha);
        // SAFETY: `leaky_relu(const T* x, T* y, index_t n, float alpha)`
        // takes these arguments; both addresses hold n elements of T (the
        // same buffer when the input was forwarded: each element is read
        // before it is written, by one thread).
        unsafe { launch.launch(grid_for(n)) }.map_err(|e| gpu_error("launching LeakyRelu", e))?;
        Ok(())
    }
}

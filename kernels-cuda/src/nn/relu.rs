//! `Relu` on the GPU: an NVRTC kernel (`x < 0 ? 0 : x`).

use std::marker::PhantomData;
use std::sync::Arc;

use cudarc::driver::{CudaFunction, PushKernelArg};
use opreg_standard_ops::Relu;
use registry_core::kernel;
use registry_core::kernel::{
    BuildKernel, KernelError, OpKernel, OpKernelConstruction, OpKernelContext,
};
use registry_core::tensor::TensorElement;

use super::sources;
use opreg_cuda::{GpuDevice, GpuKernelIo, gpu_error, grid_for};

/// `Relu` on the GPU for TF's GPU types (half, bfloat16, float, double):
/// `max(features, 0)` keeping NaN and `-0` as Eigen's `cwiseMax` does.
#[kernel(op = Relu, device = GPU, T = [half, bfloat16, float, double])]
pub struct ReluGpu<T> {
    dev: Arc<GpuDevice>,
    func: CudaFunction,
    _t: PhantomData<fn() -> T>,
}

impl<T: TensorElement> BuildKernel for ReluGpu<T> {
    fn build(_ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        let dev = GpuDevice::get()?;
        let func = dev.function(&sources::relu(T::DTYPE)?, "relu")?;
        Ok(Self {
            dev,
            func,
            _t: PhantomData,
        })
    }
}

impl<T: TensorElement> OpKernel for ReluGpu<T> {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        let (x, x_bytes) = ctx.gpu_input(0)?;
        let shape = x.shape().clone();
        let n = x.num_elements();
        // SAFETY: the kernel writes all n elements (every byte) before
        // anything reads them; for n = 0 there is nothing to write.
        let mut out = unsafe { self.dev.alloc_uninit(x_bytes.len())? };
        if n > 0 {
            let count = n as i64;
            let mut launch = self.dev.stream().launch_builder(&self.func);
            launch.arg(x_bytes).arg(&mut out).arg(&count);
            // SAFETY: `relu(const T*, T*, index_t)` matches these args; both
            // buffers hold n elements of T.
            unsafe { launch.launch(grid_for(n)) }.map_err(|e| gpu_error("launching Relu", e))?;
        }
        ctx.set_output(0, self.dev.tensor(T::DTYPE, shape, out)?)
    }
}

//! The GPU kernel of `ZeroOut`.

use std::sync::Arc;

use cudarc::driver::{CudaFunction, PushKernelArg};
use opreg_cuda::{GpuDevice, GpuKernelIo, KernelSource, gpu_error, grid_for};
use registry_core::kernel;
use registry_core::kernel::{
    BuildKernel, KernelError, OpKernel, OpKernelConstruction, OpKernelContext,
};
use registry_core::proto::DataType;

use crate::ZeroOut;

/// The CUDA C of `ZeroOut`: `y[0] = x[0]`, every other `y[i] = 0`.
pub fn zero_out_source() -> KernelSource {
    KernelSource::new(
        "zero_out/ZeroOut/int32",
        r#"
extern "C" __global__ void zero_out(const i32* x, i32* y, index_t n) {
    GRID_STRIDE(i, n) { y[i] = i == 0 ? x[0] : 0; }
}
"#,
        ["zero_out"],
    )
}

/// `ZeroOut` on the GPU: compiled when the node's kernel is built, one
/// launch per call.
#[kernel(op = ZeroOut, device = GPU)]
struct ZeroOutGpu {
    device: Arc<GpuDevice>,
    function: CudaFunction,
}

impl BuildKernel for ZeroOutGpu {
    fn build(_: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        let device = GpuDevice::get()?;
        let function = device.function(&zero_out_source(), "zero_out")?;
        Ok(Self { device, function })
    }
}

impl OpKernel for ZeroOutGpu {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        let (input, bytes) = ctx.gpu_input(0)?;
        let shape = input.shape().clone();
        let n = input.num_elements();
        // SAFETY: the launch below writes all `n` elements (`y[i]` for
        // every `i < n`); with `n == 0` there are no bytes to write.
        let mut out = unsafe { self.device.alloc_uninit(bytes.len())? };
        if n > 0 {
            let n = n as i64;
            let mut launch = self.device.stream().launch_builder(&self.function);
            launch.arg(bytes).arg(&mut out).arg(&n);
            // SAFETY: `zero_out(const i32*, i32*, index_t)` takes these
            // three arguments; both buffers hold `n` int32 elements.
            unsafe { launch.launch(grid_for(n as usize)) }
                .map_err(|e| gpu_error("launching ZeroOut", e))?;
        }
        let output = self.device.tensor(DataType::DtInt32, shape, out)?;
        ctx.set_output(0, output)
    }
}

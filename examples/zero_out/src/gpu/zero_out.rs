//! The GPU kernel of `ZeroOut`.

use cudarc::driver::{CudaFunction, PushKernelArg};
use opreg_cuda::{GpuContext, GpuTensors, gpu_error, grid_for};
use registry_core::kernel;
use registry_core::kernel::{
    BuildKernel, KernelError, KernelRegistration, KernelSource, OpKernel, OpKernelConstruction,
    OpKernelContext,
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

fn zero_out_sources(_: &KernelRegistration) -> Result<Vec<KernelSource>, KernelError> {
    Ok(vec![zero_out_source()])
}

/// `ZeroOut` on the GPU: compiled for the node's device when its kernel is
/// built, one launch per call.
#[kernel(op = ZeroOut, device = GPU, sources = zero_out_sources)]
struct ZeroOutGpu {
    function: CudaFunction,
}

impl BuildKernel for ZeroOutGpu {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        let function = ctx.gpu()?.function(&zero_out_source(), "zero_out")?;
        Ok(Self { function })
    }
}

impl OpKernel for ZeroOutGpu {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        let x = ctx.gpu_input(0, DataType::DtInt32)?;
        let shape = ctx.input(0)?.shape().clone();
        let n = shape.num_elements();
        // The launch below writes all `n` elements (`y[i]` for every
        // `i < n`).
        ctx.allocate_output(0, shape)?;
        if n > 0 {
            let y = ctx.gpu_output(0)?;
            let n = n as i64;
            let mut launch = ctx.gpu()?.stream().launch_builder(&self.function);
            launch.arg(&x).arg(&y).arg(&n);
            // SAFETY: `zero_out(const i32*, i32*, index_t)` takes these
            // three arguments; both buffers hold `n` int32 elements.
            unsafe { launch.launch(grid_for(n as usize)) }
                .map_err(|e| gpu_error("launching ZeroOut", e))?;
        }
        Ok(())
    }
}

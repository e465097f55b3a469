//! `Cast` on the GPU between `bool`, the integer types and the float types
//! (`half`, `bfloat16`, `float`, `double`), with TF's `Truncate` attr.
//!
//! Conversions follow TF's GPU kernels (see [`source`](super::source)):
//! to `bool` is `x != 0` (NaN is true); to `half`/`bfloat16` goes through
//! `float` (rounding to nearest even); float to integer truncates toward
//! zero as nvcc's casts do (NaN gives 0, out-of-range values saturate to the
//! 32- or 64-bit range, narrower types keep the low bits); integers convert
//! with two's complement truncation. Equal types pass the input through.

use std::sync::Arc;

use cudarc::driver::{CudaFunction, PushKernelArg};
use opreg_standard_ops::Cast;
use registry_core::kernel;
use registry_core::kernel::{
    BuildKernel, KernelError, OpKernel, OpKernelConstruction, OpKernelContext,
};
use registry_core::proto::DataType;

use super::io::{empty_output, flat_launch, input_address, new_output};
use super::source::{cast_source, vector_width};
use opreg_cuda::{GpuDevice, gpu_error};

/// What a built `Cast` kernel does.
enum Plan {
    /// `SrcT == DstT`: the input is the output.
    Identity,
    /// Convert on the GPU.
    Convert {
        dev: Arc<GpuDevice>,
        func: CudaFunction,
    },
}

/// `Cast` from `SrcT` to `DstT` on the GPU.
#[kernel(
    op = Cast,
    device = GPU,
    SrcT = [bool, int8, int16, int32, int64, uint8, uint16, uint32, uint64, half, bfloat16,
            float, double],
    DstT = [bool, int8, int16, int32, int64, uint8, uint16, uint32, uint64, half, bfloat16,
            float, double]
)]
pub struct CastGpu {
    src: DataType,
    dst: DataType,
    plan: Plan,
}

impl std::fmt::Debug for CastGpu {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CastGpu")
            .field("src", &self.src)
            .field("dst", &self.dst)
            .finish()
    }
}

impl CastGpu {
    /// The kernel for a cast from `src` to `dst`; `Unimplemented` (`Cast
    /// string to float is not supported`) for pairs it does not convert.
    pub fn new(src: DataType, dst: DataType, truncate: bool) -> Result<Self, KernelError> {
        if src == dst {
            return Ok(Self {
                src,
                dst,
                plan: Plan::Identity,
            });
        }
        let source = cast_source(src, dst, truncate)?;
        let dev = GpuDevice::get()?;
        let func = dev.function(&source, "cast")?;
        Ok(Self {
            src,
            dst,
            plan: Plan::Convert { dev, func },
        })
    }
}

impl BuildKernel for CastGpu {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        Self::new(ctx.attr("SrcT")?, ctx.attr("DstT")?, ctx.attr("Truncate")?)
    }
}

impl OpKernel for CastGpu {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        let (dev, func) = match &self.plan {
            Plan::Identity => {
                let x = ctx.take_input(0)?;
                return ctx.set_output(0, x);
            }
            Plan::Convert { dev, func } => (dev, func),
        };
        let (x, n, shape) = {
            let x = ctx.input(0)?;
            (
                input_address(dev, x, 0, self.src)?,
                x.num_elements(),
                x.shape().clone(),
            )
        };
        if n == 0 {
            let out = empty_output(dev, ctx, self.dst, shape)?;
            return ctx.set_output(0, out);
        }
        // SAFETY: the kernel launched below writes all n elements.
        let (out, y) = unsafe { new_output(dev, self.dst, n)? };
        let len = n as i64;
        let mut launch = dev.stream().launch_builder(func);
        launch.arg(&x).arg(&y).arg(&len);
        // SAFETY: `cast(const S* x, D* y, index_t n)` takes these arguments;
        // x holds n elements of SrcT, y n of DstT.
        unsafe { launch.launch(flat_launch(n, vector_width(&[self.src, self.dst]))) }
            .map_err(|e| gpu_error("launching Cast", e))?;
        let out = dev.tensor(self.dst, shape, out)?;
        ctx.set_output(0, out)
    }
}

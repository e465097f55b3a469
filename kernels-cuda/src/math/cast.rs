//! `Cast` on the GPU between `bool`, the integer types and the float types
//! (`half`, `bfloat16`, `float`, `double`), with TF's `Truncate` attr.
//!
//! Conversions follow TF's GPU kernels (see [`source`](super::source)):
//! to `bool` is `x != 0` (NaN is true); to `half`/`bfloat16` goes through
//! `float` (rounding to nearest even); float to integer truncates toward
//! zero as nvcc's casts do (NaN gives 0, out-of-range values saturate to the
//! 32- or 64-bit range, narrower types keep the low bits); integers convert
//! with two's complement truncation. Equal types pass the input through.

use cudarc::driver::{CudaFunction, PushKernelArg};
use opreg_standard_ops::Cast;
use registry_core::kernel;
use registry_core::kernel::{
    BuildKernel, KernelError, KernelRegistration, KernelSource, OpKernel, OpKernelConstruction,
    OpKernelContext, constraint_types,
};
use registry_core::proto::DataType;

use super::io::flat_launch;
use super::source::{cast_source, vector_width};
use opreg_cuda::{GpuContext, GpuTensors, gpu_error};

/// What a built `Cast` kernel does.
enum Plan {
    /// `SrcT == DstT`: the input is the output.
    Identity,
    /// Convert on the GPU.
    Convert(CudaFunction),
}

/// The sources a registration of [`CastGpu`] compiles: its (SrcT, DstT)
/// pair, both `Truncate` variants where they differ (none for an identity
/// cast).
pub fn cast_sources(reg: &KernelRegistration) -> Result<Vec<KernelSource>, KernelError> {
    let one = |attr: &str| {
        constraint_types(reg, attr)
            .and_then(|t| t.first().copied())
            .ok_or_else(|| KernelError::internal(format!("Cast: no type constraint on {attr}")))
    };
    let (src, dst) = (one("SrcT")?, one("DstT")?);
    if src == dst {
        return Ok(Vec::new());
    }
    let plain = cast_source(src, dst, false)?;
    let truncated = cast_source(src, dst, true)?;
    Ok(if plain.key() == truncated.key() {
        vec![plain]
    } else {
        vec![plain, truncated]
    })
}

/// `Cast` from `SrcT` to `DstT` on the GPU.
#[kernel(
    op = Cast,
    device = GPU,
    SrcT = [bool, int8, int16, int32, int64, uint8, uint16, uint32, uint64, half, bfloat16,
            float, double],
    DstT = [bool, int8, int16, int32, int64, uint8, uint16, uint32, uint64, half, bfloat16,
            float, double],
    sources = cast_sources
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

impl BuildKernel for CastGpu {
    /// The kernel for a cast from `SrcT` to `DstT`; `Unimplemented` (`Cast
    /// string to float is not supported`) for pairs it does not convert.
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        let (src, dst): (DataType, DataType) = (ctx.attr("SrcT")?, ctx.attr("DstT")?);
        if src == dst {
            return Ok(Self {
                src,
                dst,
                plan: Plan::Identity,
            });
        }
        let source = cast_source(src, dst, ctx.attr("Truncate")?)?;
        let func = ctx.gpu()?.function(&source, "cast")?;
        Ok(Self {
            src,
            dst,
            plan: Plan::Convert(func),
        })
    }
}

impl OpKernel for CastGpu {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        let func = match &self.plan {
            Plan::Identity => {
                let x = ctx.take_input(0)?;
                return ctx.set_output(0, x);
            }
            Plan::Convert(func) => func,
        };
        let x = ctx.gpu_input(0, self.src)?;
        let shape = ctx.input(0)?.shape().clone();
        let n = shape.num_elements();
        // The kernel launched below writes all n elements.
        ctx.allocate_output(0, shape)?;
        if n == 0 {
            return Ok(());
        }
        let y = ctx.gpu_output(0)?;
        let len = n as i64;
        let mut launch = ctx.gpu()?.stream().launch_builder(func);
        launch.arg(&x).arg(&y).arg(&len);
        // SAFETY: `cast(const S* x, D* y, index_t n)` takes these arguments;
        // x holds n elements of SrcT, y n of DstT.
        unsafe { launch.launch(flat_launch(n, vector_width(&[self.src, self.dst]))) }
            .map_err(|e| gpu_error("launching Cast", e))?;
        Ok(())
    }
}

//! `ClipByValue` and `Cumsum` on the GPU, with the CPU kernels' (TF's)
//! checks and messages ([`opreg_op_logic::clip_cumsum`]).
//!
//! - `ClipByValue`: `min(max(t, lo), hi)` as Eigen's
//!   `t.cwiseMin(hi).cwiseMax(lo)` (a NaN `t` stays NaN, a NaN bound is
//!   ignored, the chosen element is kept bit for bit), the bounds scalars or
//!   of `t`'s shape: one ternary kernel (`TernaryFunctions`, as `Select`),
//!   a scalar bound broadcast with stride 0; an operand of the output's
//!   shape is updated in place when it can be forwarded.
//! - `Cumsum`: the input viewed as `[outer, len, inner]` around the scan
//!   axis (a host-memory input, as TF registers it), one thread per
//!   `(outer, inner)` column scanning it in order (backward with
//!   `reverse`; `exclusive` writes the sum before each element), the
//!   running sum kept in `T` as the CPU kernel keeps it (integers wrap,
//!   `half`/`bfloat16` round after each addition), so results match the
//!   CPU's (floats but for denormals, which the GPU flushes to zero). A
//!   long scan with few columns runs on few threads: correct, not fast.

use cudarc::driver::{CudaFunction, PushKernelArg};
use opreg_op_logic::clip_cumsum::{ScanGeometry, check_clip_bounds};
use opreg_standard_ops::{ClipByValue, Cumsum};
use registry_core::kernel;
use registry_core::kernel::{
    BuildKernel, KernelError, KernelRegistration, KernelSource, OpKernel, OpKernelConstruction,
    OpKernelContext,
};
use registry_core::proto::DataType;

use super::broadcast::BroadcastPlan;
use super::source::{clip_source, cumsum_source};
use super::ternary::TernaryFunctions;
use crate::sources_of_type;
use opreg_cuda::{GpuContext, GpuTensors, gpu_error, grid_for};

/// The sources a registration of [`ClipByValueGpu`] compiles.
pub fn clip_sources(reg: &KernelRegistration) -> Result<Vec<KernelSource>, KernelError> {
    sources_of_type(reg, "T", clip_source)
}

/// `ClipByValue` on the GPU for TF's GPU types (TF keeps its `int32`
/// kernel's tensors in host memory and runs it on the CPU; here `int32`
/// runs on the GPU like the other types).
#[kernel(
    op = ClipByValue,
    device = GPU,
    T = [half, bfloat16, float, double, int8, int16, int32, int64, uint8, uint16],
    sources = clip_sources
)]
#[derive(Debug)]
pub struct ClipByValueGpu {
    dtype: DataType,
    functions: TernaryFunctions,
}

impl BuildKernel for ClipByValueGpu {
    /// Compiles (or finds cached) the clip kernels for `T`.
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        let dtype = ctx.attr("T")?;
        Ok(Self {
            dtype,
            functions: TernaryFunctions::new(ctx.gpu()?, &clip_source(dtype)?)?,
        })
    }
}

impl OpKernel for ClipByValueGpu {
    /// Checks the bounds' shapes (TF's message), then clips on the GPU.
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        let plan = {
            let (t, lo, hi) = (ctx.input(0)?, ctx.input(1)?, ctx.input(2)?);
            check_clip_bounds(t.shape(), lo.shape(), hi.shape())?;
            BroadcastPlan::new([t.dims(), lo.dims(), hi.dims()]).map_err(|e| {
                KernelError::internal(format!(
                    "ClipByValue: checked bounds do not broadcast: {e:?}"
                ))
            })?
        };
        self.functions
            .run(ctx, &plan, [self.dtype; 3], self.dtype, "ClipByValue")
    }
}

/// The sources a registration of [`CumsumGpu`] compiles.
pub fn cumsum_sources(reg: &KernelRegistration) -> Result<Vec<KernelSource>, KernelError> {
    sources_of_type(reg, "T", cumsum_source)
}

/// `Cumsum` on the GPU for TF's GPU types, `axis` in host memory.
#[kernel(
    op = Cumsum,
    device = GPU,
    T = [half, bfloat16, float, double, int32, int64],
    Tidx = [int32, int64],
    host_memory = ["axis"],
    sources = cumsum_sources
)]
pub struct CumsumGpu {
    dtype: DataType,
    exclusive: bool,
    reverse: bool,
    scan: CudaFunction,
}

impl std::fmt::Debug for CumsumGpu {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CumsumGpu")
            .field("dtype", &self.dtype)
            .field("exclusive", &self.exclusive)
            .field("reverse", &self.reverse)
            .finish()
    }
}

impl BuildKernel for CumsumGpu {
    /// Reads `exclusive` and `reverse` and compiles (or finds cached) the
    /// scan for `T`.
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        let dtype = ctx.attr("T")?;
        Ok(Self {
            dtype,
            exclusive: ctx.attr("exclusive")?,
            reverse: ctx.attr("reverse")?,
            scan: ctx.gpu()?.function(&cumsum_source(dtype)?, "cumsum")?,
        })
    }
}

impl OpKernel for CumsumGpu {
    /// Checks the axis (TF's messages), then scans on the GPU; the input is
    /// updated in place when it can be forwarded.
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        let (g, shape) = {
            let x = ctx.input(0)?;
            (
                ScanGeometry::new(x.dims(), ctx.input(1)?)?,
                x.shape().clone(),
            )
        };
        ctx.gpu_input(0, self.dtype)?;
        let columns = g.outer * g.inner;
        let forwarded = ctx.forward_input_or_allocate_output(&[0], 0, shape)?;
        if columns == 0 || g.len == 0 {
            return Ok(());
        }
        let y = ctx.gpu_output(0)?;
        let x = ctx.gpu_operand(0, self.dtype, forwarded, y)?;
        let (outer, len, inner) = (g.outer as i64, g.len as i64, g.inner as i64);
        let (exclusive, reverse) = (i32::from(self.exclusive), i32::from(self.reverse));
        let mut launch = ctx.gpu()?.stream().launch_builder(&self.scan);
        launch
            .arg(&x)
            .arg(&y)
            .arg(&outer)
            .arg(&len)
            .arg(&inner)
            .arg(&exclusive)
            .arg(&reverse);
        // SAFETY: `cumsum(const T*, T*, index_t, index_t, index_t, i32,
        // i32)` takes these arguments; x and y hold outer · len · inner
        // elements of T (the input's shape), y may be x, whose every element
        // its one column's thread reads before writing it.
        unsafe { launch.launch(grid_for(columns)) }
            .map_err(|e| gpu_error("launching Cumsum", e))?;
        Ok(())
    }
}

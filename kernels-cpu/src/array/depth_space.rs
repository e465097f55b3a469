//! `DepthToSpace` and `SpaceToDepth` (NHWC, the only layout TF's CPU
//! kernels are registered for), checked by
//! [`opreg_op_logic::depth_space`] and run as [`StridedPlan`]s: the depth
//! tensor `[b, h, w, block, block, depth]` and the space tensor `[b, h,
//! block, w, block, depth]` are one transpose apart, with the depth
//! contiguous in both (copied as runs).

use opreg_standard_ops::{DepthToSpace, SpaceToDepth};
use registry_core::kernel;
use registry_core::kernel::{
    BuildKernel, KernelError, OpKernel, OpKernelConstruction, OpKernelContext,
};

use super::elements::run_on_elements;
use super::strided::StridedPlan;
use opreg_op_logic::depth_space::{
    Rearrangement, block_size, check_cpu_data_format, depth_to_space, space_to_depth,
};
use opreg_op_logic::index::dim_i64;

/// The attrs both kernels read: the block size, and a data format the CPU
/// kernels accept.
fn block_attr(ctx: &OpKernelConstruction<'_>) -> Result<i64, KernelError> {
    check_cpu_data_format(ctx.attr::<&str>("data_format")?)?;
    let block = ctx.attr::<i64>("block_size")?;
    block_size(block)?;
    Ok(block)
}

/// Runs the transpose of `g`: `to_space` reads the depth tensor and writes
/// the space tensor, else the reverse.
fn rearrange(
    ctx: &mut OpKernelContext<'_>,
    g: Rearrangement,
    to_space: bool,
) -> Result<(), KernelError> {
    let Rearrangement {
        batch,
        height,
        width,
        depth,
        block,
        out_shape,
    } = g;
    if out_shape.num_elements() == 0 {
        ctx.allocate_output(0, out_shape)?;
        return Ok(());
    }
    let [h, w, k, d] = [height, width, block, depth].map(dim_i64);
    // Input steps: of the depth tensor [b, h, w, k, k, d] or of the space
    // tensor [b, h, k, w, k, d].
    let (dims, steps) = if to_space {
        // Output [b, h, k, w, k, d] read from the depth tensor.
        let s = [h * w * k * k * d, w * k * k * d, k * d, k * k * d, d, 1];
        ([batch, height, block, width, block, depth], s)
    } else {
        // Output [b, h, w, k, k, d] read from the space tensor.
        let row = w * k * d;
        let s = [h * k * row, k * row, k * d, row, d, 1];
        ([batch, height, width, block, block, depth], s)
    };
    let plan = StridedPlan::new(ctx.input(0)?.num_elements(), 0, &dims, &steps)?;
    let input = ctx.take_input(0)?;
    // Every element is written.
    let out = ctx.allocate_output_to_overwrite(0, out_shape)?;
    run_on_elements(&plan, &[&input], out)
}

/// `DepthToSpace` for every type TF's CPU kernel has (but variants and
/// resources).
#[kernel(
    op = DepthToSpace,
    device = CPU,
    T = [bfloat16, bool, complex128, complex64, double, float, half, int16, int32, int64, int8,
         string, uint16, uint32, uint64, uint8]
)]
struct DepthToSpaceKernel {
    block: i64,
}

impl BuildKernel for DepthToSpaceKernel {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        Ok(Self {
            block: block_attr(ctx)?,
        })
    }
}

impl OpKernel for DepthToSpaceKernel {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        let g = depth_to_space(ctx.input(0)?.shape(), self.block)?;
        rearrange(ctx, g, true)
    }
}

/// `SpaceToDepth` for every type TF's CPU kernel has (but variants and
/// resources).
#[kernel(
    op = SpaceToDepth,
    device = CPU,
    T = [bfloat16, bool, complex128, complex64, double, float, half, int16, int32, int64, int8,
         qint8, string, uint16, uint32, uint64, uint8]
)]
struct SpaceToDepthKernel {
    block: i64,
}

impl BuildKernel for SpaceToDepthKernel {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        Ok(Self {
            block: block_attr(ctx)?,
        })
    }
}

impl OpKernel for SpaceToDepthKernel {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        let g = space_to_depth(ctx.input(0)?.shape(), self.block)?;
        rearrange(ctx, g, false)
    }
}

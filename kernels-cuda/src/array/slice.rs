//! `Slice` on the GPU: the block of `size` elements starting at `begin`
//! (`size[i] = -1` takes the rest of dimension `i`), validated as TF's
//! `SharedSliceValidation` does and copied with the strided copy.

use opreg_op_logic::index::shape_of;
use opreg_op_logic::slice::slice_box;
use opreg_standard_ops::Slice;
use registry_core::kernel;
use registry_core::kernel::{
    BuildKernel, KernelError, OpKernel, OpKernelConstruction, OpKernelContext,
};

use super::mover::{Mover, mover_sources};
use super::plan::StridedPlan;
use super::source::entry;

/// `Slice` for TF's GPU types; `begin` and `size` on the host.
#[kernel(
    op = Slice,
    device = GPU,
    T = [bfloat16, bool, complex128, complex64, double, float, half, int16, int32, int64, int8,
         uint16, uint32, uint64, uint8],
    host_memory = ["begin", "size"],
    sources = mover_sources
)]
#[derive(Debug)]
pub struct SliceGpu {
    mover: Mover,
}

impl BuildKernel for SliceGpu {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        Ok(Self {
            mover: Mover::new(ctx, ctx.attr("T")?, entry::STRIDED)?,
        })
    }
}

impl OpKernel for SliceGpu {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        let input = ctx.input(0)?.clone();
        let b = slice_box(input.dims(), ctx.input(1)?, ctx.input(2)?)?;
        let out_shape = shape_of(&b.sizes)?;
        if b.identity {
            return ctx.set_output(0, input);
        }
        let (steps, base) = b.input_steps(input.dims())?;
        let plan = StridedPlan::new("Slice", input.num_elements(), base, &b.sizes, &steps)?;
        self.mover.strided(ctx, &input, &plan, out_shape)
    }
}

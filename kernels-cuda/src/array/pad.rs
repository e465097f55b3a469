//! `Pad` on the GPU with zeros (TF's `T()`: 0, `false`): each output element
//! is the input element it covers, or zero bytes outside the input's box
//! (`pad_copy`). The paddings are checked as the CPU kernel does
//! ([`padding`]).

use opreg_op_logic::pad::{Padding, padding};
use opreg_standard_ops::Pad;
use registry_core::kernel;
use registry_core::kernel::{
    BuildKernel, KernelError, OpKernel, OpKernelConstruction, OpKernelContext,
};

use super::mover::{Mover, mover_sources};
use super::plan::PadPlan;
use super::source::entry;

/// `Pad` for TF's GPU types; `paddings` on the host.
#[kernel(
    op = Pad,
    device = GPU,
    T = [bfloat16, bool, complex128, complex64, double, float, half, int16, int32, int64, int8,
         uint16, uint32, uint64, uint8],
    Tpaddings = [int32, int64],
    host_memory = ["paddings"],
    sources = mover_sources
)]
#[derive(Debug)]
pub struct PadGpu {
    mover: Mover,
}

impl BuildKernel for PadGpu {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        Ok(Self {
            mover: Mover::new(ctx, ctx.attr("T")?, entry::PAD)?,
        })
    }
}

impl OpKernel for PadGpu {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        let input = ctx.input(0)?.clone();
        let Padding { dims, out_shape } = padding(input.shape(), ctx.input(1)?)?;
        if out_shape.num_elements() == input.num_elements() {
            // No padding (or nothing at all): share the input.
            return ctx.set_output(0, input.reshape(out_shape)?);
        }
        // An empty input pads to all zeros: every index is outside its box.
        let plan = PadPlan::new(&dims)?;
        self.mover.pad(ctx, &input, &plan, out_shape)
    }
}

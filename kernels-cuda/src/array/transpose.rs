//! `Transpose` on the GPU: validates `perm` with
//! `opreg_op_logic::transpose` (TF's messages, as on the CPU), shares the
//! input when the permutation keeps the element order, and otherwise runs
//! the strided copy.

use super::mover::{Mover, mover_sources};
use super::plan::StridedPlan;
use super::source::entry;
use opreg_op_logic::index::shape_of;
use opreg_op_logic::transpose::Transposition;
use opreg_standard_ops::Transpose;
use registry_core::kernel;
use registry_core::kernel::{
    BuildKernel, KernelError, OpKernel, OpKernelConstruction, OpKernelContext,
};

/// `Transpose` for TF's GPU types (`TF_CALL_POD_TYPES`); `perm` on the host.
#[kernel(
    op = Transpose,
    device = GPU,
    T = [bfloat16, bool, complex128, complex64, double, float, half, int16, int32, int64, int8,
         uint16, uint32, uint64, uint8],
    host_memory = ["perm"],
    sources = mover_sources
)]
#[derive(Debug)]
pub struct TransposeGpu {
    mover: Mover,
}

impl BuildKernel for TransposeGpu {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        Ok(Self {
            mover: Mover::new(ctx, ctx.attr("T")?, entry::STRIDED)?,
        })
    }
}

impl OpKernel for TransposeGpu {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        let input = ctx.input(0)?.clone();
        let in_dims = input.dims();
        let t = Transposition::new(in_dims, ctx.input(1)?)?;
        let out_shape = shape_of(&t.out_dims)?;
        if t.keeps_order {
            // The elements keep their order: share the buffer.
            return ctx.set_output(0, input.reshape(out_shape)?);
        }
        let steps = t.input_steps(in_dims);
        let plan = StridedPlan::new("Transpose", input.num_elements(), 0, &t.out_dims, &steps)?;
        self.mover.strided(ctx, &input, &plan, out_shape)
    }
}

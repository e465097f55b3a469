//! `StridedSlice` on the GPU: the slice validated by
//! `opreg_op_logic::strided_slice` (TF's `ValidateStridedSliceOp`, as the
//! CPU kernel does), then the strided copy over the processing shape (the
//! final shape only adds new axes of 1 and drops shrunk ones; negative
//! strides are negative steps).

use opreg_op_logic::index::shape_of;
use opreg_op_logic::strided_slice::{Masks, validate};
use opreg_standard_ops::StridedSlice;
use registry_core::kernel;
use registry_core::kernel::{
    BuildKernel, KernelError, OpKernel, OpKernelConstruction, OpKernelContext,
};

use super::mover::{Mover, mover_sources};
use super::plan::StridedPlan;
use super::source::entry;

/// `StridedSlice` for TF's GPU types; `begin`, `end` and `strides` on the
/// host.
#[kernel(
    op = StridedSlice,
    device = GPU,
    T = [bfloat16, bool, complex128, complex64, double, float, half, int16, int32, int64, int8,
         uint16, uint32, uint64, uint8],
    host_memory = ["begin", "end", "strides"],
    sources = mover_sources
)]
#[derive(Debug)]
pub struct StridedSliceGpu {
    masks: Masks,
    mover: Mover,
}

impl BuildKernel for StridedSliceGpu {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        Ok(Self {
            masks: Masks::from_attrs(ctx.attrs())?,
            mover: Mover::new(ctx, ctx.attr("T")?, entry::STRIDED)?,
        })
    }
}

impl OpKernel for StridedSliceGpu {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        let input = ctx.input(0)?.clone();
        let spec = validate(
            input.dims(),
            ctx.input(1)?,
            ctx.input(2)?,
            ctx.input(3)?,
            self.masks,
        )?;
        let out_shape = shape_of(&spec.final_shape)?;
        if spec.is_identity {
            return ctx.set_output(0, input.reshape(out_shape)?);
        }
        let (base, steps) = spec.input_steps(input.dims())?;
        let plan = StridedPlan::new(
            "StridedSlice",
            input.num_elements(),
            base,
            &spec.processing,
            &steps,
        )?;
        self.mover.strided(ctx, &input, &plan, out_shape)
    }
}

#[cfg(test)]
mod tests {
    use registry_core::tensor::Tensor;

    use super::*;

    fn v(x: &[i32]) -> Tensor {
        Tensor::from_vec([x.len()], x.to_vec()).unwrap()
    }

    #[test]
    fn reversed_slices_plan_a_backward_copy() {
        // x[::-1] of [5]: begin 4, step -1.
        let masks = Masks {
            begin: 1,
            end: 1,
            ..Masks::default()
        };
        let sp = validate(&[5], &v(&[0]), &v(&[0]), &v(&[-1]), masks).unwrap();
        let (base, steps) = sp.input_steps(&[5]).unwrap();
        assert_eq!((base, &steps[..]), (4, &[-1][..]));
        let plan = StridedPlan::new("t", 5, base, &sp.processing, &steps).unwrap();
        assert_eq!(plan.len, 5);
    }
}

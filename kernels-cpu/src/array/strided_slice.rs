//! `StridedSlice`: the slice validated by [`opreg_op_logic::strided_slice`]
//! (TF's `ValidateStridedSliceOp`), then a [`StridedPlan`] over the
//! processing shape (the final shape only adds new axes of 1 and drops
//! shrunk ones).

use opreg_standard_ops::StridedSlice;
use registry_core::kernel;
use registry_core::kernel::{
    BuildKernel, KernelError, OpKernel, OpKernelConstruction, OpKernelContext,
};

use super::elements::run_on_elements;
use super::strided::StridedPlan;
use opreg_op_logic::index::shape_of;
use opreg_op_logic::strided_slice::{Masks, validate};

/// `StridedSlice` for every type TF's CPU kernel has.
#[kernel(
    op = StridedSlice,
    device = CPU,
    T = [bfloat16, bool, complex128, float8_e4m3fn, float8_e5m2, complex64, double, float, half, int16, int32, int64, int8,
         qint32, qint8, quint8, string, uint16, uint32, uint64, uint8],
    host_memory = ["begin", "end", "strides"]
)]
struct StridedSliceKernel {
    masks: Masks,
}

impl BuildKernel for StridedSliceKernel {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        Ok(Self {
            masks: Masks::from_attrs(ctx.attrs())?,
        })
    }
}

impl OpKernel for StridedSliceKernel {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        let input = ctx.input(0)?;
        let spec = validate(
            input.dims(),
            ctx.input(1)?,
            ctx.input(2)?,
            ctx.input(3)?,
            self.masks,
        )?;
        let out_shape = shape_of(&spec.final_shape)?;
        if spec.is_identity {
            let input = ctx.take_input(0)?;
            let output = input.reshape(out_shape)?;
            drop(input);
            return ctx.set_output(0, output);
        }
        let (base, steps) = spec.input_steps(input.dims())?;
        let plan = StridedPlan::new(input.num_elements(), base, &spec.processing, &steps)?;
        let input = ctx.take_input(0)?;
        // Every element is written.
        let out = ctx.allocate_output_to_overwrite(0, out_shape)?;
        run_on_elements(&plan, &[&input], out)
    }
}

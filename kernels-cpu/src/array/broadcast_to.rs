//! `BroadcastTo`: the input repeated along the dimensions it broadcasts in,
//! written as a [`StridedPlan`] whose broadcast dimensions have input step
//! 0 (contiguous input rows are copied with memcpy). The checks are
//! [`opreg_op_logic::broadcast_to`]'s (TF's messages and order).

use opreg_standard_ops::BroadcastTo;
use registry_core::kernel;
use registry_core::kernel::{KernelError, OpKernelContext};

use super::elements::run_on_elements;
use super::strided::StridedPlan;
use opreg_op_logic::broadcast_to::{BroadcastTo as Checked, broadcast_to};

/// `BroadcastTo` for the types TF's CPU kernel has (but variants and
/// resources, which opreg has no tensors of).
#[kernel(
    op = BroadcastTo,
    device = CPU,
    T = [bfloat16, bool, complex128, complex64, double, float, float8_e4m3fn, float8_e5m2, half,
         int16, int32, int64, int8, string, uint16, uint32, uint64, uint8]
)]
fn broadcast_to_kernel(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    let input = ctx.input(0)?;
    let (out_shape, steps) = match broadcast_to(input.shape(), ctx.input(1)?)? {
        Checked::Forward => {
            let input = ctx.take_input(0)?;
            return ctx.set_output(0, input);
        }
        Checked::Copy { out_shape, steps } => (out_shape, steps),
    };
    let input_len = input.num_elements();
    if out_shape.num_elements() == 0 {
        ctx.allocate_output(0, out_shape)?;
        return Ok(());
    }
    let plan = StridedPlan::new(input_len, 0, out_shape.dims(), &steps)?;
    let input = ctx.take_input(0)?;
    // Every element is written.
    let out = ctx.allocate_output_to_overwrite(0, out_shape)?;
    run_on_elements(&plan, &[&input], out)
}

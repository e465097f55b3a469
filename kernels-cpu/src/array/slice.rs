//! `Slice`: the block of `size` elements starting at `begin` (`size[i] = -1`
//! takes the rest of dimension `i`), validated as TF's
//! `SharedSliceValidation` does and copied with a [`StridedPlan`].

use opreg_standard_ops::Slice;
use registry_core::kernel;
use registry_core::kernel::{KernelError, OpKernelContext};

use super::elements::run_on_elements;
use super::strided::StridedPlan;
use opreg_op_logic::index::shape_of;
use opreg_op_logic::slice::slice_box;

/// `Slice` for every type TF's CPU kernel has.
#[kernel(
    op = Slice,
    device = CPU,
    T = [bfloat16, bool, complex128, float8_e4m3fn, float8_e5m2, complex64, double, float, half, int16, int32, int64, int8,
         qint32, qint8, quint8, string, uint16, uint32, uint64, uint8],
    host_memory = ["begin", "size"]
)]
fn slice(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    let input = ctx.input(0)?;
    let b = slice_box(input.dims(), ctx.input(1)?, ctx.input(2)?)?;
    let out_shape = shape_of(&b.sizes)?;
    if b.identity {
        let input = ctx.take_input(0)?;
        return ctx.set_output(0, input);
    }
    let (steps, base) = b.input_steps(input.dims())?;
    let plan = StridedPlan::new(input.num_elements(), base, &b.sizes, &steps)?;
    let input = ctx.take_input(0)?;
    // Every element is written.
    let out = ctx.allocate_output_to_overwrite(0, out_shape)?;
    run_on_elements(&plan, &[&input], out)
}

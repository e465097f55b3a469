//! `Transpose`: validates `perm` ([`opreg_op_logic::transpose`]), shares the
//! input when the permutation keeps the element order (identity, or only
//! moves dimensions of size 1), and otherwise runs a [`StridedPlan`]
//! (tiled for cache when the input's innermost dimension moves).

use opreg_standard_ops::Transpose;
use registry_core::kernel;
use registry_core::kernel::{KernelError, OpKernelContext};

use super::elements::run_on_elements;
use super::strided::StridedPlan;
use opreg_op_logic::index::shape_of;
use opreg_op_logic::transpose::Transposition;

/// `Transpose` for every type TF's CPU kernel has.
#[kernel(
    op = Transpose,
    device = CPU,
    T = [bfloat16, bool, complex128, float8_e4m3fn, float8_e5m2, complex64, double, float, half, int16, int32, int64, int8,
         string, uint16, uint32, uint64, uint8],
    host_memory = ["perm"]
)]
fn transpose(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    let input = ctx.input(0)?;
    let in_dims = input.dims();
    let t = Transposition::new(in_dims, ctx.input(1)?)?;
    let out_shape = shape_of(&t.out_dims)?;
    if t.keeps_order {
        // The elements keep their order: share the buffer.
        let input = ctx.take_input(0)?;
        let output = input.reshape(out_shape)?;
        drop(input);
        return ctx.set_output(0, output);
    }
    let steps = t.input_steps(in_dims);
    let plan = StridedPlan::new(input.num_elements(), 0, &t.out_dims, &steps)?;
    let input = ctx.take_input(0)?;
    // Every element is written.
    let out = ctx.allocate_output_to_overwrite(0, out_shape)?;
    run_on_elements(&plan, &[&input], out)
}

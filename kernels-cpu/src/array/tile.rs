//! `Tile`: output dimension `d` repeats the input's dimension `d`
//! `multiples[d]` times. Written as a [`StridedPlan`] over the dimensions
//! `[m0, n0, m1, n1, ...]` with input steps `[0, s0, 0, s1, ...]` (a step of
//! 0 repeats), so the contiguous input rows are copied with memcpy.

use opreg_standard_ops::Tile;
use registry_core::kernel;
use registry_core::kernel::{KernelError, OpKernelContext};
use smallvec::SmallVec;

use super::elements::run_on_elements;
use super::strided::StridedPlan;
use opreg_op_logic::index::{dim_i64, strides};
use opreg_op_logic::tile::{TileShape, tile_shape};

/// `Tile`: TF registers it with no constraint on `T`, so every dtype we hold
/// is tiled (as bytes).
#[kernel(op = Tile, device = CPU, Tmultiples = [int32, int64], host_memory = ["multiples"])]
fn tile(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    let input = ctx.input(0)?;
    let TileShape { reps, out_shape } = tile_shape(input.shape(), ctx.input(1)?)?;
    let in_dims = input.dims();
    if out_shape.dims() == in_dims {
        // Rank 0, or every multiple 1.
        let input = ctx.take_input(0)?;
        return ctx.set_output(0, input);
    }
    if out_shape.num_elements() == 0 {
        ctx.allocate_output(0, out_shape)?;
        return Ok(());
    }
    let in_strides = strides(in_dims);
    let rank = in_dims.len();
    let mut dims: SmallVec<[usize; 16]> = SmallVec::with_capacity(2 * rank);
    let mut steps: SmallVec<[i64; 16]> = SmallVec::with_capacity(2 * rank);
    for ((&rep, &d), &s) in reps.iter().zip(in_dims).zip(&in_strides) {
        dims.extend([rep, d]);
        steps.extend([0, dim_i64(s)]);
    }
    let plan = StridedPlan::new(input.num_elements(), 0, &dims, &steps)?;
    let input = ctx.take_input(0)?;
    // The plan writes every element.
    let out = ctx.allocate_output_to_overwrite(0, out_shape)?;
    run_on_elements(&plan, &[&input], out)
}

//! `SpaceToBatchND` and `BatchToSpaceND`, checked by
//! [`opreg_op_logic::space_batch`] (TF's messages) and run as
//! [`RowGather`]s whose rows are the depth (the dimensions after the block
//! dimensions, contiguous in both tensors).
//!
//! `BatchToSpaceND` is one gather: each output (space) index of a block
//! dimension reads one batch index at one block offset, whose offsets add
//! up. `SpaceToBatchND` is one gather per block offset (the output's
//! outermost part): which output indices are padding depends on the block
//! offset.

use opreg_standard_ops::{BatchToSpaceND, SpaceToBatchND};
use rayon::prelude::*;
use registry_core::kernel;
use registry_core::kernel::{KernelError, OpKernelContext};
use smallvec::SmallVec;

use super::elements::{ElementOp, run_on_elements};
use super::parallel::PARALLEL_MIN_ELEMENTS;
use super::rows::{RowGather, Tables};
use opreg_op_logic::space_batch::{BlockPlan, SpaceBatch, batch_to_space, space_to_batch};

/// Copies rows of `depth` elements from `inputs[0]` (padding rows stay
/// zero), one gather per output part of `part_len` elements.
struct RowsPlan {
    gathers: Vec<RowGather>,
    depth: usize,
    part_len: usize,
}

impl ElementOp for RowsPlan {
    fn run<T: Clone + Send + Sync>(
        &self,
        inputs: &[&[T]],
        out: &mut [T],
    ) -> Result<(), KernelError> {
        let src = inputs
            .first()
            .ok_or_else(|| KernelError::internal("space/batch move without an input"))?;
        if self.part_len == 0 || out.len() != self.part_len * self.gathers.len() {
            return Err(KernelError::internal("space/batch move: wrong output size"));
        }
        let depth = self.depth;
        let run = |(gather, part): (&RowGather, &mut [T])| {
            gather.run(part, |at, row| {
                if let Some(at) = at {
                    row.clone_from_slice(&src[at..at + depth]);
                }
            })
        };
        if out.len() < PARALLEL_MIN_ELEMENTS || self.gathers.len() == 1 {
            self.gathers
                .iter()
                .zip(out.chunks_mut(self.part_len))
                .try_for_each(run)
        } else {
            self.gathers
                .par_iter()
                .zip(out.par_chunks_mut(self.part_len))
                .try_for_each(run)
        }
    }
}

/// Row-major steps of the batch tensor `[blocks * batch, batched..., depth]`
/// in elements: (one batch, each block dimension).
fn batch_steps(plan: &BlockPlan) -> (usize, SmallVec<[usize; 4]>) {
    let mut steps: SmallVec<[usize; 4]> = SmallVec::from_elem(0, plan.dims.len());
    let mut step = plan.depth;
    for (s, d) in steps.iter_mut().zip(&plan.dims).rev() {
        *s = step;
        step *= d.batched;
    }
    (step, steps)
}

/// Row-major steps of the space tensor `[batch, space..., depth]`.
fn space_steps(plan: &BlockPlan) -> (usize, SmallVec<[usize; 4]>) {
    let mut steps: SmallVec<[usize; 4]> = SmallVec::from_elem(0, plan.dims.len());
    let mut step = plan.depth;
    for (s, d) in steps.iter_mut().zip(&plan.dims).rev() {
        *s = step;
        step *= d.space;
    }
    (step, steps)
}

/// The block offsets of row-major block index `j`.
fn block_offsets(plan: &BlockPlan, mut j: usize) -> SmallVec<[usize; 4]> {
    let mut offsets: SmallVec<[usize; 4]> = SmallVec::from_elem(0, plan.dims.len());
    for (o, d) in offsets.iter_mut().zip(&plan.dims).rev() {
        *o = j % d.block;
        j /= d.block;
    }
    offsets
}

/// `SpaceToBatchND`: output part `j` (block offsets `o`) row `(n, p...)`
/// reads space row `(n, p_i * block_i + o_i - before_i ...)`, or is
/// padding.
fn space_to_batch_plan(plan: &BlockPlan, input_len: usize) -> Result<RowsPlan, KernelError> {
    let (batch_step, steps) = space_steps(plan);
    let batch: Vec<Option<usize>> = (0..plan.batch).map(|n| Some(n * batch_step)).collect();
    let gathers = (0..plan.blocks)
        .map(|j| {
            let offsets = block_offsets(plan, j);
            let mut tables: Tables = Tables::new();
            tables.push(batch.clone());
            for ((d, &o), &step) in plan.dims.iter().zip(&offsets).zip(&steps) {
                tables.push(
                    (0..d.batched)
                        .map(|p| d.space_index(p, o).map(|x| x * step))
                        .collect(),
                );
            }
            RowGather::new(tables, plan.depth, plan.depth, input_len)
        })
        .collect::<Result<Vec<_>, _>>()?;
    let part_len = gathers.first().map_or(0, RowGather::len);
    Ok(RowsPlan {
        gathers,
        depth: plan.depth,
        part_len,
    })
}

/// `BatchToSpaceND`: output row `(n, x...)` reads batch row `(j(o) * batch
/// + n, p...)` where `(p_i, o_i)` is where `x_i + before_i` falls.
fn batch_to_space_plan(plan: &BlockPlan, input_len: usize) -> Result<RowsPlan, KernelError> {
    let (batch_step, steps) = batch_steps(plan);
    let mut tables: Tables = Tables::new();
    tables.push((0..plan.batch).map(|n| Some(n * batch_step)).collect());
    // The batch-tensor step of one block offset of each dimension.
    let mut block_step = plan.batch * batch_step;
    let mut block_steps: SmallVec<[usize; 4]> = SmallVec::from_elem(0, plan.dims.len());
    for (s, d) in block_steps.iter_mut().zip(&plan.dims).rev() {
        *s = block_step;
        block_step *= d.block;
    }
    for ((d, &step), &bstep) in plan.dims.iter().zip(&steps).zip(&block_steps) {
        tables.push(
            (0..d.space)
                .map(|x| {
                    let (p, o) = d.batch_index(x);
                    Some(p * step + o * bstep)
                })
                .collect(),
        );
    }
    let gather = RowGather::new(tables, plan.depth, plan.depth, input_len)?;
    let part_len = gather.len();
    Ok(RowsPlan {
        gathers: vec![gather],
        depth: plan.depth,
        part_len,
    })
}

/// Runs a checked move: shares the input when no block dimension is left,
/// else fills the output with the plan `make` builds.
fn run_move(
    ctx: &mut OpKernelContext<'_>,
    checked: SpaceBatch,
    make: fn(&BlockPlan, usize) -> Result<RowsPlan, KernelError>,
) -> Result<(), KernelError> {
    let Some(plan) = checked.plan else {
        let input = ctx.take_input(0)?;
        return ctx.set_output(0, input);
    };
    if checked.out_shape.num_elements() == 0 {
        ctx.allocate_output(0, checked.out_shape)?;
        return Ok(());
    }
    let rows = make(&plan, ctx.input(0)?.num_elements())?;
    let input = ctx.take_input(0)?;
    let out = ctx.allocate_output(0, checked.out_shape)?;
    run_on_elements(&rows, &[&input], out)
}

/// `SpaceToBatchND` for every type TF's CPU kernel has (any
/// `Tblock_shape` and `Tpaddings`, as TF registers it).
#[kernel(
    op = SpaceToBatchND,
    device = CPU,
    T = [bfloat16, double, float, half, int16, int32, int64, int8, uint16, uint32, uint64, uint8],
    host_memory = ["block_shape", "paddings"]
)]
fn space_to_batch_nd(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    let checked = space_to_batch(ctx.input(0)?.shape(), ctx.input(1)?, ctx.input(2)?)?;
    run_move(ctx, checked, space_to_batch_plan)
}

/// `BatchToSpaceND` for every type TF's CPU kernel has (any
/// `Tblock_shape` and `Tcrops`, as TF registers it).
#[kernel(
    op = BatchToSpaceND,
    device = CPU,
    T = [bfloat16, double, float, half, int16, int32, int64, int8, uint16, uint32, uint64, uint8],
    host_memory = ["block_shape", "crops"]
)]
fn batch_to_space_nd(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    let checked = batch_to_space(ctx.input(0)?.shape(), ctx.input(1)?, ctx.input(2)?)?;
    run_move(ctx, checked, batch_to_space_plan)
}

//! `AddN`: the element-wise sum of `N` tensors of one shape. As TF's
//! `AddNOp`, the first input that can be forwarded becomes the accumulator
//! (swapped to the front of the summation order), sums run left to right
//! in the element type (so `half` rounds after every addition), and a
//! single input is passed through.

use opreg_standard_ops::AddN;
use rayon::prelude::*;
use registry_core::kernel;
use registry_core::kernel::{KernelError, OpKernelContext};
use registry_core::tensor::Tensor;

use crate::elementwise::chunk_len;
use crate::numeric::Number;
use opreg_op_logic::add_n::{SummationOrder, check_inputs, summation_order};

/// Elements summed per inner block: all inputs are added into one block of
/// the output while it is in the L1 cache.
const BLOCK: usize = 2048;

/// `out = out + x` or, when `first` is given, `out = first + x`.
fn add_block<T: Number>(out: &mut [T], first: Option<&[T]>, x: &[T]) {
    match first {
        Some(a) => {
            for (o, (&a, &b)) in out.iter_mut().zip(a.iter().zip(x)) {
                *o = a.add_wrap(b);
            }
        }
        None => {
            for (o, &b) in out.iter_mut().zip(x) {
                *o = o.add_wrap(b);
            }
        }
    }
}

/// Sums `inputs` into `out` (`start` is `out`'s first element index);
/// when `accumulate` the output already holds the first summand.
fn sum_into<T: Number>(out: &mut [T], start: usize, inputs: &[&[T]], accumulate: bool) {
    for (b, block) in out.chunks_mut(BLOCK).enumerate() {
        let lo = start + b * BLOCK;
        let range = lo..lo + block.len();
        let mut rest = inputs;
        if !accumulate {
            if let [a, x, tail @ ..] = inputs {
                add_block(block, Some(&a[range.clone()]), &x[range.clone()]);
                rest = tail;
            } else if let [a] = inputs {
                block.copy_from_slice(&a[range.clone()]);
                rest = &[];
            }
        }
        for x in rest {
            add_block(block, None, &x[range.clone()]);
        }
    }
}

/// `AddN` for every number type TF's CPU kernel has.
#[kernel(
    op = AddN,
    device = CPU,
    T = [realnumbertype, complex64, complex128]
)]
fn add_n<T: Number>(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    let shape = check_inputs(ctx, |_, x| {
        x.as_slice::<T>()?;
        Ok(())
    })?;
    if ctx.num_inputs() == 1 {
        let x = ctx.take_input(0)?;
        return ctx.set_output(0, x);
    }
    let SummationOrder {
        forwarded,
        summands,
    } = summation_order(ctx, &shape)?;
    let summands: Vec<Tensor> = summands
        .iter()
        .map(|&i| ctx.input(i).cloned())
        .collect::<Result<_, _>>()?;
    let slices: Vec<&[T]> = summands
        .iter()
        .map(|t| t.as_slice::<T>())
        .collect::<Result<_, _>>()?;
    let out = if forwarded {
        ctx.output_mut(0)?
    } else {
        ctx.allocate_output(0, shape)?
    };
    let out = out.as_mut_slice::<T>()?;
    let chunk = chunk_len(out.len());
    if out.len() <= chunk {
        sum_into(out, 0, &slices, forwarded);
    } else {
        out.par_chunks_mut(chunk)
            .enumerate()
            .for_each(|(i, c)| sum_into(c, i * chunk, &slices, forwarded));
    }
    Ok(())
}

//! `Pad` with zeros (TF's `T()`: 0, `false`, the empty string): the output
//! starts zero-filled and each output row inside the input's box gets the
//! input row copied in.

use opreg_standard_ops::Pad;
use registry_core::kernel;
use registry_core::kernel::{KernelError, OpKernelContext};
use smallvec::SmallVec;

use super::elements::{ElementOp, run_on_elements};
use super::parallel::for_each_row_chunk;
use opreg_op_logic::pad::{PadDim, Padding, merge_unpadded, padding};

/// Copies the input into the box of a zero-filled output.
struct PadPlan {
    /// The padding, dimensions without padding merged into the one before.
    dims: SmallVec<[PadDim; 8]>,
}

impl ElementOp for PadPlan {
    fn run<T: Clone + Send + Sync>(
        &self,
        inputs: &[&[T]],
        out: &mut [T],
    ) -> Result<(), KernelError> {
        let src = inputs
            .first()
            .ok_or_else(|| KernelError::internal("pad without an input"))?;
        let Some((&last, outer)) = self.dims.split_last() else {
            // Rank 0: one element.
            out.clone_from_slice(&src[..out.len()]);
            return Ok(());
        };
        let in_row_len = last.size;
        for_each_row_chunk(out, last.out, |row0, chunk| {
            // The row's index per outer dimension.
            let mut idx: SmallVec<[usize; 8]> = SmallVec::from_elem(0, outer.len());
            let mut left = row0;
            for (i, d) in outer.iter().enumerate().rev() {
                idx[i] = left % d.out;
                left /= d.out;
            }
            for row in chunk.chunks_exact_mut(last.out) {
                // The input row, when every outer index is inside the box.
                let mut in_row = 0usize;
                let mut inside = true;
                for (&i, d) in idx.iter().zip(outer) {
                    if i < d.before || i >= d.before + d.size {
                        inside = false;
                        break;
                    }
                    in_row = in_row * d.size + (i - d.before);
                }
                if inside {
                    let at = in_row * in_row_len;
                    row[last.before..last.before + in_row_len]
                        .clone_from_slice(&src[at..at + in_row_len]);
                }
                for (i, d) in idx.iter_mut().zip(outer).rev() {
                    *i += 1;
                    if *i < d.out {
                        break;
                    }
                    *i = 0;
                }
            }
        });
        Ok(())
    }
}

/// `Pad` for every type TF's CPU kernel has.
#[kernel(
    op = Pad,
    device = CPU,
    T = [bfloat16, bool, complex128, complex64, double, float, half, int16, int32, int64, int8,
         qint32, qint8, quint8, string, uint16, uint32, uint64, uint8],
    Tpaddings = [int32, int64],
    host_memory = ["paddings"]
)]
fn pad(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    let input = ctx.input(0)?;
    let Padding { dims, out_shape } = padding(input.shape(), ctx.input(1)?)?;
    if out_shape.num_elements() == input.num_elements() {
        // No padding (or nothing at all): share the input.
        let input = ctx.take_input(0)?;
        let output = input.reshape(out_shape)?;
        drop(input);
        return ctx.set_output(0, output);
    }
    let empty_input = input.num_elements() == 0;
    let input = ctx.take_input(0)?;
    let out = ctx.allocate_output(0, out_shape)?;
    if empty_input {
        return Ok(());
    }
    let plan = PadPlan {
        dims: merge_unpadded(&dims)?,
    };
    run_on_elements(&plan, &[&input], out)
}

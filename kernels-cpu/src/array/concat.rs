//! `ConcatV2` and `Pack`. Both view every input as a `[rows, cols_i]` matrix
//! (`rows` = the product of the dimensions before the axis) and the output
//! as `[rows, Σ cols_i]`, whose row `r` is the inputs' rows `r` one after
//! the other ([`ConcatPlan`]). The checks and the output's layout are
//! [`opreg_op_logic::concat`]'s.

use opreg_standard_ops::{ConcatV2, Pack};
use registry_core::kernel;
use registry_core::kernel::{
    BuildKernel, KernelError, OpKernel, OpKernelConstruction, OpKernelContext,
};
use registry_core::tensor::{Tensor, TensorShape};
use smallvec::SmallVec;

use super::elements::{ElementOp, run_on_elements};
use super::parallel::{copy, for_each_row_chunk};
use opreg_op_logic::concat::{concat_layout, pack_layout};

/// Concatenation of `[rows, cols[i]]` matrices along their columns.
struct ConcatPlan {
    rows: usize,
    cols: SmallVec<[usize; 8]>,
}

impl ElementOp for ConcatPlan {
    fn run<T: Clone + Send + Sync>(
        &self,
        inputs: &[&[T]],
        out: &mut [T],
    ) -> Result<(), KernelError> {
        let out_cols: usize = self.cols.iter().sum();
        let sizes_ok = inputs.len() == self.cols.len()
            && inputs
                .iter()
                .zip(&self.cols)
                .all(|(i, &c)| Some(i.len()) == c.checked_mul(self.rows))
            && Some(out.len()) == out_cols.checked_mul(self.rows);
        if !sizes_ok {
            return Err(KernelError::internal(
                "concat: inputs do not match the plan",
            ));
        }
        if out.is_empty() {
            return Ok(());
        }
        for_each_row_chunk(out, out_cols, |row0, chunk| {
            for (r, row) in chunk.chunks_exact_mut(out_cols).enumerate() {
                let r = row0 + r;
                let mut at = 0;
                for (input, &c) in inputs.iter().zip(&self.cols) {
                    // Long rows are copied in parallel pieces.
                    copy(&mut row[at..at + c], &input[r * c..(r + 1) * c]);
                    at += c;
                }
            }
        });
        Ok(())
    }
}

/// The inputs of a variadic node, taken out of the context.
fn take_inputs(ctx: &mut OpKernelContext<'_>, n: usize) -> Result<Vec<Tensor>, KernelError> {
    (0..n).map(|i| ctx.take_input(i)).collect()
}

/// `ConcatV2` for every type TF's CPU kernel has.
#[kernel(
    op = ConcatV2,
    device = CPU,
    T = [bfloat16, bool, complex128, float8_e4m3fn, float8_e5m2, complex64, double, float, half, int16, int32, int64, int8,
         qint16, qint32, qint8, quint16, quint8, string, uint16, uint32, uint64, uint8],
    host_memory = ["axis"]
)]
fn concat_v2(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    let n = ctx.num_inputs().saturating_sub(1);
    let axis = ctx.input(n)?.clone();
    let values = take_inputs(ctx, n)?;
    let layout = concat_layout(&axis, &values)?;
    concat_into(ctx, &values, layout.rows, layout.shape)
}

/// Allocates output 0 with `shape` and fills it with the concatenation of
/// `values`' `rows`-row matrices.
fn concat_into(
    ctx: &mut OpKernelContext<'_>,
    values: &[Tensor],
    rows: usize,
    shape: TensorShape,
) -> Result<(), KernelError> {
    // Every element is written (each output row is the inputs' rows).
    let out = ctx.allocate_output_to_overwrite(0, shape)?;
    if out.num_elements() == 0 || rows == 0 {
        return Ok(());
    }
    let cols = values.iter().map(|v| v.num_elements() / rows).collect();
    let plan = ConcatPlan { rows, cols };
    let refs: SmallVec<[&Tensor; 8]> = values.iter().collect();
    run_on_elements(&plan, &refs, out)
}

/// `Pack`: stacks `N` tensors of one shape along a new dimension `axis`.
#[kernel(
    op = Pack,
    device = CPU,
    T = [bfloat16, bool, complex128, float8_e4m3fn, float8_e5m2, complex64, double, float, half, int16, int32, int64, int8,
         qint16, qint32, qint8, quint16, quint8, string, uint16, uint32, uint64, uint8]
)]
struct PackKernel {
    axis: i64,
}

impl BuildKernel for PackKernel {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        Ok(Self {
            axis: ctx.attr("axis")?,
        })
    }
}

impl OpKernel for PackKernel {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        let n = ctx.num_inputs();
        let values = take_inputs(ctx, n)?;
        let layout = pack_layout(self.axis, &values)?;
        if let [first] = &values[..] {
            let output = first.reshape(layout.shape)?;
            drop(values);
            return ctx.set_output(0, output);
        }
        concat_into(ctx, &values, layout.rows, layout.shape)
    }
}

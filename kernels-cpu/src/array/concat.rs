//! `ConcatV2` and `Pack`. Both view every input as a `[rows, cols_i]` matrix
//! (`rows` = the product of the dimensions before the axis) and the output
//! as `[rows, Σ cols_i]`, whose row `r` is the inputs' rows `r` one after
//! the other ([`ConcatPlan`]).

use registry_core::kernel;
use registry_core::kernel::{
    BuildKernel, KernelError, OpKernel, OpKernelConstruction, OpKernelContext,
};
use registry_core::standard_ops::{ConcatV2, Pack};
use registry_core::tensor::{Tensor, TensorShape};
use smallvec::SmallVec;

use super::elements::{ElementOp, run_on_elements};
use super::index::{dim_i64, shape_of, single_int};
use super::parallel::{copy, for_each_row_chunk};

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
    T = [bfloat16, bool, complex128, complex64, double, float, half, int16, int32, int64, int8,
         qint16, qint32, qint8, quint16, quint8, string, uint16, uint32, uint64, uint8],
    host_memory = ["axis"]
)]
fn concat_v2(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    let n = ctx.num_inputs().saturating_sub(1);
    let axis_t = ctx.input(n)?;
    registry_core::kernel_ensure!(
        axis_t.shape().rank() == 0,
        "axis tensor should be a scalar integer, but got shape {}",
        axis_t.shape()
    );
    let concat_dim = single_int(axis_t)?.unwrap_or(0);
    let values = take_inputs(ctx, n)?;
    let first = values
        .first()
        .ok_or_else(|| KernelError::invalid_argument("ConcatOp : Expected at least one input"))?;
    let rank = first.shape().rank();
    let rank_i = dim_i64(rank);
    let axis = if concat_dim < 0 {
        concat_dim + rank_i
    } else {
        concat_dim
    };
    registry_core::kernel_ensure!(
        (0..rank_i).contains(&axis) || concat_dim == 0,
        "ConcatOp : Expected concatenating dimensions in the range [{}, {rank}), but got \
         {concat_dim}",
        -rank_i
    );
    // A list of scalars concatenates into a vector (axis 0 of rank 0).
    let axis = usize::try_from(axis).unwrap_or(0);
    let first_shape = first.shape();
    let mut out_axis: usize = 0;
    for (i, v) in values.iter().enumerate() {
        registry_core::kernel_ensure!(
            v.shape().rank() == rank,
            "ConcatOp : Ranks of all input tensors should match: shape[0] = {first_shape} vs. \
             shape[{i}] = {}",
            v.shape()
        );
        for j in (0..rank).filter(|&j| j != axis) {
            registry_core::kernel_ensure!(
                v.dims()[j] == first_shape.dims()[j],
                "ConcatOp : Dimension {j} in both shapes must be equal: shape[0] = \
                 {first_shape} vs. shape[{i}] = {}",
                v.shape()
            );
        }
        let along = if rank > 0 { v.dims()[axis] } else { 1 };
        out_axis = out_axis.checked_add(along).ok_or_else(|| {
            KernelError::invalid_argument("ConcatOp : the output dimension overflows")
        })?;
    }
    let mut out_dims: SmallVec<[usize; 8]> = SmallVec::from_slice(first_shape.dims());
    if rank == 0 {
        out_dims.push(out_axis);
    } else {
        out_dims[axis] = out_axis;
    }
    let out_shape = shape_of(&out_dims)?;
    let rows: usize = first_shape.dims()[..axis.min(rank)].iter().product();
    concat_into(ctx, &values, rows, out_shape)
}

/// Allocates output 0 with `shape` and fills it with the concatenation of
/// `values`' `rows`-row matrices.
fn concat_into(
    ctx: &mut OpKernelContext<'_>,
    values: &[Tensor],
    rows: usize,
    shape: TensorShape,
) -> Result<(), KernelError> {
    let out = ctx.allocate_output(0, shape)?;
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
    T = [bfloat16, bool, complex128, complex64, double, float, half, int16, int32, int64, int8,
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
        let first = values
            .first()
            .ok_or_else(|| KernelError::invalid_argument("Pack needs at least one input"))?;
        let expanded = dim_i64(first.shape().rank() + 1);
        let axis = if self.axis < 0 {
            self.axis + expanded
        } else {
            self.axis
        };
        registry_core::kernel_ensure!(
            (0..expanded).contains(&axis),
            "axis = {} not in [{}, {expanded})",
            self.axis,
            -expanded
        );
        let axis = usize::try_from(axis).unwrap_or(0);
        for (i, v) in values.iter().enumerate() {
            registry_core::kernel_ensure!(
                v.shape() == first.shape(),
                "Shapes of all inputs must match: values[0].shape = {} != values[{i}].shape = {}",
                first.shape(),
                v.shape()
            );
        }
        let mut out_dims: SmallVec<[usize; 8]> = SmallVec::from_slice(first.dims());
        out_dims.insert(axis, n);
        let out_shape = shape_of(&out_dims)?;
        if n == 1 {
            let output = first.reshape(out_shape)?;
            drop(values);
            return ctx.set_output(0, output);
        }
        let rows: usize = first.dims()[..axis].iter().product();
        concat_into(ctx, &values, rows, out_shape)
    }
}

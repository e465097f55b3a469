//! `ConcatV2` and `Pack` on the GPU. Both view every input as a
//! `[rows, cols_i]` matrix (`rows` = the product of the dimensions before
//! the axis) and the output as `[rows, Σ cols_i]`; each non-empty input is
//! copied into its columns by one launch of `concat_copy`.

use registry_core::kernel;
use registry_core::kernel::{
    BuildKernel, KernelError, OpKernel, OpKernelConstruction, OpKernelContext,
};
use registry_core::standard_ops::{ConcatV2, Pack};
use registry_core::tensor::{Tensor, TensorShape};
use smallvec::SmallVec;

use super::index::{Dims, dim_i64, shape_of, single_int};
use super::mover::Mover;
use super::source::entry;
use crate::gpu::gpu_bytes;

/// The first `n` inputs of a variadic node (cheap clones).
fn inputs(ctx: &OpKernelContext<'_>, n: usize) -> Result<Vec<Tensor>, KernelError> {
    (0..n).map(|i| ctx.input(i).cloned()).collect()
}

/// Fills a new tensor of `shape` with the concatenation of `values`'
/// `rows`-row matrices.
fn concat_values(
    mover: &Mover,
    values: &[Tensor],
    rows: usize,
    shape: TensorShape,
) -> Result<Tensor, KernelError> {
    if shape.num_elements() == 0 || rows == 0 {
        return mover.empty(shape);
    }
    let mut parts: SmallVec<[(&_, usize); 8]> = SmallVec::with_capacity(values.len());
    for (i, v) in values.iter().enumerate() {
        parts.push((gpu_bytes(v, i)?, v.num_elements() / rows));
    }
    mover.concat(&parts, rows, shape)
}

/// `ConcatV2` for TF's GPU types; `axis` on the host.
#[kernel(
    op = ConcatV2,
    device = GPU,
    T = [bfloat16, bool, complex128, complex64, double, float, half, int16, int32, int64, int8,
         uint16, uint32, uint64, uint8],
    host_memory = ["axis"]
)]
#[derive(Debug)]
pub struct ConcatV2Gpu {
    mover: Mover,
}

impl BuildKernel for ConcatV2Gpu {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        Ok(Self {
            mover: Mover::new(ctx.attr("T")?, entry::CONCAT)?,
        })
    }
}

impl OpKernel for ConcatV2Gpu {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        let n = ctx.num_inputs().saturating_sub(1);
        let axis_t = ctx.input(n)?;
        registry_core::kernel_ensure!(
            axis_t.shape().rank() == 0,
            "axis tensor should be a scalar integer, but got shape {}",
            axis_t.shape()
        );
        let concat_dim = single_int(axis_t)?.unwrap_or(0);
        let values = inputs(ctx, n)?;
        let first = values.first().ok_or_else(|| {
            KernelError::invalid_argument("ConcatOp : Expected at least one input")
        })?;
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
                "ConcatOp : Ranks of all input tensors should match: shape[0] = {first_shape} \
                 vs. shape[{i}] = {}",
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
        let mut out_dims: Dims = SmallVec::from_slice(first_shape.dims());
        if rank == 0 {
            out_dims.push(out_axis);
        } else {
            out_dims[axis] = out_axis;
        }
        let out_shape = shape_of(&out_dims)?;
        if values.len() == 1 {
            let output = first.reshape(out_shape)?;
            return ctx.set_output(0, output);
        }
        let rows: usize = first_shape.dims()[..axis.min(rank)].iter().product();
        let out = concat_values(&self.mover, &values, rows, out_shape)?;
        ctx.set_output(0, out)
    }
}

/// `Pack` for TF's GPU types: stacks `N` tensors of one shape along a new
/// dimension `axis`.
#[kernel(
    op = Pack,
    device = GPU,
    T = [bfloat16, bool, complex128, complex64, double, float, half, int16, int32, int64, int8,
         uint16, uint32, uint64, uint8]
)]
#[derive(Debug)]
pub struct PackGpu {
    axis: i64,
    mover: Mover,
}

impl BuildKernel for PackGpu {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        Ok(Self {
            axis: ctx.attr("axis")?,
            mover: Mover::new(ctx.attr("T")?, entry::CONCAT)?,
        })
    }
}

impl OpKernel for PackGpu {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        let n = ctx.num_inputs();
        let values = inputs(ctx, n)?;
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
        let mut out_dims: Dims = SmallVec::from_slice(first.dims());
        out_dims.insert(axis, n);
        let out_shape = shape_of(&out_dims)?;
        if n == 1 {
            let output = first.reshape(out_shape)?;
            return ctx.set_output(0, output);
        }
        let rows: usize = first.dims()[..axis].iter().product();
        let out = concat_values(&self.mover, &values, rows, out_shape)?;
        ctx.set_output(0, out)
    }
}

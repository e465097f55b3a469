//! `GatherV2` on the GPU: slices of `params` along `axis` picked by
//! `indices` (in GPU memory), with optional leading batch dimensions.
//!
//! The indices are not checked: they are on the device, and reading them
//! back would stall the stream. As TensorFlow's GPU kernel does, an index
//! outside `[0, params.shape[axis])` gives zeros (the CPU kernel reports
//! InvalidArgument instead).

use std::marker::PhantomData;

use kernels_cpu::util::index::{Dims, dim_i64, shape_of, single_int};
use registry_core::kernel;
use registry_core::kernel::{
    BuildKernel, KernelError, OpKernel, OpKernelConstruction, OpKernelContext,
};
use registry_core::proto::{DataType, DataTypeExt};
use registry_core::standard_ops::GatherV2;
use registry_core::tensor::{TensorElement, TensorShape};
use smallvec::SmallVec;

use super::mover::{GatherDims, Mover};
use super::source::entry;
use crate::gpu::gpu_bytes;

/// `GatherV2` for TF's GPU types, with int32 or int64 indices; `axis` on
/// the host.
#[kernel(
    op = GatherV2,
    device = GPU,
    Tparams = [bfloat16, bool, complex128, complex64, double, float, half, int16, int32, int64,
               int8, uint16, uint32, uint64, uint8],
    Tindices = [int32, int64],
    host_memory = ["axis"]
)]
#[derive(Debug)]
pub struct GatherV2Gpu<Tindices> {
    batch_dims: i64,
    mover: Mover,
    index: PhantomData<fn() -> Tindices>,
}

impl<Tindices: TensorElement> BuildKernel for GatherV2Gpu<Tindices> {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        let entry = match Tindices::DTYPE {
            DataType::DtInt32 => entry::GATHER_I32,
            DataType::DtInt64 => entry::GATHER_I64,
            other => {
                return Err(KernelError::unimplemented(format!(
                    "GatherV2 on GPU: {} indices",
                    other.type_name()
                )));
            }
        };
        Ok(Self {
            batch_dims: ctx.attr("batch_dims")?,
            mover: Mover::new(ctx.attr("Tparams")?, entry)?,
            index: PhantomData,
        })
    }
}

/// `GatherV2`'s output shape and geometry (TF's checks and messages), for
/// params of `p_dims` and indices of `i_dims` indexed by `index_max`-bounded
/// integers of type `index_name`.
pub(crate) fn gather_plan(
    p_dims: &[usize],
    i_dims: &[usize],
    axis: i64,
    batch_dims: i64,
    index_name: &str,
    index_max: i64,
) -> Result<(TensorShape, GatherDims), KernelError> {
    let p_rank = dim_i64(p_dims.len());
    let i_rank = dim_i64(i_dims.len());
    let p_shape = shape_of(p_dims)?;
    registry_core::kernel_ensure!(p_rank >= 1, "params must be at least 1 dimensional");
    registry_core::kernel_ensure!(
        p_rank >= batch_dims,
        "params must have at least {batch_dims} (batch_dims) dimensions but it has shape {p_shape}"
    );
    let mut axis = axis;
    let min_rank = if axis < 0 {
        axis.saturating_neg()
    } else {
        axis.saturating_add(1)
    };
    registry_core::kernel_ensure!(
        p_rank >= min_rank,
        "Shape must be at least rank {min_rank} but is rank {p_rank}"
    );
    if axis < 0 {
        axis += p_rank;
    }
    let mut batch_dims = batch_dims;
    if batch_dims != 0 {
        registry_core::kernel_ensure!(
            batch_dims >= -i_rank && batch_dims <= i_rank,
            "Expected batch_dims in the range [{}, {i_rank}], but got {batch_dims}",
            -i_rank
        );
        if batch_dims < 0 {
            batch_dims += i_rank;
        }
        registry_core::kernel_ensure!(
            batch_dims < p_rank,
            "batch_dims ({batch_dims}) must be less than rank(params) ({p_rank})."
        );
        registry_core::kernel_ensure!(
            axis >= batch_dims,
            "batch_dims ({batch_dims}) must be less than or equal to axis ({axis})."
        );
    }
    // In range by the checks above.
    let axis = usize::try_from(axis).unwrap_or(0);
    let batch_dims = usize::try_from(batch_dims).unwrap_or(0);
    for i in 0..batch_dims {
        registry_core::kernel_ensure!(
            p_dims[i] == i_dims[i],
            "params.shape[{i}]: {} should be equal to indices.shape[{i}]: {}",
            p_dims[i],
            i_dims[i]
        );
    }
    let limit = p_dims[axis];
    registry_core::kernel_ensure!(
        dim_i64(limit) <= index_max,
        "params.shape[{axis}] too large for {index_name} indexing: {limit} > {index_max}"
    );
    let mut out_dims: Dims = SmallVec::new();
    out_dims.extend_from_slice(&p_dims[..axis]);
    out_dims.extend_from_slice(&i_dims[batch_dims..]);
    out_dims.extend_from_slice(&p_dims[axis + 1..]);
    let out_shape = shape_of(&out_dims)?;
    let batch: usize = p_dims[..batch_dims].iter().product();
    let outer: usize = p_dims[batch_dims..axis].iter().product();
    let inner: usize = p_dims[axis + 1..].iter().product();
    let count: usize = i_dims.iter().product();
    let dims = GatherDims {
        batch_outer: batch * outer,
        outer,
        per_batch: count.checked_div(batch).unwrap_or(0),
        limit,
        inner,
    };
    Ok((out_shape, dims))
}

impl<Tindices: TensorElement> OpKernel for GatherV2Gpu<Tindices> {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        let params = ctx.input(0)?.clone();
        let indices = ctx.input(1)?.clone();
        let axis_t = ctx.input(2)?;
        registry_core::kernel_ensure!(axis_t.shape().rank() == 0, "axis must be scalar");
        let axis = single_int(axis_t)?.unwrap_or(0);
        let index_max = match Tindices::DTYPE {
            DataType::DtInt32 => i64::from(i32::MAX),
            _ => i64::MAX,
        };
        let (out_shape, dims) = gather_plan(
            params.dims(),
            indices.dims(),
            axis,
            self.batch_dims,
            Tindices::DTYPE.type_name(),
            index_max,
        )?;
        if out_shape.num_elements() == 0 {
            let out = self.mover.empty(out_shape)?;
            return ctx.set_output(0, out);
        }
        let index_bytes = gpu_bytes(&indices, 1)?;
        if index_bytes.len() != indices.num_elements() * std::mem::size_of::<Tindices>() {
            return Err(KernelError::internal("gather: indices buffer size"));
        }
        let out = self
            .mover
            .gather(gpu_bytes(&params, 0)?, index_bytes, &dims, out_shape)?;
        ctx.set_output(0, out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gather_geometry_and_checks() {
        let (shape, g) = gather_plan(&[2, 5, 3], &[2, 4], 1, 1, "int32", 1 << 31).unwrap();
        assert_eq!(shape.dims(), &[2, 4, 3]);
        assert_eq!(
            g,
            GatherDims {
                batch_outer: 2,
                outer: 1,
                per_batch: 4,
                limit: 5,
                inner: 3
            }
        );
        let (shape, g) = gather_plan(&[6, 5], &[7], -1, 0, "int64", i64::MAX).unwrap();
        assert_eq!(shape.dims(), &[6, 7]);
        assert_eq!((g.batch_outer, g.per_batch, g.limit, g.inner), (6, 7, 5, 1));
        assert_eq!(
            gather_plan(&[3], &[2], 1, 0, "int32", 100)
                .unwrap_err()
                .to_string(),
            "Shape must be at least rank 2 but is rank 1"
        );
        assert_eq!(
            gather_plan(&[3, 4], &[2], 0, 0, "int32", 2)
                .unwrap_err()
                .to_string(),
            "params.shape[0] too large for int32 indexing: 3 > 2"
        );
    }
}

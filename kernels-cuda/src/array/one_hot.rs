//! `OneHot` on the GPU: `output[p, d, s] = indices[p, s] == d ? on_value :
//! off_value`, with the one-hot dimension of size `depth` (a host scalar)
//! inserted at `axis`. An index outside `[0, depth)` gives a row of
//! `off_value` (as TF does). `indices`, `on_value` and `off_value` are read
//! in GPU memory.

use std::marker::PhantomData;

use kernels_cpu::util::index::{Dims, dim_i64, shape_of};
use registry_core::kernel;
use registry_core::kernel::{
    BuildKernel, KernelError, OpKernel, OpKernelConstruction, OpKernelContext,
};
use registry_core::proto::{DataType, DataTypeExt};
use registry_core::standard_ops::OneHot;
use registry_core::tensor::{Tensor, TensorElement, TensorShape};
use smallvec::SmallVec;

use super::mover::Mover;
use super::source::entry;
use crate::gpu::gpu_bytes;

/// `OneHot` for TF's GPU types, with uint8, int32 or int64 indices; `depth`
/// on the host.
#[kernel(
    op = OneHot,
    device = GPU,
    T = [bfloat16, bool, complex128, complex64, double, float, half, int16, int32, int64, int8,
         uint16, uint32, uint64, uint8],
    TI = [uint8, int32, int64],
    host_memory = ["depth"]
)]
#[derive(Debug)]
pub struct OneHotGpu<TI> {
    axis: i64,
    mover: Mover,
    index: PhantomData<fn() -> TI>,
}

impl<TI: TensorElement> BuildKernel for OneHotGpu<TI> {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        let entry = match TI::DTYPE {
            DataType::DtUint8 => entry::ONE_HOT_U8,
            DataType::DtInt32 => entry::ONE_HOT_I32,
            DataType::DtInt64 => entry::ONE_HOT_I64,
            other => {
                return Err(KernelError::unimplemented(format!(
                    "OneHot on GPU: {} indices",
                    other.type_name()
                )));
            }
        };
        Ok(Self {
            axis: ctx.attr("axis")?,
            mover: Mover::new(ctx.attr("T")?, entry)?,
            index: PhantomData,
        })
    }
}

/// The output shape, prefix-free geometry (`depth`, `suffix`) of a
/// `OneHot` (TF's checks and messages).
pub(crate) fn one_hot_plan(
    indices: &TensorShape,
    depth: &Tensor,
    on: &TensorShape,
    off: &TensorShape,
    axis: i64,
) -> Result<(TensorShape, usize, usize), KernelError> {
    let i_rank = indices.rank();
    let out_rank = dim_i64(i_rank + 1);
    registry_core::kernel_ensure!(
        axis == -1 || (0..out_rank).contains(&axis),
        "Expected axis to be -1 or between [0, {out_rank}).  But received: {axis}"
    );
    registry_core::kernel_ensure!(
        depth.shape().rank() == 0,
        "depth must be a scalar, but got: {}",
        depth.shape()
    );
    registry_core::kernel_ensure!(on.rank() == 0, "on_value must be a scalar, but got: {on}");
    registry_core::kernel_ensure!(
        off.rank() == 0,
        "off_value must be a scalar, but got: {off}"
    );
    let axis = usize::try_from(axis).unwrap_or(i_rank);
    let depth_v = depth.as_slice::<i32>()?.first().copied().unwrap_or(0);
    registry_core::kernel_ensure!(depth_v >= 0, "depth must be non-negative, got: {depth_v}");
    let depth_n = usize::try_from(depth_v).unwrap_or(0);
    registry_core::kernel_ensure!(
        indices
            .num_elements()
            .checked_mul(depth_n)
            .is_some_and(|n| i64::try_from(n).is_ok()),
        "OneHot result would have shape {indices} + [{depth_v}], which exceeds 2**63 - 1 elements"
    );
    let mut out_dims: Dims = SmallVec::from_slice(indices.dims());
    out_dims.insert(axis, depth_n);
    let out_shape = shape_of(&out_dims)?;
    let prefix: usize = indices.dims()[..axis].iter().product();
    let suffix = indices.num_elements().checked_div(prefix).unwrap_or(0);
    Ok((out_shape, depth_n, suffix))
}

impl<TI: TensorElement> OpKernel for OneHotGpu<TI> {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        let indices = ctx.input(0)?.clone();
        let on = ctx.input(2)?.clone();
        let off = ctx.input(3)?.clone();
        let (out_shape, depth, suffix) = one_hot_plan(
            indices.shape(),
            ctx.input(1)?,
            on.shape(),
            off.shape(),
            self.axis,
        )?;
        if out_shape.num_elements() == 0 {
            return ctx.set_output(0, self.mover.empty(out_shape)?);
        }
        let index_bytes = gpu_bytes(&indices, 0)?;
        if index_bytes.len() != indices.num_elements() * std::mem::size_of::<TI>() {
            return Err(KernelError::internal("one_hot: indices buffer size"));
        }
        let out = self.mover.one_hot(
            index_bytes,
            gpu_bytes(&on, 2)?,
            gpu_bytes(&off, 3)?,
            depth,
            suffix,
            out_shape,
        )?;
        ctx.set_output(0, out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_hot_geometry_and_checks() {
        let scalar = TensorShape::new(&[] as &[usize]).unwrap();
        let idx = TensorShape::new([2, 3]).unwrap();
        let depth = Tensor::scalar(4i32);
        let (shape, d, s) = one_hot_plan(&idx, &depth, &scalar, &scalar, -1).unwrap();
        assert_eq!((shape.dims(), d, s), (&[2, 3, 4][..], 4, 1));
        let (shape, d, s) = one_hot_plan(&idx, &depth, &scalar, &scalar, 1).unwrap();
        assert_eq!((shape.dims(), d, s), (&[2, 4, 3][..], 4, 3));
        let (shape, _, s) = one_hot_plan(&idx, &depth, &scalar, &scalar, 0).unwrap();
        assert_eq!((shape.dims(), s), (&[4, 2, 3][..], 6));
        let e = one_hot_plan(&idx, &Tensor::scalar(-1i32), &scalar, &scalar, -1).unwrap_err();
        assert_eq!(e.to_string(), "depth must be non-negative, got: -1");
        assert!(one_hot_plan(&idx, &depth, &idx, &scalar, -1).is_err());
        assert!(one_hot_plan(&idx, &depth, &scalar, &scalar, 3).is_err());
    }
}

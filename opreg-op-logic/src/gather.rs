//! `GatherV2`'s checks of `params`, `indices`, `axis` and `batch_dims` (TF's
//! `GatherOp`, with its messages) and the gather's geometry, shared by the
//! CPU and GPU kernels. The indices' values are not looked at here (the CPU
//! kernel checks them; the GPU kernel gives zeros for bad ones, as TF's).
//!
//! ```
//! use opreg_op_logic::gather::gather_geometry;
//! use registry_core::proto::DataType;
//! use registry_core::tensor::{Tensor, TensorShape};
//!
//! let params = TensorShape::new([2, 5, 3]).unwrap();
//! let indices = TensorShape::new([2, 4]).unwrap();
//! let axis = Tensor::scalar(1i32);
//! let g = gather_geometry(&params, &indices, &axis, 1, DataType::DtInt32, i32::MAX.into()).unwrap();
//! assert_eq!(g.out_shape.dims(), &[2, 4, 3]);
//! assert_eq!((g.batch, g.outer, g.per_batch, g.limit, g.inner), (2, 1, 4, 5, 3));
//! ```

use registry_core::kernel::{KernelError, OpKernelContext};
use registry_core::proto::{DataType, DataTypeExt};
use registry_core::tensor::{Tensor, TensorShape};
use smallvec::SmallVec;

use super::index::{Dims, dim_i64, shape_of, single_int};

/// A checked `GatherV2`: params seen as `[batch, outer, limit, inner]`,
/// indices as `[batch, per_batch]`, the output as
/// `[batch, outer, per_batch, inner]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GatherGeometry {
    /// The output's shape: params' dimensions before the axis, then
    /// indices' after the batch ones, then params' after the axis.
    pub out_shape: TensorShape,
    /// Product of the batch dimensions.
    pub batch: usize,
    /// Product of the dimensions between the batch ones and the axis.
    pub outer: usize,
    /// Indices per batch.
    pub per_batch: usize,
    /// The gathered dimension's size: valid indices are in `[0, limit)`.
    pub limit: usize,
    /// Product of the dimensions after the axis.
    pub inner: usize,
}

/// Checks a `GatherV2` of params of shape `params` by indices of shape
/// `indices` along the scalar host tensor `axis`, with the `batch_dims`
/// attr, in TF's order and with TF's messages. The indices have dtype
/// `index_dtype`, whose largest value is `index_max`.
pub fn gather_geometry(
    params: &TensorShape,
    indices: &TensorShape,
    axis: &Tensor,
    batch_dims: i64,
    index_dtype: DataType,
    index_max: i64,
) -> Result<GatherGeometry, KernelError> {
    let p_rank = dim_i64(params.rank());
    let i_rank = dim_i64(indices.rank());
    registry_core::kernel_ensure!(p_rank >= 1, "params must be at least 1 dimensional");
    registry_core::kernel_ensure!(
        p_rank >= batch_dims,
        "params must have at least {batch_dims} (batch_dims) dimensions but it has shape {params}"
    );
    registry_core::kernel_ensure!(axis.shape().rank() == 0, "axis must be scalar");
    let mut axis = single_int(axis)?.unwrap_or(0);
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
    let p_dims = params.dims();
    let i_dims = indices.dims();
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
        "params.shape[{axis}] too large for {} indexing: {limit} > {index_max}",
        index_dtype.type_name()
    );
    let mut out_dims: Dims = SmallVec::new();
    out_dims.extend_from_slice(&p_dims[..axis]);
    out_dims.extend_from_slice(&i_dims[batch_dims..]);
    out_dims.extend_from_slice(&p_dims[axis + 1..]);
    let out_shape = shape_of(&out_dims)?;
    let batch: usize = p_dims[..batch_dims].iter().product();
    Ok(GatherGeometry {
        out_shape,
        batch,
        outer: p_dims[batch_dims..axis].iter().product(),
        per_batch: indices.num_elements().checked_div(batch).unwrap_or(0),
        limit,
        inner: p_dims[axis + 1..].iter().product(),
    })
}

/// [`gather_geometry`] of a `GatherV2` call's inputs (`params`, `indices`,
/// `axis`).
pub fn gather_geometry_of(
    ctx: &OpKernelContext<'_>,
    batch_dims: i64,
    index_dtype: DataType,
    index_max: i64,
) -> Result<GatherGeometry, KernelError> {
    let (params, indices, axis) = (ctx.input(0)?, ctx.input(1)?, ctx.input(2)?);
    gather_geometry(
        params.shape(),
        indices.shape(),
        axis,
        batch_dims,
        index_dtype,
        index_max,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(d: &[usize]) -> TensorShape {
        TensorShape::new(d).unwrap()
    }

    fn geometry(
        p: &[usize],
        i: &[usize],
        axis: i32,
        batch_dims: i64,
        dtype: DataType,
    ) -> Result<GatherGeometry, String> {
        let max = match dtype {
            DataType::DtInt16 => i64::from(i16::MAX),
            DataType::DtInt32 => i64::from(i32::MAX),
            _ => i64::MAX,
        };
        gather_geometry(
            &shape(p),
            &shape(i),
            &Tensor::scalar(axis),
            batch_dims,
            dtype,
            max,
        )
        .map_err(|e| e.to_string())
    }

    #[test]
    fn geometry_with_batch_dims_and_negative_axes() {
        let g = geometry(&[2, 5, 3], &[2, 4], 1, 1, DataType::DtInt32).unwrap();
        assert_eq!(g.out_shape.dims(), &[2, 4, 3]);
        assert_eq!(
            (g.batch, g.outer, g.per_batch, g.limit, g.inner),
            (2, 1, 4, 5, 3)
        );
        let g = geometry(&[6, 5], &[7], -1, 0, DataType::DtInt64).unwrap();
        assert_eq!(g.out_shape.dims(), &[6, 7]);
        assert_eq!(
            (g.batch, g.outer, g.per_batch, g.limit, g.inner),
            (1, 6, 7, 5, 1)
        );
        // batch_dims counted from the end of the indices' dimensions.
        let g = geometry(&[2, 3, 4], &[2, 5], 2, -1, DataType::DtInt16).unwrap();
        assert_eq!(g.out_shape.dims(), &[2, 3, 5]);
        assert_eq!((g.batch, g.outer, g.per_batch), (2, 3, 5));
        // Empty indices: an empty output, no division by zero.
        let g = geometry(&[0, 3], &[0], 0, 0, DataType::DtInt32).unwrap();
        assert_eq!((g.out_shape.dims(), g.per_batch), (&[0, 3][..], 0));
    }

    #[test]
    fn geometry_of_a_call() {
        use registry_core::kernel::{KernelCall, NodeInfo};
        use registry_core::proto::DataType::{DtFloat, DtInt32, DtInt64};

        let info = NodeInfo::new(
            "g",
            "GatherV2",
            "CPU",
            vec![DtFloat, DtInt64, DtInt32],
            vec![DtFloat],
        );
        let inputs = [
            Tensor::from_vec([3, 4], vec![0.0f32; 12]).unwrap(),
            Tensor::from_vec([5], vec![0i64; 5]).unwrap(),
            Tensor::scalar(-1i32),
        ];
        let mut call = KernelCall::new(&info, inputs);
        let g = gather_geometry_of(&call.context(&info), 0, DtInt64, i64::MAX).unwrap();
        assert_eq!(g.out_shape.dims(), &[3, 5]);
        assert_eq!((g.outer, g.per_batch, g.limit, g.inner), (3, 5, 4, 1));
    }

    #[test]
    fn errors_have_tf_messages() {
        let e =
            |p: &[usize], i: &[usize], axis, b, dtype| geometry(p, i, axis, b, dtype).unwrap_err();
        assert_eq!(
            e(&[], &[2], 0, 0, DataType::DtInt32),
            "params must be at least 1 dimensional"
        );
        assert_eq!(
            e(&[3], &[2], 0, 2, DataType::DtInt32),
            "params must have at least 2 (batch_dims) dimensions but it has shape [3]"
        );
        assert_eq!(
            e(&[3], &[2], 1, 0, DataType::DtInt32),
            "Shape must be at least rank 2 but is rank 1"
        );
        assert_eq!(
            e(&[3, 4], &[3], 0, -2, DataType::DtInt32),
            "Expected batch_dims in the range [-1, 1], but got -2"
        );
        assert_eq!(
            e(&[3, 4], &[3, 4], 1, 2, DataType::DtInt32),
            "batch_dims (2) must be less than rank(params) (2)."
        );
        assert_eq!(
            e(&[3, 4, 5], &[3, 4], 0, 1, DataType::DtInt32),
            "batch_dims (1) must be less than or equal to axis (0)."
        );
        assert_eq!(
            e(&[3, 4], &[2, 4], 1, 1, DataType::DtInt32),
            "params.shape[0]: 3 should be equal to indices.shape[0]: 2"
        );
        assert_eq!(
            e(&[40_000], &[2], 0, 0, DataType::DtInt16),
            "params.shape[0] too large for int16 indexing: 40000 > 32767"
        );
        let axis = Tensor::from_vec([1], vec![0i32]).unwrap();
        assert_eq!(
            gather_geometry(&shape(&[3]), &shape(&[2]), &axis, 0, DataType::DtInt32, 10)
                .unwrap_err()
                .to_string(),
            "axis must be scalar"
        );
    }
}

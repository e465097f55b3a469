//! The checks and output layout of `ConcatV2` and `Pack` (TF's messages),
//! shared by the CPU and GPU kernels. Both ops see every input as a
//! `[rows, cols_i]` matrix (`rows` = the product of the dimensions before
//! the axis) and the output as `[rows, Σ cols_i]`.
//!
//! ```
//! use opreg_op_logic::concat::{concat_layout, pack_layout};
//! use registry_core::tensor::Tensor;
//!
//! let a = Tensor::from_vec([2, 1], vec![1.0f32, 2.0]).unwrap();
//! let b = Tensor::from_vec([2, 2], vec![3.0f32, 4.0, 5.0, 6.0]).unwrap();
//! let concat = concat_layout(&Tensor::scalar(-1i32), &[a.clone(), b]).unwrap();
//! assert_eq!((concat.shape.dims(), concat.rows), (&[2, 3][..], 2));
//! let pack = pack_layout(1, &[a.clone(), a]).unwrap();
//! assert_eq!((pack.shape.dims(), pack.rows), (&[2, 2, 1][..], 2));
//! ```

use registry_core::kernel::KernelError;
use registry_core::tensor::{Tensor, TensorShape};
use smallvec::SmallVec;

use super::index::{Dims, dim_i64, shape_of, single_int};

/// The output of a concatenation: its shape, and the number of rows every
/// input (and the output) is seen as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConcatLayout {
    /// The output shape.
    pub shape: TensorShape,
    /// The product of the dimensions before the axis (inputs and output).
    pub rows: usize,
}

/// `ConcatV2`'s checks (TF's `ConcatBaseOp`): the concatenation of
/// `values` along the scalar integer host tensor `axis` (negative counts
/// from the end; a list of scalars concatenates into a vector).
pub fn concat_layout(axis: &Tensor, values: &[Tensor]) -> Result<ConcatLayout, KernelError> {
    registry_core::kernel_ensure!(
        axis.shape().rank() == 0,
        "axis tensor should be a scalar integer, but got shape {}",
        axis.shape()
    );
    let concat_dim = single_int(axis)?.unwrap_or(0);
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
    let mut out_dims: Dims = SmallVec::from_slice(first_shape.dims());
    if rank == 0 {
        out_dims.push(out_axis);
    } else {
        out_dims[axis] = out_axis;
    }
    Ok(ConcatLayout {
        shape: shape_of(&out_dims)?,
        rows: first_shape.dims()[..axis.min(rank)].iter().product(),
    })
}

/// `Pack`'s checks (TF's `PackOp`): `values`, all of one shape, stacked
/// along a new dimension `axis` (the attr; negative counts from the end of
/// the output's dimensions).
pub fn pack_layout(axis: i64, values: &[Tensor]) -> Result<ConcatLayout, KernelError> {
    let first = values
        .first()
        .ok_or_else(|| KernelError::invalid_argument("Pack needs at least one input"))?;
    let expanded = dim_i64(first.shape().rank() + 1);
    let at = if axis < 0 { axis + expanded } else { axis };
    registry_core::kernel_ensure!(
        (0..expanded).contains(&at),
        "axis = {axis} not in [{}, {expanded})",
        -expanded
    );
    let at = usize::try_from(at).unwrap_or(0);
    for (i, v) in values.iter().enumerate() {
        registry_core::kernel_ensure!(
            v.shape() == first.shape(),
            "Shapes of all inputs must match: values[0].shape = {} != values[{i}].shape = {}",
            first.shape(),
            v.shape()
        );
    }
    let mut out_dims: Dims = SmallVec::from_slice(first.dims());
    out_dims.insert(at, values.len());
    Ok(ConcatLayout {
        shape: shape_of(&out_dims)?,
        rows: first.dims()[..at].iter().product(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn zeros(dims: &[usize]) -> Tensor {
        let n = dims.iter().product();
        Tensor::from_vec(dims, vec![0i32; n]).unwrap()
    }

    #[test]
    fn concat_checks_ranks_dims_and_axis() {
        let axis = |a: i32| Tensor::scalar(a);
        let l = concat_layout(&axis(0), &[zeros(&[1, 3]), zeros(&[2, 3])]).unwrap();
        assert_eq!((l.shape.dims(), l.rows), (&[3, 3][..], 1));
        let l = concat_layout(&axis(0), &[Tensor::scalar(1i32), Tensor::scalar(2i32)]).unwrap();
        assert_eq!((l.shape.dims(), l.rows), (&[2][..], 1));
        let e = concat_layout(&axis(2), &[zeros(&[1, 3])]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "ConcatOp : Expected concatenating dimensions in the range [-2, 2), but got 2"
        );
        let e = concat_layout(&axis(0), &[zeros(&[1, 3]), zeros(&[1, 2])]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "ConcatOp : Dimension 1 in both shapes must be equal: shape[0] = [1,3] vs. \
             shape[1] = [1,2]"
        );
        let e = concat_layout(&axis(0), &[zeros(&[3]), zeros(&[1, 3])]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "ConcatOp : Ranks of all input tensors should match: shape[0] = [3] vs. \
             shape[1] = [1,3]"
        );
        let e = concat_layout(&zeros(&[1]), &[zeros(&[3])]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "axis tensor should be a scalar integer, but got shape [1]"
        );
        let e = concat_layout(&axis(0), &[]).unwrap_err();
        assert_eq!(e.to_string(), "ConcatOp : Expected at least one input");
    }

    #[test]
    fn pack_checks_shapes_and_axis() {
        let l = pack_layout(-1, &vec![zeros(&[2, 3]); 4]).unwrap();
        assert_eq!((l.shape.dims(), l.rows), (&[2, 3, 4][..], 6));
        let e = pack_layout(3, &[zeros(&[2])]).unwrap_err();
        assert_eq!(e.to_string(), "axis = 3 not in [-2, 2)");
        let e = pack_layout(0, &[zeros(&[2]), zeros(&[3])]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "Shapes of all inputs must match: values[0].shape = [2] != values[1].shape = [3]"
        );
        assert!(pack_layout(0, &[]).is_err());
    }
}

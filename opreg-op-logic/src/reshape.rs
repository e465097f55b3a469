//! The output shapes of `Reshape`, `ExpandDims` and `Squeeze` (TF's
//! checks and messages), shared by the CPU and GPU kernels, which then
//! only give the input's buffer a new shape.
//!
//! ```
//! use opreg_op_logic::reshape::{reshape_shape, squeeze_shape};
//! use registry_core::tensor::{Tensor, TensorShape};
//!
//! let input = TensorShape::new([2, 3, 4]).unwrap();
//! let sizes = Tensor::from_vec([2], vec![4i32, -1]).unwrap();
//! assert_eq!(reshape_shape(&input, &sizes).unwrap().dims(), &[4, 6]);
//! assert_eq!(squeeze_shape(&[1, 3, 1], &[]).unwrap().dims(), &[3]);
//! ```

use registry_core::kernel::KernelError;
use registry_core::tensor::{Tensor, TensorShape};
use smallvec::SmallVec;

use super::index::{Dims, dim_i64, int_values, single_int};

/// TF's `TensorShape::MaxDimensions()`.
const MAX_DIMS: usize = 254;

/// The shape `Reshape` gives an input of shape `input` for its `shape`
/// input `sizes` (an int32 or int64 host tensor of rank at most 1, with at
/// most one `-1`, inferred): TF's `ReshapeOp::Compute` with
/// `ValidateSizes`.
pub fn reshape_shape(input: &TensorShape, sizes: &Tensor) -> Result<TensorShape, KernelError> {
    registry_core::kernel_ensure!(
        sizes.shape().rank() <= 1,
        "sizes input must be 1-D, not {}",
        sizes.shape()
    );
    registry_core::kernel_ensure!(
        sizes.num_elements() < MAX_DIMS,
        "too many dimensions: must be < {MAX_DIMS}, but received {}",
        sizes.num_elements()
    );
    let sizes = int_values(sizes)?;
    reshape_target(input, &sizes)
}

/// The shape `Reshape` produces for an input of `input` shape and the
/// requested `sizes`.
fn reshape_target(input: &TensorShape, sizes: &[i64]) -> Result<TensorShape, KernelError> {
    let mut dims: Dims = SmallVec::with_capacity(sizes.len());
    let mut product: usize = 1;
    let mut unknown: Option<usize> = None;
    let mut has_zero_dim = false;
    for (d, &size) in sizes.iter().enumerate() {
        if size == -1 {
            if let Some(first) = unknown {
                return Err(KernelError::invalid_argument(format!(
                    "Only one input size may be -1, not both {first} and {d}"
                )));
            }
            unknown = Some(d);
            dims.push(1);
        } else if size < 0 {
            return Err(KernelError::invalid_argument(format!(
                "Size {d} must be non-negative, not {size}"
            )));
        } else if size == 0 {
            dims.push(0);
            has_zero_dim = true;
        } else {
            let too_many = || {
                let all: Vec<String> = sizes.iter().map(i64::to_string).collect();
                KernelError::invalid_argument(format!(
                    "Shape [{}] has too many elements",
                    all.join(", ")
                ))
            };
            let size = usize::try_from(size).map_err(|_| too_many())?;
            product = product
                .checked_mul(size)
                .filter(|&p| i64::try_from(p).is_ok())
                .ok_or_else(too_many)?;
            dims.push(size);
        }
    }
    let input_count = input.num_elements();
    if let Some(unknown) = unknown {
        // Zero input dimensions are left out of the count when `sizes` has a
        // zero, so that the other dimensions can still be inferred.
        let mut count: usize = 1;
        let mut input_has_zero_dim = false;
        for &d in input.dims() {
            if d > 0 || !has_zero_dim {
                count = count.saturating_mul(d);
            } else {
                input_has_zero_dim = true;
            }
        }
        let missing = count / product;
        if !input_has_zero_dim && product.checked_mul(missing) != Some(count) {
            return Err(KernelError::invalid_argument(format!(
                "Input to reshape is a tensor with {count} values, but the requested shape \
                 requires a multiple of {product}"
            )));
        }
        dims[unknown] = missing;
    }
    let shape = TensorShape::new(&dims)
        .ok()
        .filter(|s| s.num_elements() == input_count);
    shape.ok_or_else(|| {
        let requested = dims
            .iter()
            .try_fold(1u128, |n, &d| n.checked_mul(d as u128))
            .map_or_else(|| "too many".to_owned(), |n| n.to_string());
        KernelError::invalid_argument(format!(
            "Input to reshape is a tensor with {input_count} values, but the requested shape \
             has {requested}"
        ))
    })
}

/// The shape `ExpandDims` gives an input of shape `input`: a dimension of
/// 1 inserted at `dim` (a one-element integer host tensor, in
/// `-1 - rank ..= rank`).
pub fn expand_dims_shape(input: &TensorShape, dim: &Tensor) -> Result<TensorShape, KernelError> {
    let dim = single_int(dim)?.ok_or_else(|| {
        KernelError::invalid_argument("'dim' must be a tensor with a single value")
    })?;
    let rank = dim_i64(input.rank());
    registry_core::kernel_ensure!(
        dim >= -1 - rank && dim <= rank,
        "Tried to expand dim index {dim} for tensor with {rank} dimensions."
    );
    let at = if dim < 0 { dim + rank + 1 } else { dim };
    let mut dims: Dims = SmallVec::from_slice(input.dims());
    dims.insert(usize::try_from(at).unwrap_or(0), 1);
    Ok(TensorShape::new(&dims)?)
}

/// The shape `Squeeze` gives an input of `dims`: the dimensions of size 1
/// removed (all of them when `squeeze_dims` is empty, else those it lists,
/// which must have size 1).
pub fn squeeze_shape(dims: &[usize], squeeze_dims: &[i32]) -> Result<TensorShape, KernelError> {
    let rank = dims.len();
    let rank_i = dim_i64(rank);
    let mut squeeze = vec![false; rank];
    for &dim in squeeze_dims {
        let dim = i64::from(dim);
        registry_core::kernel_ensure!(
            dim >= -rank_i && dim < rank_i,
            "Tried to squeeze dim index {dim} for tensor with {rank} dimensions."
        );
        let d = if dim < 0 { dim + rank_i } else { dim };
        if let Some(s) = usize::try_from(d).ok().and_then(|d| squeeze.get_mut(d)) {
            *s = true;
        }
    }
    let mut out: Dims = SmallVec::new();
    for (i, &d) in dims.iter().enumerate() {
        if squeeze_dims.is_empty() {
            if d != 1 {
                out.push(d);
            }
        } else if squeeze[i] {
            registry_core::kernel_ensure!(
                d == 1,
                "Can not squeeze dim[{i}], expected a dimension of 1, got {d}"
            );
        } else {
            out.push(d);
        }
    }
    Ok(TensorShape::new(&out)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(input: &[usize], sizes: &[i64]) -> Result<Vec<usize>, String> {
        reshape_target(&TensorShape::new(input).unwrap(), sizes)
            .map(|s| s.dims().to_vec())
            .map_err(|e| e.to_string())
    }

    #[test]
    fn reshape_targets_are_inferred_and_checked_as_tf_does() {
        assert_eq!(target(&[2, 3, 4], &[4, -1]), Ok(vec![4, 6]));
        assert_eq!(target(&[0, 3], &[-1, 0]), Ok(vec![3, 0]));
        assert_eq!(
            target(&[2, 3], &[]),
            Err("Input to reshape is a tensor with 6 values, but the requested shape has 1".into())
        );
        assert_eq!(
            target(&[2, 3], &[-1, -1]),
            Err("Only one input size may be -1, not both 0 and 1".into())
        );
        assert_eq!(
            target(&[2, 3], &[4, -1]),
            Err(
                "Input to reshape is a tensor with 6 values, but the requested shape requires \
                 a multiple of 4"
                    .into()
            )
        );
        assert_eq!(
            target(&[2, 3], &[-2, 3]),
            Err("Size 0 must be non-negative, not -2".into())
        );
        let input = TensorShape::new([2, 3]).unwrap();
        let matrix = Tensor::from_vec([1, 2], vec![2i32, 3]).unwrap();
        assert_eq!(
            reshape_shape(&input, &matrix).unwrap_err().to_string(),
            "sizes input must be 1-D, not [1,2]"
        );
    }

    #[test]
    fn expand_dims_and_squeeze_check_their_dims() {
        let input = TensorShape::new([2, 3]).unwrap();
        let dim = |d: i32| Tensor::scalar(d);
        assert_eq!(
            expand_dims_shape(&input, &dim(-1)).unwrap().dims(),
            &[2, 3, 1]
        );
        assert_eq!(
            expand_dims_shape(&input, &dim(0)).unwrap().dims(),
            &[1, 2, 3]
        );
        assert_eq!(
            expand_dims_shape(&input, &dim(3)).unwrap_err().to_string(),
            "Tried to expand dim index 3 for tensor with 2 dimensions."
        );
        let two = Tensor::from_vec([2], vec![0i32, 1]).unwrap();
        assert_eq!(
            expand_dims_shape(&input, &two).unwrap_err().to_string(),
            "'dim' must be a tensor with a single value"
        );
        assert_eq!(squeeze_shape(&[1, 3, 1], &[-1]).unwrap().dims(), &[1, 3]);
        assert_eq!(
            squeeze_shape(&[1, 3], &[1]).unwrap_err().to_string(),
            "Can not squeeze dim[1], expected a dimension of 1, got 3"
        );
        assert_eq!(
            squeeze_shape(&[1, 3], &[2]).unwrap_err().to_string(),
            "Tried to squeeze dim index 2 for tensor with 2 dimensions."
        );
    }
}

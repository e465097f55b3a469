//! `Slice`'s checks of `begin` and `size` (TF's `SharedSliceValidation`,
//! with its messages) and the slice's place in the input, shared by the
//! CPU and GPU kernels.
//!
//! ```
//! use opreg_op_logic::slice::slice_box;
//! use registry_core::tensor::Tensor;
//!
//! let begin = Tensor::from_vec([2], vec![1i32, 2]).unwrap();
//! let size = Tensor::from_vec([2], vec![-1i32, 2]).unwrap();
//! let b = slice_box(&[4, 5], &begin, &size).unwrap();
//! assert_eq!(&b.sizes[..], &[3, 2]);
//! assert_eq!(b.input_steps(&[4, 5]).unwrap(), (vec![5, 1].into(), 7));
//! ```

use registry_core::kernel::KernelError;
use registry_core::tensor::Tensor;
use smallvec::SmallVec;

use super::index::{Dims, Ints, dim_i64, int_values, is_vector, strides};

/// A validated slice: its first element per dimension and its sizes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SliceBox {
    /// The first index per dimension.
    pub begin: Ints,
    /// The output's dimensions.
    pub sizes: Dims,
    /// The slice is the whole input.
    pub identity: bool,
}

/// Validates `begin` and `size` against `dims` (TF's messages).
pub fn slice_box(
    dims: &[usize],
    begin_t: &Tensor,
    size_t: &Tensor,
) -> Result<SliceBox, KernelError> {
    let rank = dims.len();
    registry_core::kernel_ensure!(
        is_vector(begin_t.shape())
            && is_vector(size_t.shape())
            && begin_t.num_elements() == rank
            && size_t.num_elements() == rank,
        "Expected begin and size arguments to be 1-D tensors of size {rank}, but got shapes {} \
         and {} instead.",
        begin_t.shape(),
        size_t.shape()
    );
    let begin = int_values(begin_t)?;
    let mut size = int_values(size_t)?;
    let mut identity = true;
    let mut sizes: Dims = SmallVec::with_capacity(rank);
    for i in 0..rank {
        let dim = dim_i64(dims[i]);
        let b = begin[i];
        if size[i] == -1 {
            size[i] = dim.saturating_sub(b);
        }
        let s = size[i];
        if dim == 0 {
            registry_core::kernel_ensure!(
                b == 0 && s == 0,
                "Expected begin[{i}] == 0 (got {b}) and size[{i}] == 0 (got {s}) when \
                 input.dim_size({i}) == 0"
            );
        } else {
            registry_core::kernel_ensure!(
                0 <= b && b <= dim,
                "Expected begin[{i}] in [0, {dim}], but got {b}"
            );
            registry_core::kernel_ensure!(
                0 <= s && b.saturating_add(s) <= dim,
                "Expected size[{i}] in [0, {}], but got {s}",
                dim - b
            );
        }
        identity &= b == 0 && s == dim;
        // In [0, dim] by the checks above.
        sizes.push(usize::try_from(s).unwrap_or(0));
    }
    Ok(SliceBox {
        begin,
        sizes,
        identity,
    })
}

impl SliceBox {
    /// The input's element steps per dimension and the offset of the
    /// slice's first element (0 for an empty slice), for a strided copy
    /// of the input of dimensions `dims`.
    pub fn input_steps(&self, dims: &[usize]) -> Result<(SmallVec<[i64; 8]>, i64), KernelError> {
        let steps: SmallVec<[i64; 8]> = strides(dims).iter().map(|&s| dim_i64(s)).collect();
        let base = if self.sizes.contains(&0) {
            0
        } else {
            self.begin
                .iter()
                .zip(&steps)
                .try_fold(0i64, |acc, (&b, &s)| b.checked_mul(s)?.checked_add(acc))
                .ok_or_else(|| KernelError::internal("slice offset overflows"))?
        };
        Ok((steps, base))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(x: &[i32]) -> Tensor {
        Tensor::from_vec([x.len()], x.to_vec()).unwrap()
    }

    #[test]
    fn slices_are_validated_as_tf_does() {
        let b = slice_box(&[4, 5], &v(&[1, 2]), &v(&[-1, 2])).unwrap();
        assert_eq!(
            (&b.begin[..], &b.sizes[..], b.identity),
            (&[1, 2][..], &[3, 2][..], false)
        );
        assert!(
            slice_box(&[4, 5], &v(&[0, 0]), &v(&[4, -1]))
                .unwrap()
                .identity
        );
        assert_eq!(
            slice_box(&[4], &v(&[5]), &v(&[0])).unwrap_err().to_string(),
            "Expected begin[0] in [0, 4], but got 5"
        );
        assert_eq!(
            slice_box(&[4], &v(&[1]), &v(&[4])).unwrap_err().to_string(),
            "Expected size[0] in [0, 3], but got 4"
        );
        assert!(slice_box(&[4], &v(&[1, 2]), &v(&[1])).is_err());
        assert!(slice_box(&[0], &v(&[0]), &v(&[0])).is_ok());
    }
}

//! Reading a reduction's axes (`reduction_indices`, ArgMax's `dimension`)
//! and canonicalising them as TensorFlow's `ReductionHelper` does (TF's
//! messages), shared by the CPU and GPU reductions: the output shape, and
//! the input simplified to runs of reduced and kept dimensions
//! (`ReductionHelper::Simplify`); and ArgMax's `[outer, n, inner]` view of
//! its input ([`ArgAxis`]).
//!
//! ```
//! use opreg_op_logic::axes::Reduction;
//!
//! // TF's example: [2, 1, 3, 1, 5] over [1, 4] is [6, 5] over [1].
//! let r = Reduction::new(&[2, 1, 3, 1, 5], &[1, 4], false).unwrap();
//! assert_eq!(r.out_shape.dims(), &[2, 3, 1]);
//! assert_eq!(&r.runs[..], &[(6, false), (5, true)]);
//! ```

use registry_core::kernel::KernelError;
use registry_core::kernel_ensure;
use registry_core::proto::DataType;
use registry_core::tensor::{Tensor, TensorShape};
use smallvec::SmallVec;

/// Axis values as read from an index tensor.
pub type Axes = SmallVec<[i64; 8]>;

/// Reads an int16/int32/int64 host tensor of axes of rank 0 or 1. `what`
/// names the input in errors.
pub fn read_axes(t: &Tensor, what: &str) -> Result<Axes, KernelError> {
    kernel_ensure!(
        t.shape().rank() <= 1,
        "Expected {what} to be a scalar or vector, but got shape: {}",
        t.shape()
    );
    let axes = match t.dtype() {
        DataType::DtInt32 => t.as_slice::<i32>()?.iter().map(|&a| i64::from(a)).collect(),
        DataType::DtInt64 => t.as_slice::<i64>()?.iter().copied().collect(),
        DataType::DtInt16 => t.as_slice::<i16>()?.iter().map(|&a| i64::from(a)).collect(),
        other => {
            return Err(KernelError::invalid_argument(format!(
                "{what} must be int16, int32 or int64, got {}",
                other.as_str_name()
            )));
        }
    };
    Ok(axes)
}

/// A reduction's axes checked against its input: the output shape and the
/// simplified problem.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reduction {
    /// The output's shape (reduced dims dropped, or kept as 1 with
    /// `keep_dims`).
    pub out_shape: TensorShape,
    /// The input as runs of dimensions, `(size, reduced)`, alternately
    /// reduced and kept: size-1 dimensions dropped, adjacent dimensions
    /// that are all reduced (or all kept) merged. Empty when every
    /// dimension has size 1.
    pub runs: SmallVec<[(usize, bool); 8]>,
}

impl Reduction {
    /// Checks the reduction of a tensor of `dims` over `axes` (negative
    /// axes count from the end; an axis named twice is TF's error).
    pub fn new(dims: &[usize], axes: &[i64], keep_dims: bool) -> Result<Self, KernelError> {
        let rank = dims.len();
        // A rank fits in i64: it is at most the length of a slice of usize.
        let rank_i = i64::try_from(rank).unwrap_or(i64::MAX);
        let mut bitmap: SmallVec<[bool; 8]> = SmallVec::from_elem(false, rank);
        for &axis in axes {
            kernel_ensure!(
                (-rank_i..rank_i).contains(&axis),
                "Invalid reduction dimension ({axis} for input with {rank} dimension(s)"
            );
            let index = if axis < 0 { axis + rank_i } else { axis };
            // In 0..rank after the check above.
            if let Some(slot) = usize::try_from(index).ok().and_then(|i| bitmap.get_mut(i)) {
                kernel_ensure!(
                    !*slot,
                    "Invalid reduction arguments: Axes contains duplicate dimension: {index}"
                );
                *slot = true;
            }
        }
        let mut out_dims: SmallVec<[usize; 8]> = SmallVec::new();
        for (&d, &reduced) in dims.iter().zip(&bitmap) {
            if !reduced {
                out_dims.push(d);
            } else if keep_dims {
                out_dims.push(1);
            }
        }
        let out_shape = TensorShape::new(&out_dims)?;
        let mut runs: SmallVec<[(usize, bool); 8]> = SmallVec::new();
        for (&d, &reduced) in dims.iter().zip(&bitmap) {
            if d == 1 {
                continue;
            }
            match runs.last_mut() {
                Some((size, run)) if *run == reduced => *size *= d,
                _ => runs.push((d, reduced)),
            }
        }
        Ok(Self { out_shape, runs })
    }
}

/// ArgMax's (and ArgMin's) input seen as `[outer, n, inner]`, reduced over
/// `n`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgAxis {
    /// Product of the dimensions before the axis.
    pub outer: usize,
    /// The axis' size (not 0).
    pub n: usize,
    /// Product of the dimensions after the axis.
    pub inner: usize,
    /// The output's shape: the input's without the axis.
    pub out_shape: TensorShape,
}

impl ArgAxis {
    /// Checks ArgMax's `dimension` (an int16/int32/int64 host scalar)
    /// against an input of shape `input`, with TF's messages.
    pub fn new(input: &TensorShape, dimension: &Tensor) -> Result<Self, KernelError> {
        kernel_ensure!(
            dimension.shape().rank() == 0,
            "dim must be a scalar, but received tensor of shape: {}",
            dimension.shape()
        );
        let dim = read_axes(dimension, "dimension")?
            .first()
            .copied()
            .unwrap_or(0);
        let dims = input.dims();
        let rank = i64::try_from(dims.len()).unwrap_or(i64::MAX);
        let axis = if dim < 0 { dim + rank } else { dim };
        kernel_ensure!(
            (0..rank).contains(&axis),
            "Expected dimension in the range [{}, {rank}), but got {dim}",
            -rank
        );
        let axis = usize::try_from(axis).unwrap_or(0);
        let n = dims.get(axis).copied().unwrap_or(0);
        kernel_ensure!(n > 0, "Reduction axis {dim} is empty in shape {input}");
        let (before, after) = dims.split_at(axis);
        let after = after.get(1..).unwrap_or_default();
        let out_dims: SmallVec<[usize; 8]> = before.iter().chain(after).copied().collect();
        Ok(Self {
            outer: before.iter().product(),
            n,
            inner: after.iter().product(),
            out_shape: TensorShape::new(&out_dims)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runs(dims: &[usize], axes: &[i64]) -> Vec<(usize, bool)> {
        Reduction::new(dims, axes, false).unwrap().runs.to_vec()
    }

    #[test]
    fn merges_runs_and_skips_size_one_dims() {
        assert_eq!(runs(&[2, 1, 3, 1, 5], &[1, 4]), [(6, false), (5, true)]);
        assert_eq!(runs(&[1, 1, 4, 6], &[-1, 0]), [(4, false), (6, true)]);
        assert_eq!(
            runs(&[2, 3, 4, 5], &[0, 2]),
            [(2, true), (3, false), (4, true), (5, false)]
        );
        assert_eq!(runs(&[4, 6], &[0, 1]), [(24, true)]);
        // An axis named twice (here as 1 and -1) is TF's error.
        let e = Reduction::new(&[4, 6], &[0, 1, -1], false).unwrap_err();
        assert_eq!(
            e.to_string(),
            "Invalid reduction arguments: Axes contains duplicate dimension: 1"
        );
        assert_eq!(runs(&[3, 0], &[1]), [(3, false), (0, true)]);
        assert!(runs(&[1, 1], &[0, 1]).is_empty());
        assert!(runs(&[], &[]).is_empty());
        let r = Reduction::new(&[1, 1, 4, 6], &[-1, 0], true).unwrap();
        assert_eq!(r.out_shape.dims(), &[1, 1, 4, 1]);
    }

    #[test]
    fn rejects_out_of_range_axes_and_bad_axis_tensors() {
        let e = Reduction::new(&[2, 3], &[2], false).unwrap_err();
        assert_eq!(
            e.to_string(),
            "Invalid reduction dimension (2 for input with 2 dimension(s)"
        );
        assert!(Reduction::new(&[2, 3], &[-3], false).is_err());
        assert!(Reduction::new(&[], &[0], false).is_err());
        let t = Tensor::from_vec([1, 1], vec![0i32]).unwrap();
        assert_eq!(
            read_axes(&t, "reduction_indices").unwrap_err().to_string(),
            "Expected reduction_indices to be a scalar or vector, but got shape: [1,1]"
        );
        let e = read_axes(&Tensor::scalar(0u8), "dimension").unwrap_err();
        assert_eq!(
            e.to_string(),
            "dimension must be int16, int32 or int64, got DT_UINT8"
        );
        let t = Tensor::from_vec([2], vec![0i16, -1]).unwrap();
        assert_eq!(&read_axes(&t, "dimension").unwrap()[..], &[0, -1]);
    }

    #[test]
    fn arg_axis_views_and_checks() {
        let shape = |d: &[usize]| TensorShape::new(d).unwrap();
        let a = ArgAxis::new(&shape(&[2, 3, 4]), &Tensor::scalar(1i32)).unwrap();
        assert_eq!((a.outer, a.n, a.inner), (2, 3, 4));
        assert_eq!(a.out_shape.dims(), &[2, 4]);
        let a = ArgAxis::new(&shape(&[5]), &Tensor::scalar(-1i64)).unwrap();
        assert_eq!(
            (a.outer, a.n, a.inner, a.out_shape.dims()),
            (1, 5, 1, &[][..])
        );
        let err =
            |dims: &[usize], d: &Tensor| ArgAxis::new(&shape(dims), d).unwrap_err().to_string();
        assert_eq!(
            err(&[2, 3], &Tensor::scalar(2i32)),
            "Expected dimension in the range [-2, 2), but got 2"
        );
        assert_eq!(
            err(&[2, 3], &Tensor::scalar(-3i16)),
            "Expected dimension in the range [-2, 2), but got -3"
        );
        assert_eq!(
            err(&[2, 0], &Tensor::scalar(1i32)),
            "Reduction axis 1 is empty in shape [2,0]"
        );
        assert_eq!(
            err(&[2, 3], &Tensor::from_vec([1], vec![0i32]).unwrap()),
            "dim must be a scalar, but received tensor of shape: [1]"
        );
        assert_eq!(
            err(&[2, 3], &Tensor::scalar(0u8)),
            "dimension must be int16, int32 or int64, got DT_UINT8"
        );
    }
}

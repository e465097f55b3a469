//! `ClipByValue`'s bound shapes (TF's `ClipOp` check) and `Cumsum`'s scan
//! axis and geometry (TF's `ScanOp`), with TensorFlow's messages.
//!
//! ```
//! use opreg_op_logic::clip_cumsum::{ScanGeometry, check_clip_bounds};
//! use registry_core::tensor::{Tensor, TensorShape};
//!
//! let t = TensorShape::new([2, 3]).unwrap();
//! assert!(check_clip_bounds(&t, &TensorShape::scalar(), &t).is_ok());
//! assert!(check_clip_bounds(&t, &TensorShape::new([3]).unwrap(), &t).is_err());
//!
//! let g = ScanGeometry::new(&[2, 3, 4], &Tensor::scalar(-2i32)).unwrap();
//! assert_eq!((g.outer, g.len, g.inner), (2, 3, 4));
//! ```

use registry_core::kernel::KernelError;
use registry_core::tensor::{Tensor, TensorShape};

use crate::index::int_values;

/// Checks that `ClipByValue`'s bounds `lo` and `hi` are each a scalar or of
/// the shape of `t` (TF's `ClipOp`, with its message).
pub fn check_clip_bounds(
    t: &TensorShape,
    lo: &TensorShape,
    hi: &TensorShape,
) -> Result<(), KernelError> {
    let fits = |b: &TensorShape| b.rank() == 0 || b == t;
    registry_core::kernel_ensure!(
        fits(lo) && fits(hi),
        "clip_value_min and clip_value_max must be either of the same shape as input, or a scalar. input shape: {t}clip_value_min shape: {lo}clip_value_max shape: {hi}"
    );
    Ok(())
}

/// A scan (`Cumsum`) of a tensor viewed as `[outer, len, inner]` around its
/// scan axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScanGeometry {
    /// The product of the dimensions before the axis.
    pub outer: usize,
    /// The size of the scanned axis.
    pub len: usize,
    /// The product of the dimensions after the axis.
    pub inner: usize,
}

impl ScanGeometry {
    /// The geometry of a scan of a tensor of `dims` along `axis` (a scalar
    /// integer tensor, negative from the end), with TF's `ScanOp` checks
    /// and messages: the axis must be a scalar in `[-rank, rank)`.
    pub fn new(dims: &[usize], axis: &Tensor) -> Result<Self, KernelError> {
        registry_core::kernel_ensure!(
            axis.shape().rank() == 0,
            "ScanOp: axis must be a scalar, not {}",
            axis.shape()
        );
        let axis = int_values(axis)?.first().copied().unwrap_or(0);
        let rank = dims.len() as i64;
        let normalized = if axis < 0 { axis + rank } else { axis };
        registry_core::kernel_ensure!(
            (0..rank).contains(&normalized),
            "ScanOp: Expected scan axis in the range [{}, {rank}), but got {normalized}",
            -rank
        );
        let axis = normalized as usize;
        Ok(Self {
            outer: dims[..axis].iter().product(),
            len: dims[axis],
            inner: dims[axis + 1..].iter().product(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(d: &[usize]) -> TensorShape {
        TensorShape::new(d).unwrap()
    }

    #[test]
    fn clip_bounds_are_scalars_or_the_input_shape() {
        let t = shape(&[2, 3]);
        assert!(check_clip_bounds(&t, &t, &t).is_ok());
        assert!(check_clip_bounds(&t, &shape(&[]), &shape(&[])).is_ok());
        let e = check_clip_bounds(&t, &shape(&[1]), &t).unwrap_err();
        assert_eq!(
            e.to_string(),
            "clip_value_min and clip_value_max must be either of the same shape as input, or a \
             scalar. input shape: [2,3]clip_value_min shape: [1]clip_value_max shape: [2,3]"
        );
        // A scalar input takes scalar bounds only.
        assert!(check_clip_bounds(&shape(&[]), &shape(&[]), &shape(&[1])).is_err());
    }

    #[test]
    fn scan_axes_as_tensorflow() {
        let g = ScanGeometry::new(&[2, 3, 4], &Tensor::scalar(0i64)).unwrap();
        assert_eq!((g.outer, g.len, g.inner), (1, 2, 12));
        let g = ScanGeometry::new(&[2, 3, 4], &Tensor::scalar(-1i32)).unwrap();
        assert_eq!((g.outer, g.len, g.inner), (6, 4, 1));
        let g = ScanGeometry::new(&[2, 0, 4], &Tensor::scalar(1i32)).unwrap();
        assert_eq!((g.outer, g.len, g.inner), (2, 0, 4));
        let e = ScanGeometry::new(&[2, 3], &Tensor::scalar(2i32)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "ScanOp: Expected scan axis in the range [-2, 2), but got 2"
        );
        let e = ScanGeometry::new(&[2, 3], &Tensor::scalar(-3i32)).unwrap_err();
        assert!(e.to_string().contains("but got -1"), "{e}");
        let e = ScanGeometry::new(&[], &Tensor::scalar(0i32)).unwrap_err();
        assert!(e.to_string().contains("range [0, 0)"), "{e}");
        let axis = Tensor::from_slice([1], &[0i32]).unwrap();
        let e = ScanGeometry::new(&[2], &axis).unwrap_err();
        assert_eq!(e.to_string(), "ScanOp: axis must be a scalar, not [1]");
    }
}

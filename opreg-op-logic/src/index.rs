//! Reading the host-side integer inputs of the shape and layout ops
//! (shapes, axes, permutations, begin/end vectors, paddings) whatever their
//! integer dtype, and the small shape helpers the checks in this module's
//! siblings share.
//!
//! ```
//! use opreg_op_logic::index::{int_values, single_int, strides};
//! use registry_core::tensor::Tensor;
//!
//! let t = Tensor::from_vec([3], vec![1i16, -2, 3]).unwrap();
//! assert_eq!(&int_values(&t).unwrap()[..], &[1, -2, 3]);
//! assert_eq!(single_int(&Tensor::scalar(7i64)).unwrap(), Some(7));
//! assert_eq!(&strides(&[2, 3, 4])[..], &[12, 4, 1]);
//! ```

use registry_core::kernel::KernelError;
use registry_core::tensor::{Tensor, TensorShape};
use smallvec::SmallVec;

/// Small integer vectors (one value per dimension, typically).
pub type Ints = SmallVec<[i64; 8]>;

/// Dimension sizes or element strides (one per dimension).
pub type Dims = SmallVec<[usize; 8]>;

/// The values of an integer tensor (`int8`, `uint8`, `int16`, `int32` or
/// `int64`) on the host as `i64`, in row-major order; InvalidArgument for
/// any other dtype.
pub fn int_values(t: &Tensor) -> Result<Ints, KernelError> {
    Ok(Ints::from_vec(t.int_values()?))
}

/// The single value of a one-element integer tensor, or `None` when it does
/// not have exactly one element.
pub fn single_int(t: &Tensor) -> Result<Option<i64>, KernelError> {
    if t.num_elements() != 1 {
        return Ok(None);
    }
    Ok(int_values(t)?.first().copied())
}

/// True for a rank-1 shape (TF's `TensorShapeUtils::IsVector`).
pub fn is_vector(shape: &TensorShape) -> bool {
    shape.rank() == 1
}

/// A dimension size as `i64` (tensor shapes always fit).
pub fn dim_i64(d: usize) -> i64 {
    i64::try_from(d).unwrap_or(i64::MAX)
}

/// `d` as a dimension size: non-negative and within `usize`.
pub fn to_dim(d: i64) -> Option<usize> {
    usize::try_from(d).ok()
}

/// A shape from computed dimensions, or InvalidArgument naming the
/// overflow (TF's `TensorShape::AddDimWithStatus`).
pub fn shape_of(dims: &[usize]) -> Result<TensorShape, KernelError> {
    TensorShape::new(dims).map_err(|_| {
        KernelError::invalid_argument(format!(
            "Encountered overflow when computing the shape {dims:?}: it has more than 2**63 - 1 \
             elements"
        ))
    })
}

/// The most dimensions a tensor shape may have (TF's
/// `TensorShape::MaxDimensions()`).
pub const MAX_DIMS: usize = 254;

/// A shape from integer sizes, as TF's `TensorShapeUtils::MakeShape` checks
/// them, dimension by dimension: a negative size is an error
/// (`Dimension -1 must be >= 0`), and so is an element count over
/// `i64::MAX`, naming the whole shape (`Shape [4611686018427387904,4]
/// would have more than 2**63 - 1 elements`, -1 written `?`).
///
/// ```
/// use opreg_op_logic::index::make_shape;
/// assert_eq!(make_shape(&[2, 0, 3]).unwrap().dims(), &[2, 0, 3]);
/// assert_eq!(make_shape(&[2, -1]).unwrap_err().to_string(), "Dimension -1 must be >= 0");
/// ```
pub fn make_shape(sizes: &[i64]) -> Result<TensorShape, KernelError> {
    if sizes.len() > MAX_DIMS {
        return Err(KernelError::invalid_argument("Too many dimensions"));
    }
    let mut dims: Dims = SmallVec::with_capacity(sizes.len());
    let mut elements: i64 = 1;
    for &size in sizes {
        let Some(dim) = to_dim(size) else {
            return Err(KernelError::invalid_argument(format!(
                "Dimension {size} must be >= 0"
            )));
        };
        elements = elements.checked_mul(size).ok_or_else(|| {
            let shown: Vec<String> = sizes
                .iter()
                .map(|&d| {
                    if d == -1 {
                        "?".to_owned()
                    } else {
                        d.to_string()
                    }
                })
                .collect();
            KernelError::invalid_argument(format!(
                "Shape [{}] would have more than 2**63 - 1 elements",
                shown.join(",")
            ))
        })?;
        dims.push(dim);
    }
    shape_of(&dims)
}

/// Row-major element strides of `dims`.
pub fn strides(dims: &[usize]) -> Dims {
    let mut out: Dims = SmallVec::from_elem(1, dims.len());
    for i in (0..dims.len().saturating_sub(1)).rev() {
        // Bounded by the element count of a valid shape.
        out[i] = out[i + 1].saturating_mul(dims[i + 1]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_integer_tensors_and_strides() {
        let t = Tensor::from_vec([3], vec![1i16, -2, 3]).unwrap();
        assert_eq!(&int_values(&t).unwrap()[..], &[1, -2, 3]);
        let t = Tensor::from_vec([2], vec![200u8, 7]).unwrap();
        assert_eq!(&int_values(&t).unwrap()[..], &[200, 7]);
        let t = Tensor::scalar(7i64);
        assert_eq!(single_int(&t).unwrap(), Some(7));
        let t = Tensor::from_vec([2], vec![1i32, 2]).unwrap();
        assert_eq!(single_int(&t).unwrap(), None);
        assert_eq!(
            int_values(&Tensor::scalar(1.0f32)).unwrap_err().to_string(),
            "expected an integer tensor, got dtype float"
        );
        assert_eq!(&strides(&[2, 3, 4])[..], &[12, 4, 1]);
        assert!(strides(&[]).is_empty());
        assert_eq!(to_dim(-1), None);
        assert_eq!(dim_i64(3), 3);
        assert!(is_vector(&TensorShape::new([2]).unwrap()));
    }

    #[test]
    fn make_shape_checks_as_tf_does() {
        assert_eq!(make_shape(&[]).unwrap().dims(), &[] as &[usize]);
        assert_eq!(make_shape(&[0, 1 << 62, 1 << 62]).unwrap().dims()[0], 0);
        let err = |s: &[i64]| make_shape(s).unwrap_err().to_string();
        assert_eq!(err(&[2, -3]), "Dimension -3 must be >= 0");
        assert_eq!(
            err(&[1 << 40, 1 << 40, -1]),
            "Shape [1099511627776,1099511627776,?] would have more than 2**63 - 1 elements"
        );
        assert_eq!(
            err(&[1 << 40, 1 << 40, -5]),
            "Shape [1099511627776,1099511627776,-5] would have more than 2**63 - 1 elements"
        );
        // A negative size before the overflow is reported first.
        assert_eq!(err(&[-2, 1 << 40, 1 << 40]), "Dimension -2 must be >= 0");
        assert_eq!(err(&[1; 255]), "Too many dimensions");
        assert_eq!(make_shape(&[1; 254]).unwrap().rank(), 254);
    }
}

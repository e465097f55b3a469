//! The values of `Shape`, `ShapeN`, `Size` and `Rank`, with TF's checks
//! that an int32 output can hold them (TF's `ShapeOp`, `ShapeNOp` and
//! `SizeOp`: a value must be *below* `i32::MAX`, so `2147483647` itself is
//! refused).
//!
//! ```
//! use opreg_op_logic::shape_of::{shape_values, size_value};
//! use registry_core::tensor::TensorShape;
//!
//! let shape = TensorShape::new([2, 3]).unwrap();
//! assert_eq!(shape_values(&shape, true, None).unwrap(), vec![2, 3]);
//! assert_eq!(size_value(&shape, true).unwrap(), 6);
//! ```

use registry_core::kernel::KernelError;
use registry_core::tensor::TensorShape;

use super::index::dim_i64;

/// Whether `value` fits an int32 output as TF checks it
/// (`FastBoundsCheck(value, INT32_MAX)`: `0 <= value < 2^31 - 1`).
fn fits_int32(value: i64) -> bool {
    (0..i64::from(i32::MAX)).contains(&value)
}

/// The dimensions of `shape`, for an int32 output when `int32`. For
/// `ShapeN`, `input` is the index of the input they belong to (it changes
/// the message).
pub fn shape_values(
    shape: &TensorShape,
    int32: bool,
    input: Option<usize>,
) -> Result<Vec<i64>, KernelError> {
    let values: Vec<i64> = shape.dims().iter().map(|&d| dim_i64(d)).collect();
    if int32 && let Some((i, &d)) = values.iter().enumerate().find(|(_, d)| !fits_int32(**d)) {
        return Err(KernelError::invalid_argument(match input {
            None => format!("Shape output type is 32-bit  but dim {i} is {d}"),
            Some(n) => format!("ShapeN output type is 32-bit but shape {n} dim {i} is {d}"),
        }));
    }
    Ok(values)
}

/// The number of elements of `shape`, for an int32 output when `int32`.
pub fn size_value(shape: &TensorShape, int32: bool) -> Result<i64, KernelError> {
    let size = dim_i64(shape.num_elements());
    if int32 && !fits_int32(size) {
        return Err(KernelError::invalid_argument(
            "Number of elements was larger than representable by 32-bit output type",
        ));
    }
    Ok(size)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(dims: &[usize]) -> TensorShape {
        TensorShape::new(dims).unwrap()
    }

    #[test]
    fn int32_outputs_are_checked_as_tf_does() {
        // Messages from TF 2.21: a dimension of 2^31 - 1 is refused too.
        let big = shape(&[1 << 31, 0]);
        assert_eq!(shape_values(&big, false, None).unwrap(), vec![1 << 31, 0]);
        assert_eq!(
            shape_values(&shape(&[(1 << 31) - 1, 0]), true, None)
                .unwrap_err()
                .to_string(),
            "Shape output type is 32-bit  but dim 0 is 2147483647"
        );
        assert_eq!(
            shape_values(&shape(&[(1 << 31) - 2, 0]), true, None).unwrap(),
            vec![(1 << 31) - 2, 0]
        );
        assert_eq!(
            shape_values(&shape(&[3, (1 << 31) - 1, 0]), true, Some(1))
                .unwrap_err()
                .to_string(),
            "ShapeN output type is 32-bit but shape 1 dim 1 is 2147483647"
        );
        assert!(
            shape_values(&TensorShape::scalar(), true, None)
                .unwrap()
                .is_empty()
        );
        // Size counts elements: a zero-element shape is fine.
        assert_eq!(size_value(&big, true).unwrap(), 0);
        assert_eq!(size_value(&TensorShape::scalar(), true).unwrap(), 1);
        assert_eq!(
            size_value(&shape(&[(1 << 31) - 1]), true)
                .unwrap_err()
                .to_string(),
            "Number of elements was larger than representable by 32-bit output type"
        );
        assert_eq!(size_value(&shape(&[1 << 31]), false).unwrap(), 1 << 31);
    }
}

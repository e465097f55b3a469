//! `Fill`'s checks of `dims` and `value` (TF's `FillOp`, with its messages)
//! and the output's shape, shared by the CPU and GPU kernels.
//!
//! ```
//! use opreg_op_logic::fill::fill_shape;
//! use registry_core::tensor::{Tensor, TensorShape};
//!
//! let dims = Tensor::from_vec([2], vec![2i32, 3]).unwrap();
//! let shape = fill_shape(&dims, &TensorShape::scalar()).unwrap();
//! assert_eq!(shape.dims(), &[2, 3]);
//! ```

use registry_core::kernel::KernelError;
use registry_core::tensor::{Tensor, TensorShape};

use super::index::{int_values, make_shape};

/// Checks `dims` (a host integer vector; a scalar is accepted as a vector
/// of one, as TF still does) and the shape of `value` (a scalar, or a
/// vector of one element), and returns the output's shape.
pub fn fill_shape(dims: &Tensor, value: &TensorShape) -> Result<TensorShape, KernelError> {
    registry_core::kernel_ensure!(
        dims.shape().rank() <= 1,
        "dims must represent a vector, got shape {}",
        dims.shape()
    );
    registry_core::kernel_ensure!(
        value.rank() == 0 || (value.rank() == 1 && value.dims()[0] == 1),
        "value must represent a scalar, got shape {value}"
    );
    make_shape(&int_values(dims)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(dims: &Tensor, value: &[usize]) -> String {
        fill_shape(dims, &TensorShape::new(value).unwrap())
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn dims_and_value_are_checked_as_tf_does() {
        // Messages from TF 2.21.
        let scalar = TensorShape::scalar();
        let legacy = Tensor::scalar(3i32);
        assert_eq!(fill_shape(&legacy, &scalar).unwrap().dims(), &[3]);
        let one = TensorShape::new([1]).unwrap();
        let dims = Tensor::from_vec([1], vec![2i64]).unwrap();
        assert_eq!(fill_shape(&dims, &one).unwrap().dims(), &[2]);
        let empty = Tensor::from_vec([0], Vec::<i32>::new()).unwrap();
        assert_eq!(fill_shape(&empty, &scalar).unwrap().rank(), 0);
        assert_eq!(
            err(&Tensor::from_vec([1, 2], vec![2i32, 1]).unwrap(), &[]),
            "dims must represent a vector, got shape [1,2]"
        );
        assert_eq!(
            err(&dims, &[2]),
            "value must represent a scalar, got shape [2]"
        );
        assert_eq!(
            err(&dims, &[1, 1]),
            "value must represent a scalar, got shape [1,1]"
        );
        let negative = Tensor::from_vec([2], vec![2i32, -1]).unwrap();
        assert_eq!(err(&negative, &[]), "Dimension -1 must be >= 0");
        let huge = Tensor::from_vec([2], vec![1i64 << 62, 4]).unwrap();
        assert_eq!(
            err(&huge, &[]),
            "Shape [4611686018427387904,4] would have more than 2**63 - 1 elements"
        );
    }
}

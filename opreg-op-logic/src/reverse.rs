//! `ReverseV2`'s checks of `axis` (TF's `ReverseV2Op`, with its messages)
//! and the dimensions to reverse, shared by the CPU and GPU kernels.
//!
//! ```
//! use opreg_op_logic::reverse::{Reverse, reversed_axes};
//! use registry_core::tensor::{Tensor, TensorShape};
//!
//! let axis = Tensor::from_vec([2], vec![0i32, -1]).unwrap();
//! let r = reversed_axes(&TensorShape::new([2, 3, 4]).unwrap(), &axis).unwrap();
//! assert_eq!(r, Reverse::Dims(vec![true, false, true]));
//! ```

use registry_core::kernel::KernelError;
use registry_core::tensor::{Tensor, TensorShape};

use super::index::{int_values, is_vector};

/// A checked `ReverseV2`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reverse {
    /// Nothing moves (a scalar or empty input, whose `axis` TF does not
    /// check, or no dimension of size above 1 reversed): the output is the
    /// input.
    Forward,
    /// Whether each dimension is reversed.
    Dims(Vec<bool>),
}

/// Checks `axis` (a host integer vector of distinct dimensions, negative
/// from the end) against an input of shape `input`.
pub fn reversed_axes(input: &TensorShape, axis: &Tensor) -> Result<Reverse, KernelError> {
    if input.rank() == 0 || input.num_elements() == 0 {
        return Ok(Reverse::Forward);
    }
    registry_core::kernel_ensure!(
        is_vector(axis.shape()),
        "'dims' must be 1-dimension, not {}",
        axis.shape().rank()
    );
    let rank = input.rank();
    let r = i64::try_from(rank).unwrap_or(i64::MAX);
    let mut dense = vec![false; rank];
    for (i, &a) in int_values(axis)?.iter().enumerate() {
        let canonical = if a < 0 { r + a } else { a };
        let Some(slot) = usize::try_from(canonical)
            .ok()
            .and_then(|c| dense.get_mut(c))
        else {
            return Err(KernelError::invalid_argument(format!(
                "'axis'[{i}] = {a} is out of valid range [0, {}",
                r - 1
            )));
        };
        registry_core::kernel_ensure!(!*slot, "axis {canonical} specified more than once.");
        *slot = true;
    }
    if rank > 8 {
        return Err(KernelError::unimplemented(
            "reverse is not implemented for tensors of rank > 8.",
        ));
    }
    let moves = dense.iter().zip(input.dims()).any(|(&r, &d)| r && d > 1);
    Ok(if moves {
        Reverse::Dims(dense)
    } else {
        Reverse::Forward
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(d: &[usize]) -> TensorShape {
        TensorShape::new(d).unwrap()
    }

    fn axes(v: &[i64]) -> Tensor {
        Tensor::from_vec([v.len()], v.to_vec()).unwrap()
    }

    #[test]
    fn axes_are_checked_as_tf_does() {
        let x = shape(&[2, 3, 4]);
        let err = |a: &Tensor| reversed_axes(&x, a).unwrap_err().to_string();
        // Messages from TF 2.21.
        assert_eq!(
            err(&axes(&[3])),
            "'axis'[0] = 3 is out of valid range [0, 2"
        );
        assert_eq!(err(&axes(&[1, -2])), "axis 1 specified more than once.");
        let matrix = Tensor::from_vec([1, 1], vec![0i32]).unwrap();
        assert_eq!(err(&matrix), "'dims' must be 1-dimension, not 2");
        assert!(matches!(
            reversed_axes(&shape(&[1; 9]), &axes(&[0])),
            Err(KernelError::Unimplemented(m)) if m == "reverse is not implemented for tensors of rank > 8."
        ));
        // A scalar or empty input is returned whatever the axes.
        assert_eq!(
            reversed_axes(&TensorShape::scalar(), &axes(&[7])).unwrap(),
            Reverse::Forward
        );
        assert_eq!(
            reversed_axes(&shape(&[0, 3]), &axes(&[9])).unwrap(),
            Reverse::Forward
        );
        // Reversing dimensions of size 1 (or none) moves nothing.
        assert_eq!(
            reversed_axes(&shape(&[1, 3]), &axes(&[0])).unwrap(),
            Reverse::Forward
        );
        assert_eq!(reversed_axes(&x, &axes(&[])).unwrap(), Reverse::Forward);
        assert_eq!(
            reversed_axes(&x, &axes(&[1])).unwrap(),
            Reverse::Dims(vec![false, true, false])
        );
    }
}

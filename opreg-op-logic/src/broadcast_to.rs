//! `BroadcastTo`'s checks (TF's `BroadcastToOp`, with its messages, in its
//! order) and the layout of the copy, shared by the CPU and GPU kernels.
//!
//! ```
//! use opreg_op_logic::broadcast_to::{BroadcastTo, broadcast_to};
//! use registry_core::tensor::{Tensor, TensorShape};
//!
//! let shape = Tensor::from_vec([3], vec![2i32, 2, 3]).unwrap();
//! let b = broadcast_to(&TensorShape::new([2, 1]).unwrap(), &shape).unwrap();
//! let BroadcastTo::Copy { out_shape, steps } = b else { panic!() };
//! assert_eq!(out_shape.dims(), &[2, 2, 3]);
//! // Input element steps per output dimension (0: repeated).
//! assert_eq!(&steps[..], &[0, 1, 0]);
//! ```

use registry_core::kernel::KernelError;
use registry_core::tensor::{Tensor, TensorShape};
use smallvec::SmallVec;

use super::index::{dim_i64, int_values, is_vector, make_shape, strides};

/// A checked `BroadcastTo`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BroadcastTo {
    /// The shape is the input's: the output is the input.
    Forward,
    /// The output has `out_shape` and element `o` (row-major) is input
    /// element `Σ idx[d] · steps[d]` (steps 0 along broadcast dimensions);
    /// an output without elements, or a scalar input, included.
    Copy {
        /// The output's shape.
        out_shape: TensorShape,
        /// The input's element step per output dimension.
        steps: SmallVec<[i64; 8]>,
    },
}

/// Checks `shape` (a host integer vector) against an input of shape
/// `input`, with TF's messages and in TF's order: the shape's values, the
/// ranks, then the broadcast rules (`Incompatible shapes` when a pair of
/// dimensions cannot broadcast, `Unable to broadcast` when they broadcast
/// to another shape than `shape`).
pub fn broadcast_to(input: &TensorShape, shape: &Tensor) -> Result<BroadcastTo, KernelError> {
    registry_core::kernel_ensure!(
        is_vector(shape.shape()),
        "shape must be a vector of {{int32,int64}}, got shape {}",
        shape.shape()
    );
    let out_shape = make_shape(&int_values(shape)?)?;
    if &out_shape == input {
        return Ok(BroadcastTo::Forward);
    }
    let (in_rank, out_rank) = (input.rank(), out_shape.rank());
    registry_core::kernel_ensure!(
        in_rank <= out_rank,
        "Rank of input ({in_rank}) must be no greater than rank of output shape ({out_rank})."
    );
    let offset = out_rank - in_rank;
    let in_strides = strides(input.dims());
    let out_dims = out_shape.dims();
    let pairs = || {
        input
            .dims()
            .iter()
            .zip(&out_dims[offset..])
            .map(|(&i, &o)| (i, o))
    };
    // TF's BCast: each pair equal, or one of them 1.
    registry_core::kernel_ensure!(
        pairs().all(|(i, o)| i == o || i == 1 || o == 1),
        "Incompatible shapes: {input} vs. {out_shape}"
    );
    // Broadcasting must give the shape asked for (not a larger one).
    registry_core::kernel_ensure!(
        pairs().all(|(i, o)| i == o || i == 1),
        "Unable to broadcast tensor of shape {input} to tensor of shape {out_shape}"
    );
    let mut steps: SmallVec<[i64; 8]> = SmallVec::from_elem(0, offset);
    for ((&i, &o), &s) in input
        .dims()
        .iter()
        .zip(&out_dims[offset..])
        .zip(&in_strides)
    {
        steps.push(if i == o { dim_i64(s) } else { 0 });
    }
    Ok(BroadcastTo::Copy { out_shape, steps })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(d: &[usize]) -> TensorShape {
        TensorShape::new(d).unwrap()
    }

    fn err(input: &[usize], to: &[i64]) -> String {
        let t = Tensor::from_vec([to.len()], to.to_vec()).unwrap();
        broadcast_to(&shape(input), &t).unwrap_err().to_string()
    }

    fn ok(input: &[usize], to: &[i32]) -> BroadcastTo {
        let t = Tensor::from_vec([to.len()], to.to_vec()).unwrap();
        broadcast_to(&shape(input), &t).unwrap()
    }

    #[test]
    fn broadcasts_as_tf_does() {
        assert_eq!(ok(&[2, 3], &[2, 3]), BroadcastTo::Forward);
        let BroadcastTo::Copy { out_shape, steps } = ok(&[], &[2, 3]) else {
            panic!("scalar input")
        };
        assert_eq!((out_shape.dims(), &steps[..]), (&[2, 3][..], &[0, 0][..]));
        let BroadcastTo::Copy { out_shape, steps } = ok(&[1, 0], &[3, 0]) else {
            panic!("empty output")
        };
        assert_eq!((out_shape.dims(), &steps[..]), (&[3, 0][..], &[0, 1][..]));
        let BroadcastTo::Copy { steps, .. } = ok(&[1], &[0]) else {
            panic!("[1] to [0]")
        };
        assert_eq!(&steps[..], &[0]);
        let BroadcastTo::Copy { steps, .. } = ok(&[3, 1, 4], &[2, 3, 5, 4]) else {
            panic!("rank 3 to 4")
        };
        assert_eq!(&steps[..], &[0, 4, 0, 1]);
    }

    #[test]
    fn errors_match_tf() {
        // Messages from TF 2.21, in its order.
        assert_eq!(
            err(&[3], &[2, 1]),
            "Unable to broadcast tensor of shape [3] to tensor of shape [2,1]"
        );
        assert_eq!(err(&[3], &[6]), "Incompatible shapes: [3] vs. [6]");
        assert_eq!(err(&[3], &[0]), "Incompatible shapes: [3] vs. [0]");
        assert_eq!(err(&[3], &[2, 0]), "Incompatible shapes: [3] vs. [2,0]");
        assert_eq!(err(&[0], &[5]), "Incompatible shapes: [0] vs. [5]");
        assert_eq!(
            err(&[0], &[1]),
            "Unable to broadcast tensor of shape [0] to tensor of shape [1]"
        );
        assert_eq!(
            err(&[2, 0], &[3, 0]),
            "Incompatible shapes: [2,0] vs. [3,0]"
        );
        assert_eq!(
            err(&[3], &[1]),
            "Unable to broadcast tensor of shape [3] to tensor of shape [1]"
        );
        assert_eq!(
            err(&[1, 3], &[3]),
            "Rank of input (2) must be no greater than rank of output shape (1)."
        );
        assert_eq!(err(&[2, 1], &[2, -1]), "Dimension -1 must be >= 0");
        assert_eq!(
            err(&[1, 3], &[1 << 40, 1 << 40, 1 << 40]),
            "Shape [1099511627776,1099511627776,1099511627776] would have more than 2**63 - 1 \
             elements"
        );
        let matrix = Tensor::from_vec([1, 2], vec![2i32, 2]).unwrap();
        assert_eq!(
            broadcast_to(&shape(&[2, 1]), &matrix)
                .unwrap_err()
                .to_string(),
            "shape must be a vector of {int32,int64}, got shape [1,2]"
        );
    }
}

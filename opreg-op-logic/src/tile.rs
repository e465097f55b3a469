//! `Tile`'s checks of `multiples` (TF's `TileOp`, with its messages) and the
//! output's shape, shared by the CPU and GPU kernels.
//!
//! ```
//! use opreg_op_logic::tile::tile_shape;
//! use registry_core::tensor::{Tensor, TensorShape};
//!
//! let multiples = Tensor::from_vec([2], vec![2i32, 3]).unwrap();
//! let t = tile_shape(&TensorShape::new([4, 5]).unwrap(), &multiples).unwrap();
//! assert_eq!((&t.reps[..], t.out_shape.dims()), (&[2, 3][..], &[8, 15][..]));
//! ```

use registry_core::kernel::KernelError;
use registry_core::tensor::{Tensor, TensorShape};
use smallvec::SmallVec;

use super::index::{Dims, int_values, is_vector, shape_of, to_dim};

/// A checked `Tile`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TileShape {
    /// How many times each input dimension is repeated.
    pub reps: Dims,
    /// The output's shape (`input.shape[d] * reps[d]` per dimension).
    pub out_shape: TensorShape,
}

/// Checks `multiples` (a host integer vector) against an input of shape
/// `input`, with TF's messages.
pub fn tile_shape(input: &TensorShape, multiples: &Tensor) -> Result<TileShape, KernelError> {
    registry_core::kernel_ensure!(
        is_vector(multiples.shape()),
        "Expected multiples to be 1-D, but got shape {}",
        multiples.shape()
    );
    let rank = input.rank();
    registry_core::kernel_ensure!(
        rank == multiples.num_elements(),
        "Expected multiples argument to be a vector of length {rank} but got length {}",
        multiples.num_elements()
    );
    let mults = int_values(multiples)?;
    let mut out_dims: Dims = SmallVec::with_capacity(rank);
    let mut reps: Dims = SmallVec::with_capacity(rank);
    for (i, (&m, &d)) in mults.iter().zip(input.dims()).enumerate() {
        let rep = to_dim(m).ok_or_else(|| {
            KernelError::invalid_argument(format!("Expected multiples[{i}] >= 0, but got {m}"))
        })?;
        let out = d
            .checked_mul(rep)
            .filter(|&o| i64::try_from(o).is_ok())
            .ok_or_else(|| {
                KernelError::invalid_argument(format!(
                    "Encountered overflow when multiplying {d} with {m}"
                ))
            })?;
        reps.push(rep);
        out_dims.push(out);
    }
    let out_shape = shape_of(&out_dims)?;
    Ok(TileShape { reps, out_shape })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(dims: &[usize], m: &Tensor) -> String {
        tile_shape(&TensorShape::new(dims).unwrap(), m)
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn multiples_give_the_output_shape() {
        let m = Tensor::from_vec([3], vec![1i64, 0, 2]).unwrap();
        let t = tile_shape(&TensorShape::new([4, 5, 6]).unwrap(), &m).unwrap();
        assert_eq!(
            (&t.reps[..], t.out_shape.dims()),
            (&[1, 0, 2][..], &[4, 0, 12][..])
        );
        let m = Tensor::from_vec([0], Vec::<i32>::new()).unwrap();
        let t = tile_shape(&TensorShape::scalar(), &m).unwrap();
        assert!(t.reps.is_empty() && t.out_shape.dims().is_empty());
    }

    #[test]
    fn multiples_are_checked_as_tf_does() {
        let m = Tensor::from_vec([1], vec![-1i64]).unwrap();
        assert_eq!(err(&[4], &m), "Expected multiples[0] >= 0, but got -1");
        assert_eq!(
            err(&[4, 5], &m),
            "Expected multiples argument to be a vector of length 2 but got length 1"
        );
        let m = Tensor::from_vec([1, 1], vec![2i32]).unwrap();
        assert_eq!(
            err(&[4], &m),
            "Expected multiples to be 1-D, but got shape [1,1]"
        );
        let m = Tensor::from_vec([1], vec![i64::MAX]).unwrap();
        assert_eq!(
            err(&[4], &m),
            format!("Encountered overflow when multiplying 4 with {}", i64::MAX)
        );
    }
}

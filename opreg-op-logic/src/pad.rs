//! `Pad`'s checks of `paddings` (TF's `PadOp`, with its messages), the
//! output's shape, and the padding simplified (dimensions without padding
//! merged), shared by the CPU and GPU kernels.
//!
//! ```
//! use opreg_op_logic::pad::{merge_unpadded, padding};
//! use registry_core::tensor::{Tensor, TensorShape};
//!
//! let paddings = Tensor::from_vec([3, 2], vec![1i32, 1, 0, 0, 0, 0]).unwrap();
//! let p = padding(&TensorShape::new([2, 3, 4]).unwrap(), &paddings).unwrap();
//! assert_eq!(p.out_shape.dims(), &[4, 3, 4]);
//! // The last two dimensions are one contiguous run of 12.
//! let merged = merge_unpadded(&p.dims).unwrap();
//! assert_eq!((merged.len(), merged[0].size, merged[0].before), (1, 24, 12));
//! ```

use registry_core::kernel::KernelError;
use registry_core::tensor::{Tensor, TensorShape};
use smallvec::SmallVec;

use super::index::{Dims, int_values, shape_of, to_dim};

/// One dimension of a padding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PadDim {
    /// The input's size.
    pub size: usize,
    /// Zeros before the input.
    pub before: usize,
    /// The output's size (`before + size + after`).
    pub out: usize,
}

/// A checked `Pad`: each dimension's padding and the output's shape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Padding {
    /// One per input dimension.
    pub dims: SmallVec<[PadDim; 8]>,
    /// The output's shape.
    pub out_shape: TensorShape,
}

/// Checks `paddings` (a host integer tensor of shape `[rank, 2]`) against
/// an input of shape `input`, with TF's messages.
pub fn padding(input: &TensorShape, paddings: &Tensor) -> Result<Padding, KernelError> {
    let pshape = paddings.shape();
    registry_core::kernel_ensure!(
        pshape.rank() == 2 && pshape.dims()[1] == 2,
        "paddings must be a matrix with 2 columns: {pshape}"
    );
    let rank = input.rank();
    registry_core::kernel_ensure!(
        rank == pshape.dims()[0],
        "The first dimension of paddings must be the rank of inputs{pshape} {input}"
    );
    let values = int_values(paddings)?;
    let mut dims: SmallVec<[PadDim; 8]> = SmallVec::with_capacity(rank);
    for (d, (pair, &size)) in values.chunks_exact(2).zip(input.dims()).enumerate() {
        let (before, after) = (pair[0], pair[1]);
        let (Some(b), Some(a)) = (to_dim(before), to_dim(after)) else {
            return Err(KernelError::invalid_argument(format!(
                "Paddings must be non-negative: {before} {after}"
            )));
        };
        let out = b
            .checked_add(size)
            .and_then(|n| n.checked_add(a))
            .filter(|&n| i64::try_from(n).is_ok())
            .ok_or_else(|| {
                KernelError::invalid_argument(format!(
                    "Encountered overflow when padding dimension {d} of size {size} with \
                     {before} and {after}"
                ))
            })?;
        dims.push(PadDim {
            size,
            before: b,
            out,
        });
    }
    let out_dims: Dims = dims.iter().map(|d| d.out).collect();
    let out_shape = shape_of(&out_dims)?;
    Ok(Padding { dims, out_shape })
}

/// `dims` with each dimension without padding merged into the one before it
/// (the two are then one contiguous dimension, in input and output).
/// Internal error if a merged size overflows.
pub fn merge_unpadded(dims: &[PadDim]) -> Result<SmallVec<[PadDim; 8]>, KernelError> {
    let mut merged: SmallVec<[PadDim; 8]> = SmallVec::new();
    for &d in dims {
        match merged.last_mut() {
            Some(last) if d.before == 0 && d.out == d.size => {
                let overflow = || KernelError::internal("pad: dimension overflow");
                last.size = last.size.checked_mul(d.size).ok_or_else(overflow)?;
                last.before = last.before.checked_mul(d.size).ok_or_else(overflow)?;
                last.out = last.out.checked_mul(d.size).ok_or_else(overflow)?;
            }
            _ => merged.push(d),
        }
    }
    Ok(merged)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(d: &[usize]) -> TensorShape {
        TensorShape::new(d).unwrap()
    }

    fn err(dims: &[usize], p: &Tensor) -> String {
        padding(&shape(dims), p).unwrap_err().to_string()
    }

    #[test]
    fn paddings_give_the_output_shape() {
        let p = Tensor::from_vec([2, 2], vec![1i32, 2, 0, 0]).unwrap();
        let d = padding(&shape(&[3, 4]), &p).unwrap();
        assert_eq!(d.out_shape.dims(), &[6, 4]);
        assert_eq!(
            d.dims[0],
            PadDim {
                size: 3,
                before: 1,
                out: 6
            }
        );
        let p = Tensor::from_vec([0, 2], Vec::<i64>::new()).unwrap();
        let d = padding(&shape(&[]), &p).unwrap();
        assert!(d.dims.is_empty() && d.out_shape.dims().is_empty());
    }

    #[test]
    fn paddings_are_checked_as_tf_does() {
        let p = Tensor::from_vec([1, 2], vec![-1i64, 0]).unwrap();
        assert_eq!(err(&[3], &p), "Paddings must be non-negative: -1 0");
        let p = Tensor::from_vec([1, 3], vec![0i32, 0, 0]).unwrap();
        assert_eq!(
            err(&[3], &p),
            "paddings must be a matrix with 2 columns: [1,3]"
        );
        let p = Tensor::from_vec([1, 2], vec![0i32, 1]).unwrap();
        assert_eq!(
            err(&[3, 4], &p),
            "The first dimension of paddings must be the rank of inputs[1,2] [3,4]"
        );
        let p = Tensor::from_vec([1, 2], vec![i64::MAX, 1]).unwrap();
        assert_eq!(
            err(&[3], &p),
            format!(
                "Encountered overflow when padding dimension 0 of size 3 with {} and 1",
                i64::MAX
            )
        );
    }

    #[test]
    fn unpadded_dims_merge_into_the_one_before() {
        let d = |size, before, out| PadDim { size, before, out };
        let m = merge_unpadded(&[d(2, 1, 4), d(3, 0, 3), d(5, 0, 5)]).unwrap();
        assert_eq!(&m[..], &[d(30, 15, 60)]);
        let m = merge_unpadded(&[d(2, 0, 2), d(3, 2, 6)]).unwrap();
        assert_eq!(&m[..], &[d(2, 0, 2), d(3, 2, 6)]);
        // A leading unpadded dimension has nothing to merge into.
        let m = merge_unpadded(&[d(2, 0, 2), d(3, 0, 3)]).unwrap();
        assert_eq!(&m[..], &[d(6, 0, 6)]);
        assert!(merge_unpadded(&[]).unwrap().is_empty());
        assert!(merge_unpadded(&[d(usize::MAX, 1, usize::MAX), d(2, 0, 2)]).is_err());
    }
}

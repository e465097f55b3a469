//! `Pad`'s, `PadV2`'s and `MirrorPad`'s checks of `paddings` (TF's
//! `PadOp` and `MirrorPadOp`, with their messages), the output's shape, the
//! padding simplified (dimensions without padding merged) and the mirror
//! modes, shared by the CPU and GPU kernels.
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

/// How one op words `paddings`' complaints: TF's `PadOp` and
/// `MirrorPadOp` differ by a character or two.
struct Wording {
    /// Between the two shapes of the rank mismatch message.
    rank_separator: &'static str,
    /// Starts the message about a negative padding.
    negative: &'static str,
}

/// `Pad`'s and `PadV2`'s wording.
const PAD: Wording = Wording {
    rank_separator: " ",
    negative: "Paddings must be non-negative",
};

/// `MirrorPad`'s wording.
const MIRROR_PAD: Wording = Wording {
    rank_separator: ", ",
    negative: "paddings must be non-negative",
};

/// Checks `paddings` (a host integer tensor of shape `[rank, 2]`) against
/// an input of shape `input`, with TF's messages (`Pad` and `PadV2`).
pub fn padding(input: &TensorShape, paddings: &Tensor) -> Result<Padding, KernelError> {
    checked_padding(input, paddings, &PAD, |_, _, _, _| Ok(()))
}

/// `PadV2`'s check of `constant_values` (after the paddings' checks, as
/// TF's `PadOp` orders them): it must be a scalar.
pub fn check_constant_values(constant_values: &TensorShape) -> Result<(), KernelError> {
    registry_core::kernel_ensure!(
        constant_values.rank() == 0,
        "constant_values must be a scalar. Found: {constant_values}"
    );
    Ok(())
}

/// `MirrorPad`'s `mode` (TF's `MirrorPadMode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MirrorMode {
    /// The border is not repeated: `[1, 2, 3]` padded by 2 before is
    /// `[3, 2, 1, 2, 3]`.
    Reflect,
    /// The border is repeated: `[1, 2, 3]` padded by 2 before is
    /// `[2, 1, 1, 2, 3]`.
    Symmetric,
}

impl MirrorMode {
    /// Parses the `mode` attr.
    ///
    /// ```
    /// use opreg_op_logic::pad::MirrorMode;
    /// assert_eq!(MirrorMode::parse("REFLECT").unwrap(), MirrorMode::Reflect);
    /// assert!(MirrorMode::parse("CONSTANT").is_err());
    /// ```
    pub fn parse(mode: &str) -> Result<Self, KernelError> {
        match mode {
            "REFLECT" => Ok(Self::Reflect),
            "SYMMETRIC" => Ok(Self::Symmetric),
            _ => Err(KernelError::invalid_argument(
                "mode must be either REFLECT or SYMMETRIC.",
            )),
        }
    }

    /// TF's `offset_`: 1 when the border is not repeated (`REFLECT`), 0
    /// when it is (`SYMMETRIC`).
    pub fn offset(self) -> usize {
        match self {
            Self::Reflect => 1,
            Self::Symmetric => 0,
        }
    }

    /// The input index that output index `out` of a dimension mirrors
    /// (`out` counted from the start of the padded dimension).
    ///
    /// ```
    /// use opreg_op_logic::pad::{MirrorMode, PadDim};
    /// let d = PadDim { size: 3, before: 2, out: 7 };
    /// let reflect: Vec<_> = (0..7).map(|o| MirrorMode::Reflect.source(&d, o)).collect();
    /// assert_eq!(reflect, [2, 1, 0, 1, 2, 1, 0]);
    /// let symmetric: Vec<_> = (0..7).map(|o| MirrorMode::Symmetric.source(&d, o)).collect();
    /// assert_eq!(symmetric, [1, 0, 0, 1, 2, 2, 1]);
    /// ```
    pub fn source(self, dim: &PadDim, out: usize) -> usize {
        let offset = self.offset();
        if out < dim.before {
            // Mirrored about the first element (REFLECT) or before it.
            dim.before - out - 1 + offset
        } else if out < dim.before + dim.size {
            out - dim.before
        } else {
            // Mirrored about the last element (REFLECT) or after it.
            let past = out - dim.before - dim.size;
            dim.size - 1 - past - offset
        }
    }
}

/// The most dimensions `MirrorPad` pads (TF's `kMaxDims`).
pub const MIRROR_PAD_MAX_RANK: usize = 5;

/// `MirrorPad`'s checks (TF's `MirrorPadOp`, its messages, in its order):
/// a rank of at most 5, `paddings` of shape `[rank, 2]`, each padding
/// non-negative and less than its dimension (`REFLECT`) or at most it
/// (`SYMMETRIC`).
pub fn mirror_padding(
    input: &TensorShape,
    paddings: &Tensor,
    mode: MirrorMode,
) -> Result<Padding, KernelError> {
    let rank = input.rank();
    if rank > MIRROR_PAD_MAX_RANK {
        return Err(KernelError::unimplemented(format!(
            "inputs rank not in [0,{MIRROR_PAD_MAX_RANK}]: {rank}"
        )));
    }
    checked_padding(input, paddings, &MIRROR_PAD, |_, before, after, size| {
        let (b, a) = (before.unsigned_abs(), after.unsigned_abs());
        let size64 = u64::try_from(size).unwrap_or(u64::MAX);
        match mode {
            MirrorMode::Symmetric if b > size64 || a > size64 => {
                Err(KernelError::invalid_argument(format!(
                    "paddings must be no greater than the dimension size: {before}, {after} \
                     greater than {size}"
                )))
            }
            MirrorMode::Reflect if b >= size64 || a >= size64 => {
                Err(KernelError::invalid_argument(format!(
                    "paddings must be less than the dimension size: {before}, {after} not less \
                     than {size}"
                )))
            }
            _ => Ok(()),
        }
    })
}

/// The checks `Pad`, `PadV2` and `MirrorPad` share, in TF's order, with
/// `extra(dimension, before, after, size)` run on each dimension once its
/// paddings are known to be non-negative.
fn checked_padding(
    input: &TensorShape,
    paddings: &Tensor,
    wording: &Wording,
    extra: impl Fn(usize, i64, i64, usize) -> Result<(), KernelError>,
) -> Result<Padding, KernelError> {
    let pshape = paddings.shape();
    registry_core::kernel_ensure!(
        pshape.rank() == 2 && pshape.dims()[1] == 2,
        "paddings must be a matrix with 2 columns: {pshape}"
    );
    let rank = input.rank();
    registry_core::kernel_ensure!(
        rank == pshape.dims()[0],
        "The first dimension of paddings must be the rank of inputs{pshape}{}{input}",
        wording.rank_separator
    );
    let values = int_values(paddings)?;
    let mut dims: SmallVec<[PadDim; 8]> = SmallVec::with_capacity(rank);
    for (d, (pair, &size)) in values.chunks_exact(2).zip(input.dims()).enumerate() {
        let (before, after) = (pair[0], pair[1]);
        let (Some(b), Some(a)) = (to_dim(before), to_dim(after)) else {
            return Err(KernelError::invalid_argument(format!(
                "{}: {before} {after}",
                wording.negative
            )));
        };
        extra(d, before, after, size)?;
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
    fn mirror_paddings_are_checked_as_tf_does() {
        let m = |dims: &[usize], p: &Tensor, mode| {
            mirror_padding(&shape(dims), p, mode)
                .map(|p| p.out_shape.dims().to_vec())
                .map_err(|e| e.to_string())
        };
        let p = Tensor::from_vec([2, 2], vec![2i32, 2, 1, 0]).unwrap();
        assert_eq!(m(&[3, 4], &p, MirrorMode::Reflect), Ok(vec![7, 5]));
        let p = Tensor::from_vec([2, 2], vec![3i64, 0, 0, 0]).unwrap();
        assert_eq!(
            m(&[3, 4], &p, MirrorMode::Reflect).unwrap_err(),
            "paddings must be less than the dimension size: 3, 0 not less than 3"
        );
        assert_eq!(m(&[3, 4], &p, MirrorMode::Symmetric), Ok(vec![6, 4]));
        let p = Tensor::from_vec([2, 2], vec![0i32, 4, 0, 0]).unwrap();
        assert_eq!(
            m(&[3, 4], &p, MirrorMode::Symmetric).unwrap_err(),
            "paddings must be no greater than the dimension size: 0, 4 greater than 3"
        );
        let p = Tensor::from_vec([2, 2], vec![-1i32, 0, 0, 0]).unwrap();
        assert_eq!(
            m(&[3, 4], &p, MirrorMode::Reflect).unwrap_err(),
            "paddings must be non-negative: -1 0"
        );
        let p = Tensor::from_vec([1, 2], vec![0i32, 0]).unwrap();
        assert_eq!(
            m(&[3, 4], &p, MirrorMode::Reflect).unwrap_err(),
            "The first dimension of paddings must be the rank of inputs[1,2], [3,4]"
        );
        let p = Tensor::from_vec([6, 2], vec![0i32; 12]).unwrap();
        assert_eq!(
            m(&[1; 6], &p, MirrorMode::Reflect).unwrap_err(),
            "inputs rank not in [0,5]: 6"
        );
        assert!(MirrorMode::parse("CONSTANT").is_err());
        assert_eq!(
            check_constant_values(&shape(&[2])).unwrap_err().to_string(),
            "constant_values must be a scalar. Found: [2]"
        );
        assert!(check_constant_values(&shape(&[])).is_ok());
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

//! TensorFlow's broadcasting (`BCast`) for the GPU kernels, planned on the
//! host: the output shape, the problem reduced to the fewest dimensions and
//! each operand's element strides (0 where it is repeated), ready to pass
//! to a kernel as [`ShapeArg`]s.
//!
//! Shapes are aligned at their last dimension; in each dimension the sizes
//! must be equal or 1. Output dimensions of size 1 are dropped and
//! neighbouring dimensions in which every operand either repeats or not in
//! the same way are merged, so `[4,1,3] + [3]` becomes `[4,3]` with strides
//! `[3,1]` and `[0,1]`. A merged problem of more than
//! [`MAX_RANK`] dimensions is refused ([`BroadcastPlan::shape_args`]).
//!
//! ```
//! use kernels_cuda::math::broadcast::BroadcastPlan;
//!
//! let b = BroadcastPlan::new([&[4, 1, 3][..], &[3][..]]).unwrap();
//! assert_eq!(b.out_shape().dims(), &[4, 1, 3]);
//! assert_eq!(b.dims(), &[4, 3]);
//! assert_eq!(b.strides(0), &[3, 1]);
//! assert_eq!(b.strides(1), &[0, 1]);
//! assert!(BroadcastPlan::new([&[2, 3][..], &[4][..]]).is_err());
//! ```

use registry_core::kernel::KernelError;
use registry_core::tensor::{TensorError, TensorShape};

use crate::gpu::{MAX_RANK, ShapeArg};

/// Why operands cannot be broadcast together.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BroadcastError {
    /// Some dimension has two sizes that differ and are not 1.
    Incompatible,
    /// The broadcast shape has too many elements.
    TooLarge(TensorError),
}

impl std::fmt::Display for BroadcastError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Incompatible => f.write_str("incompatible shapes"),
            Self::TooLarge(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for BroadcastError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Incompatible => None,
            Self::TooLarge(e) => Some(e),
        }
    }
}

impl From<TensorError> for BroadcastError {
    fn from(e: TensorError) -> Self {
        Self::TooLarge(e)
    }
}

/// `K` shapes broadcast together (see the [module](self) docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BroadcastPlan<const K: usize> {
    out_shape: TensorShape,
    dims: Vec<usize>,
    strides: [Vec<usize>; K],
    in_lens: [usize; K],
}

impl<const K: usize> BroadcastPlan<K> {
    /// Broadcasts `shapes` with TF's rules; errors when two sizes of a
    /// dimension differ and neither is 1, or when the result overflows.
    pub fn new(shapes: [&[usize]; K]) -> Result<Self, BroadcastError> {
        let rank = shapes.iter().map(|s| s.len()).max().unwrap_or(0);
        // The size of operand `k` in aligned dimension `d` (1 where absent).
        let size = |k: usize, d: usize| -> usize {
            let s = shapes[k];
            let pad = rank - s.len();
            if d < pad { 1 } else { s[d - pad] }
        };
        let mut out_dims = Vec::with_capacity(rank);
        for d in 0..rank {
            let mut out = 1;
            for k in 0..K {
                let v = size(k, d);
                if v != 1 {
                    if out == 1 {
                        out = v;
                    } else if out != v {
                        return Err(BroadcastError::Incompatible);
                    }
                }
            }
            out_dims.push(out);
        }
        let out_shape = TensorShape::new(&out_dims)?;

        // Drop size-1 output dims; merge runs with the same repeat pattern.
        let mut dims: Vec<usize> = Vec::new();
        let mut patterns: Vec<[bool; K]> = Vec::new();
        for (d, &out) in out_dims.iter().enumerate() {
            if out == 1 {
                continue;
            }
            let pattern: [bool; K] = std::array::from_fn(|k| size(k, d) == 1);
            match (dims.last_mut(), patterns.last()) {
                (Some(last), Some(p)) if *p == pattern => *last = last.saturating_mul(out),
                _ => {
                    dims.push(out);
                    patterns.push(pattern);
                }
            }
        }
        if dims.is_empty() {
            // One element (or none: a zero dim is kept above, as it is not 1).
            dims.push(1);
            patterns.push([false; K]);
        }
        let strides: [Vec<usize>; K] = std::array::from_fn(|k| {
            let mut s = vec![0; dims.len()];
            let mut acc = 1usize;
            for d in (0..dims.len()).rev() {
                if !patterns[d][k] {
                    s[d] = acc;
                    acc = acc.saturating_mul(dims[d]);
                }
            }
            s
        });
        let in_lens: [usize; K] =
            std::array::from_fn(|k| shapes[k].iter().fold(1usize, |a, &d| a.saturating_mul(d)));
        Ok(Self {
            out_shape,
            dims,
            strides,
            in_lens,
        })
    }

    /// The full (unreduced) output shape.
    pub fn out_shape(&self) -> &TensorShape {
        &self.out_shape
    }

    /// The number of output elements.
    pub fn out_len(&self) -> usize {
        self.out_shape.num_elements()
    }

    /// The reduced output dimensions, outermost first (never empty).
    pub fn dims(&self) -> &[usize] {
        &self.dims
    }

    /// Operand `k`'s element strides over [`dims`](Self::dims) (0 where it
    /// is repeated).
    pub fn strides(&self, k: usize) -> &[usize] {
        &self.strides[k]
    }

    /// Operand `k`'s element count.
    pub fn in_len(&self, k: usize) -> usize {
        self.in_lens[k]
    }

    /// Whether operand `k` maps one-to-one onto the output (its element
    /// count is the output's, so its strides are the output's own): it may
    /// be the output buffer, updated in place.
    pub fn is_identity(&self, k: usize) -> bool {
        self.in_lens[k] == self.out_len()
    }

    /// Whether every operand maps one-to-one onto the output (a flat loop).
    pub fn all_identity(&self) -> bool {
        (0..K).all(|k| self.is_identity(k))
    }

    /// Whether operand `k` is a single element (repeated everywhere).
    pub fn is_scalar(&self, k: usize) -> bool {
        self.in_lens[k] == 1
    }

    /// The reduced dimensions and each operand's strides as kernel
    /// arguments; `Unimplemented` (naming `what`, the operands' shapes)
    /// when more than [`MAX_RANK`] dimensions remain after merging.
    pub fn shape_args(&self, what: &str) -> Result<(ShapeArg, [ShapeArg; K]), KernelError> {
        let too_many = || {
            KernelError::unimplemented(format!(
                "Broadcast between {what} is not supported yet: the GPU kernels handle at most \
                 {MAX_RANK} dimensions after merging, and this needs {}",
                self.dims.len()
            ))
        };
        let dims = ShapeArg::from_dims(&self.dims).ok_or_else(too_many)?;
        let mut strides = [dims; K];
        for (k, s) in strides.iter_mut().enumerate() {
            *s = ShapeArg::from_dims(&self.strides[k]).ok_or_else(too_many)?;
        }
        Ok((dims, strides))
    }
}

impl BroadcastPlan<2> {
    /// The plan of a binary op, with TF's message for incompatible shapes:
    /// `Incompatible shapes: [2,3] vs. [4]`.
    pub fn binary(x: &TensorShape, y: &TensorShape) -> Result<Self, KernelError> {
        Self::new([x.dims(), y.dims()]).map_err(|e| match e {
            BroadcastError::Incompatible => {
                KernelError::invalid_argument(format!("Incompatible shapes: {x} vs. {y}"))
            }
            BroadcastError::TooLarge(t) => KernelError::from(t),
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
    fn merges_and_strides() {
        let b = BroadcastPlan::new([&[2, 3, 4][..], &[2, 3, 4][..]]).unwrap();
        assert_eq!(b.dims(), &[24]);
        assert_eq!(b.strides(0), &[1]);
        assert!(b.all_identity());

        let b = BroadcastPlan::new([&[2, 1, 3][..], &[1, 4, 1][..], &[3][..]]).unwrap();
        assert_eq!(b.out_shape().dims(), &[2, 4, 3]);
        assert_eq!(b.dims(), &[2, 4, 3]);
        assert_eq!(b.strides(0), &[3, 0, 1]);
        assert_eq!(b.strides(1), &[0, 1, 0]);
        assert_eq!(b.strides(2), &[0, 0, 1]);
        assert!(!b.is_identity(0));

        // Row vector over a matrix; a size-1 dim in the middle is dropped.
        let b = BroadcastPlan::new([&[5, 1, 7][..], &[7][..]]).unwrap();
        assert_eq!(b.dims(), &[5, 7]);
        assert_eq!(b.strides(0), &[7, 1]);
        assert_eq!(b.strides(1), &[0, 1]);
        assert!(b.is_identity(0) && !b.is_identity(1));

        // Scalars.
        let b = BroadcastPlan::new([&[][..], &[3, 2][..]]).unwrap();
        assert_eq!(b.dims(), &[6]);
        assert_eq!(b.strides(0), &[0]);
        assert!(b.is_scalar(0) && b.is_identity(1));
        let b = BroadcastPlan::new([&[][..], &[1, 1][..]]).unwrap();
        assert_eq!(b.out_shape().dims(), &[1, 1]);
        assert_eq!(b.dims(), &[1]);
        assert!(b.all_identity());
    }

    #[test]
    fn same_count_different_shapes_is_identity() {
        let b = BroadcastPlan::new([&[1, 3][..], &[3][..]]).unwrap();
        assert_eq!(b.out_shape().dims(), &[1, 3]);
        assert!(b.all_identity());
    }

    #[test]
    fn empty_outputs() {
        let b = BroadcastPlan::new([&[0, 3][..], &[1, 3][..]]).unwrap();
        assert_eq!(b.out_shape().dims(), &[0, 3]);
        assert_eq!(b.out_len(), 0);
        let b = BroadcastPlan::new([&[0][..], &[1][..]]).unwrap();
        assert_eq!(b.out_len(), 0);
        assert!(BroadcastPlan::new([&[0][..], &[2][..]]).is_err());
    }

    #[test]
    fn incompatible_shapes_have_tf_message() {
        let e = BroadcastPlan::binary(&shape(&[2, 3]), &shape(&[4])).unwrap_err();
        assert_eq!(e.to_string(), "Incompatible shapes: [2,3] vs. [4]");
        assert!(BroadcastPlan::new([&[2, 3][..], &[3, 3][..]]).is_err());
    }

    #[test]
    fn rank_limit_after_merging() {
        // Alternating repeat patterns cannot merge: 10 dims stay 10.
        let x = [2, 1, 2, 1, 2, 1, 2, 1, 2, 1];
        let y = [1, 2, 1, 2, 1, 2, 1, 2, 1, 2];
        let b = BroadcastPlan::new([&x[..], &y[..]]).unwrap();
        assert_eq!(b.dims().len(), 10);
        let e = b.shape_args("[..] and [..]").unwrap_err();
        assert!(e.to_string().contains("at most 8 dimensions"), "{e}");
        // High rank that merges down is fine.
        let x = [2, 1, 1, 1, 1, 1, 1, 1, 1, 3];
        let b = BroadcastPlan::new([&x[..], &[1, 3][..]]).unwrap();
        let (dims, [sx, sy]) = b.shape_args("x").unwrap();
        assert_eq!((dims.rank, &dims.d[..2]), (2, &[2, 3][..]));
        assert_eq!(&sx.d[..2], &[3, 1]);
        assert_eq!(&sy.d[..2], &[0, 1]);
    }
}

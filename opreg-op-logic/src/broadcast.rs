//! TensorFlow's broadcasting rules (`BCast` / `BCastList<N>`) for `K`
//! operands of any rank, reduced to the fewest dimensions.
//!
//! Shapes are aligned at their last dimension; in each dimension the sizes
//! must be equal or 1 (a 1 is repeated). Output dimensions of size 1 are
//! dropped and neighbouring dimensions in which every operand either
//! broadcasts or not in the same way are merged, as TF's `BCast` does, so
//! `[4,1,3] + [3]` becomes a 2-d problem `[4,3]` with strides `[3,1]` and
//! `[0,1]`. Iterating the reduced problem (`kernels-cpu`'s `elementwise` module)
//! needs no per-element index arithmetic.
//!
//! ```
//! use opreg_op_logic::broadcast::Broadcast;
//!
//! let b = Broadcast::new([&[4, 1, 3][..], &[3][..]]).unwrap();
//! assert_eq!(b.out_shape().dims(), &[4, 1, 3]);
//! assert_eq!(b.dims(), &[4, 3]);
//! assert_eq!(b.strides(0), &[3, 1]);
//! assert_eq!(b.strides(1), &[0, 1]);
//! assert!(Broadcast::new([&[2, 3][..], &[4][..]]).is_err());
//! ```

use registry_core::kernel::KernelError;
use registry_core::tensor::{TensorError, TensorShape};
use smallvec::SmallVec;

/// A small list of dimension sizes or strides (inline up to 6).
pub type Dims = SmallVec<[usize; 6]>;

/// Why operands cannot be broadcast together.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BroadcastError {
    /// Some dimension has two sizes that are different and not 1.
    Incompatible,
    /// The broadcast shape has too many elements.
    TooLarge(TensorError),
}

/// `K` shapes broadcast together: the output shape and, for the reduced
/// problem, the output dimensions and each operand's element strides
/// (0 where the operand is repeated).
#[derive(Debug, Clone)]
pub struct Broadcast<const K: usize> {
    out_shape: TensorShape,
    dims: Dims,
    strides: [Dims; K],
    in_lens: [usize; K],
}

impl<const K: usize> Broadcast<K> {
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
        let mut out_dims: Dims = SmallVec::with_capacity(rank);
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
        let out_shape = TensorShape::new(&out_dims).map_err(BroadcastError::TooLarge)?;

        // Reduce: drop size-1 output dims, merge runs of equal patterns.
        let mut dims: Dims = SmallVec::new();
        let mut patterns: SmallVec<[[bool; K]; 6]> = SmallVec::new();
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
            // A single element: every operand has one element.
            dims.push(1);
            patterns.push([false; K]);
        }
        let strides: [Dims; K] = std::array::from_fn(|k| {
            let mut s: Dims = SmallVec::from_elem(0, dims.len());
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

    /// Whether operand `k` advances along the innermost reduced dimension
    /// (else it is one value repeated along it).
    pub fn inner_contiguous(&self, k: usize) -> bool {
        self.strides[k].last().is_some_and(|&s| s != 0)
    }

    /// Whether operand `k` maps one-to-one onto the output (same element
    /// count, so no repetition): it may be forwarded to the output and
    /// updated in place.
    pub fn is_identity(&self, k: usize) -> bool {
        self.in_lens[k] == self.out_len()
    }
}

impl Broadcast<2> {
    /// [`new`](Self::new) for two operands, with TF's error:
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

    #[test]
    fn reduces_like_bcast() {
        let b = Broadcast::new([&[2, 3, 4][..], &[2, 3, 4][..]]).unwrap();
        assert_eq!(b.dims(), &[24]);
        let b = Broadcast::new([&[1][..], &[5, 6][..]]).unwrap();
        assert_eq!(b.dims(), &[30]);
        assert_eq!(b.strides(0), &[0]);
        let b = Broadcast::new([&[4, 1][..], &[1, 5][..]]).unwrap();
        assert_eq!(b.dims(), &[4, 5]);
        assert_eq!(b.strides(0), &[1, 0]);
        assert_eq!(b.strides(1), &[0, 1]);
        let b = Broadcast::new([&[][..], &[][..]]).unwrap();
        assert_eq!(b.dims(), &[1]);
        assert_eq!(b.out_shape().rank(), 0);
        let b = Broadcast::new([&[0, 3][..], &[1, 3][..]]).unwrap();
        assert_eq!(b.out_len(), 0);
        assert_eq!(
            Broadcast::new([&[0][..], &[2][..]]).unwrap_err(),
            BroadcastError::Incompatible
        );
        let b = Broadcast::new([&[2, 1, 3][..], &[1, 4, 1][..], &[3][..]]).unwrap();
        assert_eq!(b.dims(), &[2, 4, 3]);
        assert_eq!(b.strides(0), &[3, 0, 1]);
        assert_eq!(b.strides(1), &[0, 1, 0]);
        assert_eq!(b.strides(2), &[0, 0, 1]);
    }
}

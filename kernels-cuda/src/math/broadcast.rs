//! TensorFlow's broadcasting (`BCast`) for the GPU kernels: the plan is
//! `kernels-cpu`'s [`BroadcastPlan`] (output shape, the problem reduced to the
//! fewest dimensions, each operand's element strides, 0 where it is
//! repeated); [`GpuBroadcast`] adds what a GPU launch needs, the plan as
//! [`ShapeArg`]s, refused past [`MAX_RANK`] merged dimensions.
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

use cudarc::driver::CudaFunction;
pub use opreg_op_logic::broadcast::{Broadcast as BroadcastPlan, BroadcastError};
use registry_core::kernel::KernelError;
#[cfg(test)]
use registry_core::tensor::TensorShape;

use opreg_cuda::{MAX_RANK, ShapeArg};

/// The broadcasting entry for an output of `n` elements: `narrow`, which
/// indexes in 32 bits, below 2^31 elements, else `wide`.
pub(crate) fn by_index_width<'f>(
    n: usize,
    narrow: &'f CudaFunction,
    wide: &'f CudaFunction,
) -> &'f CudaFunction {
    if n <= i32::MAX as usize { narrow } else { wide }
}

/// What the GPU kernels ask of a [`BroadcastPlan`] beyond the CPU's.
pub trait GpuBroadcast<const K: usize> {
    /// Whether every operand maps one-to-one onto the output (a flat loop).
    fn all_identity(&self) -> bool;

    /// Whether operand `k` is a single element (repeated everywhere).
    fn is_scalar(&self, k: usize) -> bool;

    /// The reduced dimensions and each operand's strides as kernel
    /// arguments; `Unimplemented` (naming `what`, the operands' shapes)
    /// when more than [`MAX_RANK`] dimensions remain after merging.
    fn shape_args(&self, what: &str) -> Result<(ShapeArg, [ShapeArg; K]), KernelError>;
}

impl<const K: usize> GpuBroadcast<K> for BroadcastPlan<K> {
    fn all_identity(&self) -> bool {
        (0..K).all(|k| self.is_identity(k))
    }

    fn is_scalar(&self, k: usize) -> bool {
        self.in_len(k) == 1
    }

    fn shape_args(&self, what: &str) -> Result<(ShapeArg, [ShapeArg; K]), KernelError> {
        let too_many = || {
            KernelError::unimplemented(format!(
                "Broadcast between {what} is not supported yet: the GPU kernels handle at most \
                 {MAX_RANK} dimensions after merging, and this needs {}",
                self.dims().len()
            ))
        };
        let dims = ShapeArg::from_dims(self.dims()).ok_or_else(too_many)?;
        let mut strides = [dims; K];
        for (k, s) in strides.iter_mut().enumerate() {
            *s = ShapeArg::from_dims(self.strides(k)).ok_or_else(too_many)?;
        }
        Ok((dims, strides))
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

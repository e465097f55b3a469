//! `OneHot`'s checks of `axis`, `depth`, `on_value` and `off_value` (TF's
//! `OneHotOp`, with its messages) and its geometry, shared by the CPU and
//! GPU kernels: the output is `[prefix, depth, suffix]`, where `indices` is
//! `[prefix, suffix]` split at `axis`.
//!
//! ```
//! use opreg_op_logic::one_hot::one_hot_shape;
//! use registry_core::tensor::{Tensor, TensorShape};
//!
//! let scalar = TensorShape::scalar();
//! let indices = TensorShape::new([2, 3]).unwrap();
//! let s = one_hot_shape(&indices, &Tensor::scalar(4i32), &scalar, &scalar, 1).unwrap();
//! assert_eq!((s.out_shape.dims(), s.depth, s.suffix), (&[2, 4, 3][..], 4, 3));
//! ```

use registry_core::kernel::KernelError;
use registry_core::tensor::{Tensor, TensorShape};
use smallvec::SmallVec;

use super::index::{Dims, dim_i64, shape_of};

/// A checked `OneHot`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OneHotShape {
    /// The output's shape: `indices`' with `depth` inserted at the axis.
    pub out_shape: TensorShape,
    /// The one-hot dimension's size.
    pub depth: usize,
    /// Product of the indices' dimensions from the axis on.
    pub suffix: usize,
}

/// Checks a `OneHot` of indices of shape `indices`, the int32 host scalar
/// `depth`, on/off values of shapes `on`/`off`, and the `axis` attr.
pub fn one_hot_shape(
    indices: &TensorShape,
    depth: &Tensor,
    on: &TensorShape,
    off: &TensorShape,
    axis: i64,
) -> Result<OneHotShape, KernelError> {
    let i_rank = indices.rank();
    let out_rank = dim_i64(i_rank + 1);
    registry_core::kernel_ensure!(
        axis == -1 || (0..out_rank).contains(&axis),
        "Expected axis to be -1 or between [0, {out_rank}).  But received: {axis}"
    );
    registry_core::kernel_ensure!(
        depth.shape().rank() == 0,
        "depth must be a scalar, but got: {}",
        depth.shape()
    );
    registry_core::kernel_ensure!(on.rank() == 0, "on_value must be a scalar, but got: {on}");
    registry_core::kernel_ensure!(
        off.rank() == 0,
        "off_value must be a scalar, but got: {off}"
    );
    let axis = usize::try_from(axis).unwrap_or(i_rank);
    let depth_v = depth.as_slice::<i32>()?.first().copied().unwrap_or(0);
    registry_core::kernel_ensure!(depth_v >= 0, "depth must be non-negative, got: {depth_v}");
    let depth_n = usize::try_from(depth_v).unwrap_or(0);
    registry_core::kernel_ensure!(
        indices
            .num_elements()
            .checked_mul(depth_n)
            .is_some_and(|n| i64::try_from(n).is_ok()),
        "OneHot result would have shape {indices} + [{depth_v}], which exceeds 2**63 - 1 elements"
    );
    let mut out_dims: Dims = SmallVec::from_slice(indices.dims());
    out_dims.insert(axis, depth_n);
    let out_shape = shape_of(&out_dims)?;
    let prefix: usize = indices.dims()[..axis].iter().product();
    let suffix = indices.num_elements().checked_div(prefix).unwrap_or(0);
    Ok(OneHotShape {
        out_shape,
        depth: depth_n,
        suffix,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_hot_geometry() {
        let scalar = TensorShape::scalar();
        let idx = TensorShape::new([2, 3]).unwrap();
        let depth = Tensor::scalar(4i32);
        let s = one_hot_shape(&idx, &depth, &scalar, &scalar, -1).unwrap();
        assert_eq!(
            (s.out_shape.dims(), s.depth, s.suffix),
            (&[2, 3, 4][..], 4, 1)
        );
        let s = one_hot_shape(&idx, &depth, &scalar, &scalar, 1).unwrap();
        assert_eq!(
            (s.out_shape.dims(), s.depth, s.suffix),
            (&[2, 4, 3][..], 4, 3)
        );
        let s = one_hot_shape(&idx, &depth, &scalar, &scalar, 0).unwrap();
        assert_eq!((s.out_shape.dims(), s.suffix), (&[4, 2, 3][..], 6));
        // An empty prefix: no division by zero.
        let empty = TensorShape::new([0, 3]).unwrap();
        let s = one_hot_shape(&empty, &depth, &scalar, &scalar, 1).unwrap();
        assert_eq!((s.out_shape.dims(), s.suffix), (&[0, 4, 3][..], 0));
    }

    #[test]
    fn errors_have_tf_messages() {
        let scalar = TensorShape::scalar();
        let idx = TensorShape::new([2, 3]).unwrap();
        let depth = Tensor::scalar(4i32);
        let err = |idx: &TensorShape, depth: &Tensor, on: &TensorShape, axis| {
            one_hot_shape(idx, depth, on, &scalar, axis)
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            err(&idx, &Tensor::scalar(-1i32), &scalar, -1),
            "depth must be non-negative, got: -1"
        );
        assert_eq!(
            err(&idx, &depth, &idx, -1),
            "on_value must be a scalar, but got: [2,3]"
        );
        assert_eq!(
            err(&idx, &depth, &scalar, 3),
            "Expected axis to be -1 or between [0, 3).  But received: 3"
        );
        let depth_v = Tensor::from_vec([1], vec![4i32]).unwrap();
        assert_eq!(
            err(&idx, &depth_v, &scalar, -1),
            "depth must be a scalar, but got: [1]"
        );
        assert_eq!(
            one_hot_shape(&idx, &depth, &scalar, &idx, -1)
                .unwrap_err()
                .to_string(),
            "off_value must be a scalar, but got: [2,3]"
        );
        let huge = TensorShape::new([1 << 40]).unwrap();
        assert_eq!(
            err(&huge, &Tensor::scalar(1i32 << 30), &scalar, -1),
            "OneHot result would have shape [1099511627776] + [1073741824], which exceeds \
             2**63 - 1 elements"
        );
    }
}

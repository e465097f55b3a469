//! `Split`'s, `SplitV`'s and `Unpack`'s checks (TF's `SplitOp`, `SplitVOp`
//! and `UnpackOp`, with their messages, in their order) and the parts they
//! cut, shared by the CPU and GPU kernels.
//!
//! Every output is a run of the input along one axis: viewing the input as
//! `[outer, dim, inner]` (dimensions before, at and after the axis), output
//! `i` is `[outer, sizes[i], inner]` starting at `offsets[i]` along `dim`.
//!
//! ```
//! use opreg_op_logic::split::split_parts;
//! use registry_core::tensor::{Tensor, TensorShape};
//!
//! let parts = split_parts(&Tensor::scalar(1i32), &TensorShape::new([2, 6]).unwrap(), 3).unwrap();
//! assert_eq!((parts.outer, parts.inner, &parts.sizes[..]), (2, 1, &[2, 2, 2][..]));
//! assert_eq!(parts.shapes[0].dims(), &[2, 2]);
//! ```

use registry_core::kernel::KernelError;
use registry_core::tensor::{Tensor, TensorShape};

use super::index::{int_values, shape_of};

/// The parts a split cuts its input into.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SplitParts {
    /// The axis (made non-negative).
    pub axis: usize,
    /// The product of the dimensions before the axis.
    pub outer: usize,
    /// The product of the dimensions after the axis.
    pub inner: usize,
    /// The input's size along the axis.
    pub dim: usize,
    /// Each part's size along the axis.
    pub sizes: Vec<usize>,
    /// Each part's first index along the axis.
    pub offsets: Vec<usize>,
    /// Each output's shape.
    pub shapes: Vec<TensorShape>,
}

impl SplitParts {
    /// The parts of `sizes` along `axis` of `input`; with `drop_axis`, the
    /// outputs lose the axis (`Unpack`, whose sizes are all 1).
    fn new(
        input: &TensorShape,
        axis: usize,
        sizes: Vec<usize>,
        drop_axis: bool,
    ) -> Result<Self, KernelError> {
        let dims = input.dims();
        let outer = dims[..axis].iter().product();
        let inner = dims[axis + 1..].iter().product();
        let mut offsets = Vec::with_capacity(sizes.len());
        let mut shapes = Vec::with_capacity(sizes.len());
        let mut at = 0usize;
        for &size in &sizes {
            offsets.push(at);
            at = at.saturating_add(size);
            let mut out = dims.to_vec();
            if drop_axis {
                out.remove(axis);
            } else {
                out[axis] = size;
            }
            shapes.push(shape_of(&out)?);
        }
        Ok(Self {
            axis,
            outer,
            inner,
            dim: dims[axis],
            sizes,
            offsets,
            shapes,
        })
    }
}

/// The axis held by the one-element `split_dim` for an input of `rank`,
/// with TF's message ("-input rank(-3) <= split_dim < input rank (3), but
/// got 3").
fn split_axis(value: i64, rank: usize) -> Result<usize, KernelError> {
    let r = i64::try_from(rank).unwrap_or(i64::MAX);
    // TF reads split_dim as int32 and adds the rank to a negative one.
    let axis = if value < 0 { value + r } else { value };
    usize::try_from(axis)
        .ok()
        .filter(|&a| a < rank)
        .ok_or_else(|| {
            KernelError::invalid_argument(format!(
                "-input rank(-{rank}) <= split_dim < input rank ({rank}), but got {value}"
            ))
        })
}

/// `Split` of an input of shape `input` into `num_split` equal parts along
/// `split_dim` (a scalar).
pub fn split_parts(
    split_dim: &Tensor,
    input: &TensorShape,
    num_split: usize,
) -> Result<SplitParts, KernelError> {
    registry_core::kernel_ensure!(
        split_dim.shape().rank() == 0,
        "split_dim must be a scalar but has rank {}",
        split_dim.shape().rank()
    );
    let value = int_values(split_dim)?.first().copied().unwrap_or(0);
    let axis = split_axis(value, input.rank())?;
    registry_core::kernel_ensure!(
        num_split > 0,
        "Number of ways to split should be > 0, but got {num_split}"
    );
    let dim = input.dims()[axis];
    registry_core::kernel_ensure!(
        dim.is_multiple_of(num_split),
        "Number of ways to split should evenly divide the split dimension, but got split_dim \
         {axis} (size = {dim}) and num_split {num_split}"
    );
    SplitParts::new(input, axis, vec![dim / num_split; num_split], false)
}

/// `SplitV` of an input of shape `input` into `num_split` parts of
/// `size_splits` along `split_dim` (one element); one size may be -1.
pub fn split_v_parts(
    input: &TensorShape,
    size_splits: &Tensor,
    split_dim: &Tensor,
    num_split: usize,
) -> Result<SplitParts, KernelError> {
    registry_core::kernel_ensure!(
        split_dim.num_elements() == 1,
        "split_dim_tensor must have exactly one element."
    );
    let value = int_values(split_dim)?.first().copied().unwrap_or(0);
    registry_core::kernel_ensure!(
        size_splits.shape().rank() == 1 && size_splits.num_elements() == num_split,
        "size of the split_tensor must be 1-D and have the same elements as outputs got {} -D \
         and {} elements",
        size_splits.shape().rank(),
        size_splits.num_elements()
    );
    let mut sizes = int_values(size_splits)?;
    registry_core::kernel_ensure!(
        num_split > 0,
        "Number of ways to split should be > 0, but got {num_split}"
    );
    let axis = split_axis(value, input.rank())?;
    let dim = i64::try_from(input.dims()[axis]).unwrap_or(i64::MAX);
    if num_split == 1 {
        registry_core::kernel_ensure!(
            sizes[0] == dim,
            "If there is only one output, it must have the same size as the input. Input size: \
             {dim} output size: {}",
            sizes[0]
        );
    }
    let mut minus_one = None;
    let mut determined: i64 = 0;
    for (d, &size) in sizes.iter().enumerate() {
        if size == -1 {
            registry_core::kernel_ensure!(
                minus_one.is_none(),
                "There can only be one -1 in the input."
            );
            minus_one = Some(d);
        } else {
            determined = determined.saturating_add(size);
        }
    }
    registry_core::kernel_ensure!(
        (minus_one.is_none() && determined == dim) || (minus_one.is_some() && determined <= dim),
        "Determined shape must either match input shape along split_dim exactly if fully \
         specified, or be less than the size of the input along split_dim if not fully \
         specified.  Got: {determined}"
    );
    if let Some(d) = minus_one {
        sizes[d] = dim - determined;
    }
    let mut checked = Vec::with_capacity(sizes.len());
    for (i, &size) in sizes.iter().enumerate() {
        let size = usize::try_from(size).map_err(|_| {
            KernelError::invalid_argument(format!(
                "Split size at index {i} must be >= 0. Got: {size}"
            ))
        })?;
        checked.push(size);
    }
    SplitParts::new(input, axis, checked, false)
}

/// `Unpack` of an input of shape `input` into `num` parts along `axis`
/// (negative: from the end), each without the axis.
pub fn unpack_parts(input: &TensorShape, num: usize, axis: i64) -> Result<SplitParts, KernelError> {
    let rank = input.rank();
    let r = i64::try_from(rank).unwrap_or(i64::MAX);
    let canonical = if axis < 0 { axis + r } else { axis };
    let axis_ok = usize::try_from(canonical).ok().filter(|&a| a < rank);
    let Some(a) = axis_ok else {
        return Err(KernelError::invalid_argument(format!(
            "axis = {axis} not in [{}, {rank})",
            -r
        )));
    };
    registry_core::kernel_ensure!(
        input.dims()[a] == num,
        "Input shape axis {a} must equal {num}, got shape {input}"
    );
    SplitParts::new(input, a, vec![1; num], true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(d: &[usize]) -> TensorShape {
        TensorShape::new(d).unwrap()
    }

    fn v(values: &[i32]) -> Tensor {
        Tensor::from_vec([values.len()], values.to_vec()).unwrap()
    }

    #[test]
    fn split_checks_as_tf_does() {
        let x = shape(&[2, 3, 4]);
        let p = split_parts(&Tensor::scalar(-2i32), &x, 3).unwrap();
        assert_eq!((p.axis, p.outer, p.inner, p.dim), (1, 2, 4, 3));
        assert_eq!(
            (&p.sizes[..], &p.offsets[..]),
            (&[1, 1, 1][..], &[0, 1, 2][..])
        );
        let err = |d: Tensor, n| split_parts(&d, &x, n).unwrap_err().to_string();
        // Messages from TF 2.21.
        assert_eq!(
            err(Tensor::scalar(2i32), 3),
            "Number of ways to split should evenly divide the split dimension, but got \
             split_dim 2 (size = 4) and num_split 3"
        );
        assert_eq!(
            err(Tensor::scalar(3i32), 2),
            "-input rank(-3) <= split_dim < input rank (3), but got 3"
        );
        assert_eq!(
            err(Tensor::scalar(-4i32), 2),
            "-input rank(-3) <= split_dim < input rank (3), but got -4"
        );
        assert_eq!(err(v(&[1]), 3), "split_dim must be a scalar but has rank 1");
        assert_eq!(
            split_parts(&Tensor::scalar(0i32), &TensorShape::scalar(), 1)
                .unwrap_err()
                .to_string(),
            "-input rank(-0) <= split_dim < input rank (0), but got 0"
        );
    }

    #[test]
    fn split_v_checks_as_tf_does() {
        let x = shape(&[2, 3, 4]);
        let ok = |s: &[i32], d: i32| split_v_parts(&x, &v(s), &Tensor::scalar(d), s.len());
        let p = ok(&[1, -1, 1], 2).unwrap();
        assert_eq!(
            (&p.sizes[..], &p.offsets[..]),
            (&[1, 2, 1][..], &[0, 1, 3][..])
        );
        assert_eq!(p.shapes[1].dims(), &[2, 3, 2]);
        let p = ok(&[2, 0], 0).unwrap();
        assert_eq!(p.shapes[1].dims(), &[0, 3, 4]);
        let err = |s: &[i32], d: i32| ok(s, d).unwrap_err().to_string();
        assert_eq!(
            err(&[1, -1, -1], 2),
            "There can only be one -1 in the input."
        );
        let determined = "Determined shape must either match input shape along split_dim \
                          exactly if fully specified, or be less than the size of the input \
                          along split_dim if not fully specified.  Got: 5";
        assert_eq!(err(&[1, 2, 2], 2), determined);
        assert_eq!(err(&[1, 4, -1], 2), determined);
        assert_eq!(
            err(&[3], 2),
            "If there is only one output, it must have the same size as the input. Input \
             size: 4 output size: 3"
        );
        assert_eq!(
            err(&[1, 2, 1], 3),
            "-input rank(-3) <= split_dim < input rank (3), but got 3"
        );
        assert_eq!(
            err(&[5, -2, 1], 2),
            "Split size at index 1 must be >= 0. Got: -2"
        );
        assert_eq!(
            split_v_parts(&x, &v(&[1, 2]), &Tensor::scalar(2i32), 3)
                .unwrap_err()
                .to_string(),
            "size of the split_tensor must be 1-D and have the same elements as outputs got \
             1 -D and 2 elements"
        );
        assert_eq!(
            split_v_parts(&x, &v(&[1, 2, 1]), &v(&[2, 1]), 3)
                .unwrap_err()
                .to_string(),
            "split_dim_tensor must have exactly one element."
        );
        let int8 = Tensor::from_vec([3], vec![1i8, 2, 1]).unwrap();
        let p = split_v_parts(&x, &int8, &Tensor::scalar(-1i32), 3).unwrap();
        assert_eq!(&p.sizes[..], &[1, 2, 1]);
    }

    #[test]
    fn unpack_checks_as_tf_does() {
        let x = shape(&[2, 3, 4]);
        let p = unpack_parts(&x, 4, -1).unwrap();
        assert_eq!((p.axis, p.outer, p.inner), (2, 6, 1));
        assert_eq!(p.shapes[0].dims(), &[2, 3]);
        let err = |n, a| unpack_parts(&x, n, a).unwrap_err().to_string();
        assert_eq!(
            err(2, 1),
            "Input shape axis 1 must equal 2, got shape [2,3,4]"
        );
        assert_eq!(err(3, 3), "axis = 3 not in [-3, 3)");
        assert_eq!(
            unpack_parts(&TensorShape::scalar(), 1, 0)
                .unwrap_err()
                .to_string(),
            "axis = 0 not in [0, 0)"
        );
        assert!(
            unpack_parts(&shape(&[0, 2]), 0, 0)
                .unwrap()
                .sizes
                .is_empty()
        );
    }
}

//! `StridedSlice`'s host-side planning, shared by the CPU and GPU kernels:
//! a port of TF's `ValidateStridedSliceOp` (sparse spec → dense spec →
//! canonical begin/end per dimension → processing and final shapes), with
//! TF's messages. The processing shape is what the kernels copy; the final
//! shape only adds new axes of 1 and drops shrunk ones.
//!
//! ```
//! use opreg_op_logic::strided_slice::{Masks, validate};
//! use registry_core::tensor::Tensor;
//!
//! let v = |x: &[i32]| Tensor::from_vec([x.len()], x.to_vec()).unwrap();
//! // x[1:, ::2] of a [3, 5] input.
//! let spec = validate(&[3, 5], &v(&[1, 0]), &v(&[3, 5]), &v(&[1, 2]), Masks::default()).unwrap();
//! assert_eq!(&spec.final_shape[..], &[2, 3]);
//! // Starts at element 5 (row 1), steps of a row and of two elements.
//! let (base, steps) = spec.input_steps(&[3, 5]).unwrap();
//! assert_eq!((base, &steps[..]), (5, &[5, 2][..]));
//! ```

use registry_core::attr::NodeAttrs;
use registry_core::kernel::KernelError;
use registry_core::tensor::Tensor;
use smallvec::SmallVec;

use super::index::{Dims, Ints, dim_i64, int_values, is_vector, strides};

/// The slice masks (TF's int32 attrs, as bits).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Masks {
    /// `begin_mask`: bit `i` ignores `begin[i]` (the whole range's start).
    pub begin: u64,
    /// `end_mask`: bit `i` ignores `end[i]` (the whole range's end).
    pub end: u64,
    /// `ellipsis_mask`: bit `i` is an ellipsis (at most one bit set).
    pub ellipsis: u64,
    /// `new_axis_mask`: bit `i` inserts a dimension of 1.
    pub new_axis: u64,
    /// `shrink_axis_mask`: bit `i` takes one index and drops the dimension.
    pub shrink_axis: u64,
}

impl Masks {
    /// Reads the five `*_mask` attrs of a `StridedSlice` node. TF reads them
    /// as int32 (an error when out of range); their 32 bits are kept.
    pub fn from_attrs(attrs: &NodeAttrs<'_>) -> Result<Self, KernelError> {
        let mask = |name: &str| -> Result<u64, KernelError> {
            Ok(u64::from(attrs.get::<i32>(name)? as u32))
        };
        Ok(Self {
            begin: mask("begin_mask")?,
            end: mask("end_mask")?,
            ellipsis: mask("ellipsis_mask")?,
            new_axis: mask("new_axis_mask")?,
            shrink_axis: mask("shrink_axis_mask")?,
        })
    }
}

/// A validated strided slice of an input (TF's outputs of
/// `ValidateStridedSliceOp`).
#[derive(Debug, Clone, PartialEq)]
pub struct SliceSpec {
    /// Canonical first index per input dimension.
    pub begin: Ints,
    /// Canonical end per input dimension.
    pub end: Ints,
    /// Stride per input dimension.
    pub strides: Ints,
    /// Elements taken per input dimension.
    pub processing: Dims,
    /// The output shape.
    pub final_shape: Dims,
    /// The slice takes the whole input in order.
    pub is_identity: bool,
}

/// Marks in `final_shape_gather`: a shrunk axis, a new axis.
const SHRINK: i64 = -1;
const NEW_AXIS: i64 = -2;

fn bit(mask: u64, i: usize) -> bool {
    i < 64 && mask & (1u64 << i) != 0
}

/// TF's `ValidateStridedSliceOp` for a fully known `input` shape, with
/// `begin`, `end` and `strides` all given (integer tensors on the host).
pub fn validate(
    input: &[usize],
    begin_t: &Tensor,
    end_t: &Tensor,
    strides_t: &Tensor,
    masks: Masks,
) -> Result<SliceSpec, KernelError> {
    let n = strides_t.num_elements();
    let begin_ok = is_vector(begin_t.shape()) && begin_t.num_elements() == n && n < 32;
    let end_ok = is_vector(end_t.shape()) && end_t.num_elements() == n;
    if !begin_ok || !end_ok || !is_vector(strides_t.shape()) {
        return Err(KernelError::invalid_argument(format!(
            "Expected begin, end, and strides to be 1D equal size tensors, but got shapes {}, \
             {}, and {} instead.",
            begin_t.shape(),
            end_t.shape(),
            strides_t.shape()
        )));
    }
    if masks.ellipsis & masks.ellipsis.wrapping_sub(1) != 0 {
        return Err(KernelError::invalid_argument(
            "Multiple ellipses in slice spec not allowed",
        ));
    }
    let sparse_begin = int_values(begin_t)?;
    let sparse_end = int_values(end_t)?;
    let sparse_strides = int_values(strides_t)?;

    // Step 1: account for the ellipsis and new axes.
    let mut sparse_dims = n;
    let mut ellipsis_mask = masks.ellipsis;
    let mut ellipsis_seen = false;
    let mut new_axis_after_ellipsis: i64 = 0;
    for i in 0..sparse_dims {
        if ellipsis_seen && bit(masks.new_axis, i) {
            new_axis_after_ellipsis += 1;
        }
        if bit(ellipsis_mask, i) {
            ellipsis_seen = true;
        }
    }
    if !ellipsis_seen {
        // An implicit ellipsis at the end.
        ellipsis_mask |= 1u64 << sparse_dims;
        sparse_dims += 1;
    }

    // Step 2: the dense spec, one entry per input dimension.
    let dims = input.len();
    let dims_i = dim_i64(dims);
    let mut begin: Ints = SmallVec::from_elem(0, dims);
    let mut end: Ints = SmallVec::from_elem(0, dims);
    let mut stride: Ints = SmallVec::from_elem(0, dims);
    let (mut begin_mask, mut end_mask, mut shrink_mask) = (0u64, 0u64, 0u64);
    let mut final_gather: SmallVec<[i64; 8]> = SmallVec::new();
    let mut full = 0usize;
    for i in 0..sparse_dims {
        if bit(ellipsis_mask, i) {
            let remaining = dim_i64(sparse_dims - i);
            let next = (dims_i - remaining + 1 + new_axis_after_ellipsis).min(dims_i);
            while dim_i64(full) < next {
                begin[full] = 0;
                end[full] = 0;
                stride[full] = 1;
                begin_mask |= 1u64 << full;
                end_mask |= 1u64 << full;
                final_gather.push(dim_i64(full));
                full += 1;
            }
        } else if bit(masks.new_axis, i) {
            final_gather.push(NEW_AXIS);
        } else {
            if full == dims {
                return Err(KernelError::invalid_argument(if dims == 0 {
                    "Attempting to slice scalar input.".to_owned()
                } else {
                    format!("Index out of range using input dim {full}; input has only {dims} dims")
                }));
            }
            begin[full] = sparse_begin[i];
            end[full] = sparse_end[i];
            stride[full] = sparse_strides[i];
            if bit(masks.begin, i) {
                begin_mask |= 1u64 << full;
            }
            if bit(masks.end, i) {
                end_mask |= 1u64 << full;
            }
            if bit(masks.shrink_axis, i) {
                final_gather.push(SHRINK);
                shrink_mask |= 1u64 << full;
            } else {
                final_gather.push(dim_i64(full));
            }
            full += 1;
        }
    }

    // Step 3: canonical begin and end, bounds checks, processing shape.
    let mut is_identity = true;
    let mut processing: Dims = SmallVec::with_capacity(dims);
    for i in 0..dims {
        let s = stride[i];
        let dim = dim_i64(input[i]);
        if s == 0 {
            return Err(KernelError::invalid_argument(format!(
                "strides[{i}] must be non-zero"
            )));
        }
        let shrink = bit(shrink_mask, i);
        let masked = [bit(begin_mask, i), bit(end_mask, i)];
        let valid = if s > 0 { [0, dim] } else { [-1, dim - 1] };
        let canonical = |x: i64, c: usize| {
            if masked[c] {
                if s > 0 { valid[c] } else { valid[(c + 1) & 1] }
            } else {
                let fwd = if x < 0 { dim.saturating_add(x) } else { x };
                fwd.clamp(valid[0], valid[1])
            }
        };
        if shrink && s <= 0 {
            return Err(KernelError::invalid_argument(
                "only stride 1 allowed on non-range indexing.",
            ));
        }
        if shrink {
            // foo[-1] means begin = -1, end = 0: re-create end as begin + 1.
            let fwd = if begin[i] < 0 {
                dim.saturating_add(begin[i])
            } else {
                begin[i]
            };
            begin[i] = fwd;
            end[i] = fwd.saturating_add(1);
            if fwd < 0 || fwd >= dim {
                return Err(KernelError::invalid_argument(format!(
                    "slice index {fwd} of dimension {i} out of bounds."
                )));
            }
        } else {
            begin[i] = canonical(begin[i], 0);
            end[i] = canonical(end[i], 1);
        }
        is_identity &= s == 1 && begin[i] == 0 && end[i] == dim;
        let interval = end[i] - begin[i];
        let size = if interval == 0 || ((interval < 0) != (s < 0)) {
            0
        } else {
            interval / s + i64::from(interval % s != 0)
        };
        processing.push(usize::try_from(size).unwrap_or(0));
    }

    // Step 4: the final shape.
    let final_shape = final_gather
        .iter()
        .filter_map(|&g| match g {
            NEW_AXIS => Some(1),
            SHRINK => None,
            d => usize::try_from(d)
                .ok()
                .and_then(|d| processing.get(d).copied()),
        })
        .collect();
    Ok(SliceSpec {
        begin,
        end,
        strides: stride,
        processing,
        final_shape,
        is_identity,
    })
}

impl SliceSpec {
    /// For a row-major input of `dims` (the shape validated): the first
    /// element read and the input step of each processing dimension
    /// (`stride · input stride`, negative for reversed dimensions). The
    /// first element is 0 when the slice is empty.
    pub fn input_steps(&self, dims: &[usize]) -> Result<(i64, Ints), KernelError> {
        let in_strides = strides(dims);
        let mut steps: Ints = SmallVec::with_capacity(in_strides.len());
        let mut base: i64 = 0;
        let empty = self.processing.contains(&0);
        for ((&st, &b), &is) in self.strides.iter().zip(&self.begin).zip(&in_strides) {
            let is = dim_i64(is);
            let overflow = || KernelError::internal("strided slice offset overflows");
            steps.push(st.checked_mul(is).ok_or_else(overflow)?);
            if !empty {
                base = b
                    .checked_mul(is)
                    .and_then(|o| o.checked_add(base))
                    .ok_or_else(overflow)?;
            }
        }
        Ok((base, steps))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(x: &[i32]) -> Tensor {
        Tensor::from_vec([x.len()], x.to_vec()).unwrap()
    }

    fn spec(dims: &[usize], b: &[i32], e: &[i32], s: &[i32], masks: Masks) -> SliceSpec {
        validate(dims, &v(b), &v(e), &v(s), masks).unwrap()
    }

    #[test]
    fn reversed_slices_read_backwards_from_the_last_element() {
        // x[::-1] of [5]: begin 4, step -1.
        let masks = Masks {
            begin: 1,
            end: 1,
            ..Masks::default()
        };
        let sp = spec(&[5], &[0], &[0], &[-1], masks);
        assert_eq!(&sp.processing[..], &[5]);
        let (base, steps) = sp.input_steps(&[5]).unwrap();
        assert_eq!((base, &steps[..]), (4, &[-1][..]));
    }

    #[test]
    fn masks_shape_the_output() {
        // x[1, ..., tf.newaxis, 0:4:2] of [3, 2, 5].
        let masks = Masks {
            ellipsis: 0b10,
            new_axis: 0b100,
            shrink_axis: 0b1,
            ..Masks::default()
        };
        let sp = spec(
            &[3, 2, 5],
            &[1, 0, 0, 0],
            &[2, 0, 0, 4],
            &[1, 1, 1, 2],
            masks,
        );
        assert_eq!(&sp.final_shape[..], &[2, 1, 2]);
        assert!(!sp.is_identity);
        let (base, steps) = sp.input_steps(&[3, 2, 5]).unwrap();
        assert_eq!((base, &steps[..]), (10, &[10, 5, 2][..]));
        let whole = spec(&[3, 2], &[0], &[3], &[1], Masks::default());
        assert!(whole.is_identity);
        // An empty slice reads nothing: its first element is 0.
        let empty = spec(&[3], &[2], &[2], &[1], Masks::default());
        assert_eq!(empty.input_steps(&[3]).unwrap().0, 0);
    }

    #[test]
    fn errors_carry_tf_messages() {
        let shrink = Masks {
            shrink_axis: 1,
            ..Masks::default()
        };
        let e = validate(&[3], &v(&[3]), &v(&[4]), &v(&[1]), shrink).unwrap_err();
        assert_eq!(e.to_string(), "slice index 3 of dimension 0 out of bounds.");
        let e = validate(&[3], &v(&[0]), &v(&[1]), &v(&[0]), Masks::default()).unwrap_err();
        assert_eq!(e.to_string(), "strides[0] must be non-zero");
        let e = validate(&[], &v(&[0]), &v(&[1]), &v(&[1]), Masks::default()).unwrap_err();
        assert_eq!(e.to_string(), "Attempting to slice scalar input.");
        let e = validate(&[3], &v(&[0, 0]), &v(&[1]), &v(&[1]), Masks::default()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "Expected begin, end, and strides to be 1D equal size tensors, but got shapes [2], \
             [1], and [1] instead."
        );
        let two_ellipses = Masks {
            ellipsis: 0b11,
            ..Masks::default()
        };
        let e = validate(&[3], &v(&[0, 0]), &v(&[1, 1]), &v(&[1, 1]), two_ellipses).unwrap_err();
        assert_eq!(e.to_string(), "Multiple ellipses in slice spec not allowed");
    }
}

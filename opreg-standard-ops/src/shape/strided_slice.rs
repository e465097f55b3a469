//! Shape function of `StridedSlice`: TF's `ValidateStridedSliceOp`, which
//! turns the sparse slice spec (begin, end, strides and the five masks)
//! into a dense one, one entry per input dimension, and computes the
//! output shape from it.

use registry_core::shape::{Dim, InferenceContext, Shape, ShapeError};

/// The five mask attrs of `StridedSlice`.
#[derive(Debug, Clone, Copy)]
struct Masks {
    begin: i64,
    end: i64,
    ellipsis: i64,
    new_axis: i64,
    shrink_axis: i64,
}

/// Bit `i` of `mask`.
fn bit(mask: i64, i: usize) -> bool {
    i < 64 && (mask >> i) & 1 != 0
}

fn mask_bit(i: usize) -> i64 {
    if i < 63 { 1 << i } else { 0 }
}

fn error(message: impl Into<String>) -> ShapeError {
    ShapeError::StridedSlice {
        message: message.into(),
    }
}

/// Where a dimension of the output comes from.
#[derive(Debug, Clone, Copy)]
enum Gather {
    /// Dense (input) dimension `i`.
    Dense(usize),
    /// A new axis of size 1.
    NewAxis,
    /// A shrunk (indexed) dimension: not in the output.
    Shrink,
}

/// The dense spec: per input dimension, begin, end, stride and masks.
struct Dense {
    begin: Vec<i64>,
    end: Vec<i64>,
    strides: Vec<i64>,
    begin_mask: i64,
    end_mask: i64,
    shrink_mask: i64,
    gather: Vec<Gather>,
}

/// TF's `BuildDenseSpec`: expands the ellipsis (an implicit one at the end
/// if there is none) into full ranges over the input dimensions it covers.
fn build_dense_spec(
    rank: usize,
    begin: Option<&[i64]>,
    end: Option<&[i64]>,
    strides: &[i64],
    masks: Masks,
) -> Result<Dense, ShapeError> {
    let mut sparse_dims = strides.len();
    let mut ellipsis = masks.ellipsis;
    // New axes after the ellipsis take no input dimension.
    let mut ellipsis_seen = false;
    let mut new_axes_after_ellipsis = 0i64;
    for i in 0..sparse_dims {
        if ellipsis_seen && bit(masks.new_axis, i) {
            new_axes_after_ellipsis += 1;
        }
        if bit(ellipsis, i) {
            ellipsis_seen = true;
        }
    }
    if !ellipsis_seen {
        ellipsis |= mask_bit(sparse_dims);
        sparse_dims += 1;
    }

    let mut dense = Dense {
        begin: vec![0; rank],
        end: vec![0; rank],
        strides: vec![0; rank],
        begin_mask: 0,
        end_mask: 0,
        shrink_mask: 0,
        gather: Vec::with_capacity(sparse_dims),
    };
    let rank_i = i64::try_from(rank).unwrap_or(i64::MAX);
    let sparse_i = i64::try_from(sparse_dims).unwrap_or(i64::MAX);
    let mut full = 0usize;
    for i in 0..sparse_dims {
        if bit(ellipsis, i) {
            let i_i = i64::try_from(i).unwrap_or(i64::MAX);
            let next = (rank_i - (sparse_i - i_i) + 1 + new_axes_after_ellipsis).min(rank_i);
            let next = usize::try_from(next).unwrap_or(0);
            while full < next {
                dense.strides[full] = 1;
                dense.begin_mask |= mask_bit(full);
                dense.end_mask |= mask_bit(full);
                dense.gather.push(Gather::Dense(full));
                full += 1;
            }
        } else if bit(masks.new_axis, i) {
            dense.gather.push(Gather::NewAxis);
        } else {
            if full >= rank {
                return Err(if rank == 0 {
                    error("Attempting to slice scalar input.")
                } else {
                    error(format!(
                        "Index out of range using input dim {full}; input has only {rank} dims"
                    ))
                });
            }
            if let Some(b) = begin.and_then(|b| b.get(i)) {
                dense.begin[full] = *b;
            }
            if let Some(e) = end.and_then(|e| e.get(i)) {
                dense.end[full] = *e;
            }
            dense.strides[full] = strides.get(i).copied().unwrap_or(1);
            if bit(masks.begin, i) {
                dense.begin_mask |= mask_bit(full);
            }
            if bit(masks.end, i) {
                dense.end_mask |= mask_bit(full);
            }
            if bit(masks.shrink_axis, i) {
                dense.gather.push(Gather::Shrink);
                dense.shrink_mask |= mask_bit(full);
            } else {
                dense.gather.push(Gather::Dense(full));
            }
            full += 1;
        }
    }
    Ok(dense)
}

/// The output dimensions of a strided slice of `input` (TF's
/// `ValidateStridedSliceOp`, final shape only). `begin` and `end` are
/// `None` when unknown; `strides` must be known.
fn strided_slice_dims(
    input: &[Dim],
    begin: Option<&[i64]>,
    end: Option<&[i64]>,
    strides: &[i64],
    masks: Masks,
) -> Result<Vec<Dim>, ShapeError> {
    let wrong_len = |v: Option<&[i64]>| v.is_some_and(|v| v.len() != strides.len());
    if wrong_len(begin) || wrong_len(end) || strides.len() >= 32 {
        return Err(error(format!(
            "Expected begin, end, and strides to be 1D equal size tensors of at most 31 \
             elements, but got {}, {} and {} elements",
            begin.map_or_else(|| "?".to_owned(), |b| b.len().to_string()),
            end.map_or_else(|| "?".to_owned(), |e| e.len().to_string()),
            strides.len()
        )));
    }
    if masks.ellipsis & masks.ellipsis.wrapping_sub(1) != 0 {
        return Err(error("Multiple ellipses in slice spec not allowed"));
    }
    let mut dense = build_dense_spec(input.len(), begin, end, strides, masks)?;
    let known = begin.is_some() && end.is_some();

    // The size of each dense dimension after slicing.
    let mut processing = Vec::with_capacity(input.len());
    for (i, dim) in input.iter().enumerate() {
        let stride = dense.strides[i];
        if stride == 0 {
            return Err(error(format!("strides[{i}] must be non-zero")));
        }
        let shrink = bit(dense.shrink_mask, i);
        let Some(dim) = dim.value() else {
            processing.push(if shrink { Dim::new(1) } else { Dim::UNKNOWN });
            continue;
        };
        if shrink && stride <= 0 {
            return Err(error("only stride 1 allowed on non-range indexing."));
        }
        let begin_masked = bit(dense.begin_mask, i);
        let end_masked = bit(dense.end_mask, i);
        // The valid range of begin and end (end exclusive for stride > 0,
        // -1 meaning "before the start" for stride < 0).
        let (lo, hi) = if stride > 0 { (0, dim) } else { (-1, dim - 1) };
        let canonical = |x: i64, is_end: bool| {
            if (is_end && end_masked) || (!is_end && begin_masked) {
                // begin of a forward range and end of a backward one: lo.
                if (stride > 0) != is_end { lo } else { hi }
            } else {
                let fwd = if x < 0 { dim.saturating_add(x) } else { x };
                fwd.clamp(lo, hi)
            }
        };
        let interval = if known {
            let (b, e) = if shrink {
                let b = dense.begin[i];
                let fwd = if b < 0 { dim.saturating_add(b) } else { b };
                if fwd < 0 || fwd >= dim {
                    return Err(error(format!(
                        "slice index {fwd} of dimension {i} out of bounds."
                    )));
                }
                (fwd, fwd + 1)
            } else {
                (
                    canonical(dense.begin[i], false),
                    canonical(dense.end[i], true),
                )
            };
            dense.begin[i] = b;
            dense.end[i] = e;
            e.checked_sub(b)
        } else if shrink {
            Some(1)
        } else if begin_masked && end_masked {
            Some(if stride < 0 { -dim } else { dim })
        } else {
            None
        };
        processing.push(match interval {
            Some(len) if len == 0 || (len < 0) != (stride < 0) => Dim::new(0),
            Some(len) => {
                let size = len / stride + i64::from(len % stride != 0);
                Dim::new(size)
            }
            None => Dim::UNKNOWN,
        });
    }

    let mut out = Vec::with_capacity(dense.gather.len());
    for g in &dense.gather {
        match g {
            Gather::Dense(i) => out.push(processing.get(*i).copied().unwrap_or(Dim::UNKNOWN)),
            Gather::NewAxis => out.push(Dim::new(1)),
            Gather::Shrink => {}
        }
    }
    Ok(out)
}

/// `StridedSlice`: `begin`, `end` and `strides` are vectors of one length;
/// the output shape follows Python's extended slicing with TF's masks
/// (`begin_mask`/`end_mask`: full range; `ellipsis_mask`: the remaining
/// dimensions; `new_axis_mask`: insert a 1; `shrink_axis_mask`: index and
/// drop the dimension).
///
/// The output is unknown when the input's rank, the spec's length or the
/// strides are unknown; with `begin` or `end` unknown, only the dimensions
/// the masks decide are known.
pub fn strided_slice(c: &mut InferenceContext<'_>) -> Result<(), ShapeError> {
    let input = c.input(0)?;
    let begin_shape = c.input_with_rank(1, 1)?;
    let end_shape = c.input_with_rank(2, 1)?;
    let strides_shape = c.input_with_rank(3, 1)?;
    let spec = begin_shape
        .merge(&end_shape)
        .map_err(|e| c.input_error(2, e))?;
    let spec = spec
        .merge(&strides_shape)
        .map_err(|e| c.input_error(3, e))?;
    // Constant values given for the spec must be vectors.
    for i in 1..4 {
        if let Some(t) = c.input_tensor(i)?
            && t.dims().len() != 1
        {
            return Err(c.input_error(
                i,
                error(format!(
                    "Expected begin, end, and strides to be 1D equal size tensors, but got shape {} for input {i}",
                    Shape::from(t.shape())
                )),
            ));
        }
    }
    let strides = c.input_ints(3)?;
    let (Some(dims), Some(_), Some(strides)) = (input.dims(), spec.dim(0)?.value(), strides) else {
        return c.set_output(0, Shape::unknown());
    };
    let masks = Masks {
        begin: c.attr::<i64>("begin_mask")?,
        end: c.attr::<i64>("end_mask")?,
        ellipsis: c.attr::<i64>("ellipsis_mask")?,
        new_axis: c.attr::<i64>("new_axis_mask")?,
        shrink_axis: c.attr::<i64>("shrink_axis_mask")?,
    };
    let begin = c.input_ints(1)?;
    let end = c.input_ints(2)?;
    let out = strided_slice_dims(dims, begin.as_deref(), end.as_deref(), &strides, masks)?;
    c.set_output(0, Shape::new(out))
}

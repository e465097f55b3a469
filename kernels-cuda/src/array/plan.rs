//! Host-side plans of the data-movement kernels as launch arguments:
//! dimensions simplified (size-1 dimensions dropped, contiguous ones
//! merged) to at most [`MAX_RANK`] and, for the strided copy, every address
//! proved inside the input before anything is launched (by the CPU copy's
//! [`StridedLayout`]). Pure functions, tested everywhere.

use opreg_op_logic::pad::{PadDim, merge_unpadded};
use opreg_op_logic::strided::StridedLayout;
use registry_core::kernel::KernelError;
use smallvec::SmallVec;

use opreg_cuda::{MAX_RANK, ShapeArg};

/// The error for a copy that still has more than [`MAX_RANK`] dimensions
/// after merging.
fn too_many_dims(what: &str, rank: usize) -> KernelError {
    KernelError::unimplemented(format!(
        "{what} on GPU handles at most {MAX_RANK} dimensions after merging contiguous ones, \
         got {rank}"
    ))
}

fn shape_arg(what: &str, values: &[i64]) -> Result<ShapeArg, KernelError> {
    ShapeArg::new(values).ok_or_else(|| too_many_dims(what, values.len()))
}

/// A validated strided gather: output element `i` (row-major over `dims`)
/// is input element `base + Σ idx[d] · steps[d]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StridedPlan {
    /// The first input element read.
    pub(crate) base: i64,
    /// Output dimensions after simplification.
    pub(crate) dims: ShapeArg,
    /// Input step of each dimension, in elements.
    pub(crate) steps: ShapeArg,
    /// The number of output elements.
    pub(crate) len: usize,
}

impl StridedPlan {
    /// A plan reading a tensor of `input_len` elements: output dimension
    /// `d` has size `dims[d]` and input step `steps[d]` (any sign); the
    /// first element read is `base`. Errors (Internal) when an address
    /// would be outside the input (see [`StridedLayout::new`]),
    /// (Unimplemented) when more than [`MAX_RANK`] dimensions remain after
    /// merging.
    pub(crate) fn new(
        what: &str,
        input_len: usize,
        base: i64,
        dims: &[usize],
        steps: &[i64],
    ) -> Result<Self, KernelError> {
        let layout = StridedLayout::new(input_len, base, dims, steps)?;
        if layout.len == 0 {
            return Ok(Self {
                base: 0,
                dims: shape_arg(what, &[0])?,
                steps: shape_arg(what, &[0])?,
                len: 0,
            });
        }
        let out_dims = layout
            .dims
            .iter()
            .map(|&d| i64::try_from(d))
            .collect::<Result<SmallVec<[i64; 8]>, _>>()
            .map_err(|_| KernelError::internal("dimension overflow"))?;
        Ok(Self {
            base: layout.base,
            dims: shape_arg(what, &out_dims)?,
            steps: shape_arg(what, &layout.steps)?,
            len: layout.len,
        })
    }
}

/// A strided gather of any rank as launches of at most [`MAX_RANK`]
/// dimensions each: the gather of `dims`/`steps` (from element 0) of a
/// tensor of `input_len` elements, simplified, then, past [`MAX_RANK`]
/// dimensions, one plan per index of the leading ones (their offsets
/// folded into its base). Each part is `(offset, plan)`: the plan fills
/// the dense elements `offset..offset + plan.len` of the gathered result
/// (row-major over `dims`). Every part's addresses are proved inside the
/// input; an empty gather has no parts.
#[cfg_attr(
    not(all(feature = "linalg", feature = "reduce")),
    allow(dead_code, reason = "used by Einsum only")
)]
pub(crate) fn strided_parts(
    what: &str,
    input_len: usize,
    dims: &[usize],
    steps: &[i64],
) -> Result<Vec<(usize, StridedPlan)>, KernelError> {
    let layout = StridedLayout::new(input_len, 0, dims, steps)?;
    if layout.len == 0 {
        return Ok(Vec::new());
    }
    let lead = layout.dims.len().saturating_sub(MAX_RANK);
    let (outer_dims, inner_dims) = layout.dims.split_at(lead);
    let (outer_steps, inner_steps) = layout.steps.split_at(lead);
    let inner_len: usize = inner_dims.iter().product();
    let outer_len: usize = outer_dims.iter().product();
    (0..outer_len)
        .map(|o| {
            let (mut rem, mut base) = (o, layout.base);
            for (&d, &s) in outer_dims.iter().zip(outer_steps).rev() {
                base += (rem % d) as i64 * s;
                rem /= d;
            }
            let plan = StridedPlan::new(what, input_len, base, inner_dims, inner_steps)?;
            Ok((o * inner_len, plan))
        })
        .collect()
}

/// `Tile` of a non-empty input: output dimension `d` is `in[d] · reps[d]`
/// and reads input index `out_index mod in[d]`. A dimension not repeated is
/// merged into the one before it (`o mod (a·b)` is then still the input
/// index), and dimensions of 1 repeated once are dropped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TilePlan {
    /// Output dimensions.
    pub(crate) out_dims: ShapeArg,
    /// Input dimensions (same rank).
    pub(crate) in_dims: ShapeArg,
}

impl TilePlan {
    /// The plan for an input of `in_dims` repeated `reps` times per
    /// dimension (output sizes already checked not to overflow).
    pub(crate) fn new(in_dims: &[usize], reps: &[usize]) -> Result<Self, KernelError> {
        let mut outs: SmallVec<[i64; 8]> = SmallVec::new();
        let mut ins: SmallVec<[i64; 8]> = SmallVec::new();
        for (&d, &r) in in_dims.iter().zip(reps) {
            if d == 1 && r == 1 {
                continue;
            }
            let (d, o) = (
                i64::try_from(d).map_err(|_| KernelError::internal("dimension overflow"))?,
                i64::try_from(d.saturating_mul(r))
                    .map_err(|_| KernelError::internal("dimension overflow"))?,
            );
            if r == 1
                && let (Some(last_o), Some(last_i)) = (outs.last_mut(), ins.last_mut())
            {
                *last_o *= d;
                *last_i *= d;
                continue;
            }
            outs.push(o);
            ins.push(d);
        }
        Ok(Self {
            out_dims: shape_arg("Tile", &outs)?,
            in_dims: shape_arg("Tile", &ins)?,
        })
    }
}

/// `Pad`: the output's dimensions, the input's, and the zeros before the
/// input in each; a dimension without padding is merged into the one
/// before it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PadPlan {
    /// Output dimensions.
    pub(crate) out_dims: ShapeArg,
    /// Input dimensions.
    pub(crate) in_dims: ShapeArg,
    /// Zeros before the input, per dimension.
    pub(crate) before: ShapeArg,
}

impl PadPlan {
    /// The plan for `dims` (sizes checked not to overflow), unpadded
    /// dimensions merged ([`merge_unpadded`]).
    pub(crate) fn new(dims: &[PadDim]) -> Result<Self, KernelError> {
        let merged = merge_unpadded(dims)?;
        let col = |f: fn(&PadDim) -> usize| -> Result<ShapeArg, KernelError> {
            let values = merged
                .iter()
                .map(|d| i64::try_from(f(d)))
                .collect::<Result<SmallVec<[i64; 8]>, _>>()
                .map_err(|_| KernelError::internal("pad: dimension overflow"))?;
            shape_arg("Pad", &values)
        };
        Ok(Self {
            out_dims: col(|d| d.out)?,
            in_dims: col(|d| d.size)?,
            before: col(|d| d.before)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn used(s: &ShapeArg) -> Vec<i64> {
        s.d[..s.rank as usize].to_vec()
    }

    #[test]
    fn strided_plans_merge_contiguous_dims_and_check_bounds() {
        // A transpose of [2, 3, 4] by [0, 2, 1]: steps [12, 1, 4].
        let p = StridedPlan::new("t", 24, 0, &[2, 4, 3], &[12, 1, 4]).unwrap();
        assert_eq!(used(&p.dims), vec![2, 4, 3]);
        assert_eq!(p.len, 24);
        // The identity collapses to one run.
        let p = StridedPlan::new("t", 24, 0, &[2, 3, 4], &[12, 4, 1]).unwrap();
        assert_eq!((used(&p.dims), used(&p.steps)), (vec![24], vec![1]));
        // Size-1 dims disappear; a scalar has rank 0.
        let p = StridedPlan::new("t", 5, 3, &[1, 1], &[7, 9]).unwrap();
        assert_eq!((p.dims.rank, p.base, p.len), (0, 3, 1));
        // Negative steps (a reversed slice) within bounds.
        let p = StridedPlan::new("t", 10, 9, &[5], &[-2]).unwrap();
        assert_eq!(used(&p.steps), vec![-2]);
        assert!(StridedPlan::new("t", 10, 9, &[6], &[-2]).is_err());
        assert!(StridedPlan::new("t", 10, 0, &[11], &[1]).is_err());
        // Empty outputs read nothing.
        assert_eq!(
            StridedPlan::new("t", 0, 0, &[0, 3], &[3, 1]).unwrap().len,
            0
        );
        // Nine dims that cannot merge are refused.
        let e = StridedPlan::new("t", 1 << 9, 0, &[2; 9], &[1, 2, 4, 8, 16, 32, 64, 128, 256])
            .unwrap_err();
        assert!(e.to_string().contains("at most 8"), "{e}");
    }

    #[test]
    fn strided_parts_split_past_eight_dims() {
        // A reversal of nine axes of 2 cannot merge: two parts of eight.
        let dims = [2; 9];
        let steps: Vec<i64> = (0..9).map(|d| 1 << d).collect();
        let parts = strided_parts("t", 512, &dims, &steps).unwrap();
        assert_eq!(parts.len(), 2);
        assert_eq!((parts[0].0, parts[1].0), (0, 256));
        assert_eq!((parts[0].1.base, parts[1].1.base), (0, 1));
        assert_eq!(parts[1].1.dims.rank, 8);
        // Mergeable or small gathers are one part; empty ones none.
        let parts = strided_parts("t", 24, &[2, 3, 4], &[12, 4, 1]).unwrap();
        assert_eq!(parts.len(), 1);
        assert_eq!(used(&parts[0].1.dims), vec![24]);
        assert!(strided_parts("t", 0, &[0, 3], &[3, 1]).unwrap().is_empty());
        assert!(strided_parts("t", 5, &[6], &[1]).is_err());
    }

    #[test]
    fn tile_plans_merge_unrepeated_dims() {
        let p = TilePlan::new(&[2, 3, 4], &[2, 1, 1]).unwrap();
        assert_eq!((used(&p.out_dims), used(&p.in_dims)), (vec![48], vec![24]));
        let p = TilePlan::new(&[2, 3], &[1, 2]).unwrap();
        assert_eq!(
            (used(&p.out_dims), used(&p.in_dims)),
            (vec![2, 6], vec![2, 3])
        );
        let p = TilePlan::new(&[1, 3], &[4, 1]).unwrap();
        assert_eq!((used(&p.out_dims), used(&p.in_dims)), (vec![12], vec![3]));
    }

    #[test]
    fn pad_plans_merge_unpadded_dims() {
        let d = |size, before, out| PadDim { size, before, out };
        let p = PadPlan::new(&[d(2, 1, 4), d(3, 0, 3), d(5, 0, 5)]).unwrap();
        assert_eq!(used(&p.out_dims), vec![60]);
        assert_eq!(used(&p.in_dims), vec![30]);
        assert_eq!(used(&p.before), vec![15]);
        let p = PadPlan::new(&[d(2, 0, 2), d(3, 2, 6)]).unwrap();
        assert_eq!(used(&p.out_dims), vec![2, 6]);
        assert_eq!(used(&p.before), vec![0, 2]);
    }
}

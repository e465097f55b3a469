//! Reading `reduction_indices` and simplifying a reduction (TensorFlow's
//! `ReductionHelper::Simplify`).

use registry_core::kernel::KernelError;
use registry_core::kernel_ensure;
use registry_core::proto::DataType;
use registry_core::tensor::{Tensor, TensorShape};
use smallvec::SmallVec;

/// Axis values as read from an index tensor.
pub(crate) type Axes = SmallVec<[i64; 8]>;

/// Reads an int16/int32/int64 tensor of axes of rank 0 or 1. `what` names
/// the input in errors.
pub(crate) fn read_axes(t: &Tensor, what: &str) -> Result<Axes, KernelError> {
    kernel_ensure!(
        t.shape().rank() <= 1,
        "Expected {what} to be a scalar or vector, but got shape: {}",
        t.shape()
    );
    let axes = match t.dtype() {
        DataType::DtInt32 => t.as_slice::<i32>()?.iter().map(|&a| i64::from(a)).collect(),
        DataType::DtInt64 => t.as_slice::<i64>()?.iter().copied().collect(),
        DataType::DtInt16 => t.as_slice::<i16>()?.iter().map(|&a| i64::from(a)).collect(),
        other => {
            return Err(KernelError::invalid_argument(format!(
                "{what} must be int16, int32 or int64, got {}",
                other.as_str_name()
            )));
        }
    };
    Ok(axes)
}

/// A reduction simplified to alternating runs of reduced and kept
/// dimensions, with the output's shape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ReductionPlan {
    /// The output's shape (reduced dims dropped, or kept as 1 with `keep_dims`).
    pub(crate) out_shape: TensorShape,
    /// The input seen as runs of dims, alternately reduced and kept
    /// (size-1 dims dropped, adjacent runs merged).
    pub(crate) groups: SmallVec<[usize; 8]>,
    /// Whether `groups[0]` is reduced (then 2, 4, ... are too).
    pub(crate) reduce_first: bool,
}

impl ReductionPlan {
    /// Plans the reduction of a tensor of `dims` over `axes` (negative axes
    /// count from the end; duplicates are allowed).
    pub(crate) fn new(dims: &[usize], axes: &[i64], keep_dims: bool) -> Result<Self, KernelError> {
        let rank = dims.len();
        // A rank fits in i64: it is at most the length of a slice of usize.
        let rank_i = i64::try_from(rank).unwrap_or(i64::MAX);
        let mut bitmap: SmallVec<[bool; 8]> = SmallVec::from_elem(false, rank);
        for &axis in axes {
            kernel_ensure!(
                (-rank_i..rank_i).contains(&axis),
                "Invalid reduction dimension ({axis} for input with {rank} dimension(s)"
            );
            let index = if axis < 0 { axis + rank_i } else { axis };
            // In 0..rank after the check above.
            if let Some(slot) = usize::try_from(index).ok().and_then(|i| bitmap.get_mut(i)) {
                *slot = true;
            }
        }
        let mut out_dims: SmallVec<[usize; 8]> = SmallVec::new();
        for (&d, &reduced) in dims.iter().zip(&bitmap) {
            if !reduced {
                out_dims.push(d);
            } else if keep_dims {
                out_dims.push(1);
            }
        }
        let out_shape = TensorShape::new(&out_dims)?;

        // Runs of reduced / kept dims; size-1 dims join the current run and
        // leading size-1 dims are skipped.
        let mut groups: SmallVec<[usize; 8]> = SmallVec::new();
        let mut reduce_first = true;
        let mut current: Option<bool> = None;
        for (&d, &reduced) in dims.iter().zip(&bitmap) {
            match current {
                None if d == 1 => {}
                None => {
                    reduce_first = reduced;
                    current = Some(reduced);
                    groups.push(d);
                }
                Some(run) if d == 1 || run == reduced => {
                    if let Some(last) = groups.last_mut() {
                        *last *= d;
                    }
                }
                Some(_) => {
                    current = Some(reduced);
                    groups.push(d);
                }
            }
        }
        Ok(Self {
            out_shape,
            groups,
            reduce_first,
        })
    }

    /// True when nothing is reduced (the output is the input, reshaped).
    pub(crate) fn is_identity(&self) -> bool {
        self.groups.is_empty() || (self.groups.len() == 1 && !self.reduce_first)
    }

    /// Whether group `i` is reduced.
    pub(crate) fn is_reduced(&self, i: usize) -> bool {
        i.is_multiple_of(2) == self.reduce_first
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(dims: &[usize], axes: &[i64], keep: bool) -> ReductionPlan {
        ReductionPlan::new(dims, axes, keep).unwrap()
    }

    #[test]
    fn merges_runs_and_skips_size_one_dims() {
        // TF's example: [2, 1, 3, 1, 5] over [1, 4] is [6, 5] over [1].
        let p = plan(&[2, 1, 3, 1, 5], &[1, 4], false);
        assert_eq!(&p.groups[..], &[6, 5]);
        assert!(!p.reduce_first);
        assert_eq!(p.out_shape.dims(), &[2, 3, 1]);
        let p = plan(&[1, 1, 4, 6], &[-1, 0], true);
        assert_eq!(&p.groups[..], &[4, 6]);
        assert_eq!(p.out_shape.dims(), &[1, 1, 4, 1]);
        let p = plan(&[2, 3, 4, 5], &[0, 2], false);
        assert_eq!(&p.groups[..], &[2, 3, 4, 5]);
        assert!(p.reduce_first);
        assert!(plan(&[3, 1], &[1], false).is_identity());
        assert!(plan(&[], &[], false).is_identity());
        assert!(plan(&[1, 1], &[0, 1], false).is_identity());
    }

    #[test]
    fn rejects_out_of_range_axes() {
        let e = ReductionPlan::new(&[2, 3], &[2], false).unwrap_err();
        assert_eq!(
            e.to_string(),
            "Invalid reduction dimension (2 for input with 2 dimension(s)"
        );
        assert!(ReductionPlan::new(&[2, 3], &[-3], false).is_err());
        assert!(ReductionPlan::new(&[], &[0], false).is_err());
    }
}

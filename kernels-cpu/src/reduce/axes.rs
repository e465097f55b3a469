//! A reduction planned for the CPU engine: the axes checked and the input
//! simplified as TensorFlow's `ReductionHelper::Simplify` does, by
//! [`opreg_op_logic::axes`] (shared with the GPU reductions).

use registry_core::kernel::KernelError;
use registry_core::tensor::TensorShape;
use smallvec::SmallVec;

use opreg_op_logic::axes::Reduction;

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
    /// count from the end; an axis named twice is TF's error).
    pub(crate) fn new(dims: &[usize], axes: &[i64], keep_dims: bool) -> Result<Self, KernelError> {
        let Reduction { out_shape, runs } = Reduction::new(dims, axes, keep_dims)?;
        Ok(Self {
            out_shape,
            groups: runs.iter().map(|&(size, _)| size).collect(),
            reduce_first: runs.first().is_none_or(|&(_, reduced)| reduced),
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
    fn runs_become_alternating_groups() {
        // [2, 1, 3, 1, 5] over [1, 4]: kept [6], then reduced [5].
        let p = plan(&[2, 1, 3, 1, 5], &[1, 4], false);
        assert_eq!((&p.groups[..], p.reduce_first), (&[6, 5][..], false));
        assert!(p.is_reduced(1) && !p.is_reduced(0));
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
}

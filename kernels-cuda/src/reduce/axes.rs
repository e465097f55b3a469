//! Planning a reduction on the host: the axes read and checked, and the
//! input simplified (TensorFlow's `ReductionHelper::Simplify`: size-1
//! dimensions dropped, adjacent reduced or kept dimensions merged) by
//! `opreg_op_logic::axes`, as on the CPU; then the GPU layout:
//! `[outer, r, inner]` when the reduced dimensions are one contiguous run,
//! else a permutation that moves them last first.

use opreg_op_logic::axes::Reduction;
use registry_core::kernel::KernelError;
use registry_core::tensor::TensorShape;
use smallvec::SmallVec;

use opreg_cuda::ShapeArg;

/// How the GPU reduces an input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Layout {
    /// Nothing is reduced: the output is the input, reshaped.
    Identity,
    /// The input is `[outer, r, inner]` and the middle dimension is
    /// reduced (`r` = 0 for an empty input: every output is the
    /// reduction of nothing).
    Contiguous {
        /// Product of the kept dimensions before the reduced ones.
        outer: usize,
        /// Product of the reduced dimensions.
        r: usize,
        /// Product of the kept dimensions after them.
        inner: usize,
    },
    /// The input is first gathered into `[kept..., reduced...]` (the
    /// strided copy `dims`/`steps`), then reduced as `[outer, r, 1]`.
    Permuted {
        /// The gather's output dimensions (kept groups, then reduced ones).
        dims: ShapeArg,
        /// The input step of each.
        steps: ShapeArg,
        /// Product of the kept dimensions.
        outer: usize,
        /// Product of the reduced dimensions.
        r: usize,
    },
}

/// A planned reduction: the output's shape and the layout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ReductionPlan {
    /// The output's shape (reduced dims dropped, or kept as 1 with `keep_dims`).
    pub(crate) out_shape: TensorShape,
    /// How to reduce.
    pub(crate) layout: Layout,
}

impl ReductionPlan {
    /// Plans the reduction of a tensor of `dims` over `axes` (negative axes
    /// count from the end; an axis named twice is an error), with TF's messages.
    pub(crate) fn new(dims: &[usize], axes: &[i64], keep_dims: bool) -> Result<Self, KernelError> {
        let Reduction { out_shape, runs } = Reduction::new(dims, axes, keep_dims)?;
        let in_count: usize = dims.iter().product();
        let out_count = out_shape.num_elements();
        let layout = if in_count == 0 {
            if out_count == 0 {
                // Nothing to compute: an empty output.
                Layout::Contiguous {
                    outer: 0,
                    r: 0,
                    inner: 1,
                }
            } else {
                Layout::Contiguous {
                    outer: out_count,
                    r: 0,
                    inner: 1,
                }
            }
        } else {
            layout(&runs)?
        };
        Ok(Self { out_shape, layout })
    }
}

/// The layout of a non-empty input simplified to `groups`, runs of
/// `(size, reduced)` dimensions.
fn layout(groups: &[(usize, bool)]) -> Result<Layout, KernelError> {
    let reduced_runs = groups.iter().filter(|g| g.1).count();
    if reduced_runs == 0 {
        return Ok(Layout::Identity);
    }
    let product = |gs: &[(usize, bool)]| gs.iter().map(|g| g.0).product::<usize>();
    if reduced_runs == 1 {
        let at = groups.iter().position(|g| g.1).unwrap_or(0);
        return Ok(Layout::Contiguous {
            outer: product(&groups[..at]),
            r: groups[at].0,
            inner: product(&groups[at + 1..]),
        });
    }
    // Row-major strides of the groups, then kept groups first.
    let mut strides: SmallVec<[usize; 8]> = SmallVec::from_elem(1, groups.len());
    for i in (0..groups.len() - 1).rev() {
        strides[i] = strides[i + 1] * groups[i + 1].0;
    }
    let mut order: SmallVec<[usize; 8]> = (0..groups.len()).filter(|&i| !groups[i].1).collect();
    order.extend((0..groups.len()).filter(|&i| groups[i].1));
    let as_i64 = |v: usize| i64::try_from(v).map_err(|_| KernelError::internal("size overflow"));
    let dims_v = order
        .iter()
        .map(|&i| as_i64(groups[i].0))
        .collect::<Result<SmallVec<[i64; 8]>, _>>()?;
    let steps_v = order
        .iter()
        .map(|&i| as_i64(strides[i]))
        .collect::<Result<SmallVec<[i64; 8]>, _>>()?;
    let too_many = || {
        KernelError::unimplemented(format!(
            "GPU reductions handle at most 8 alternating runs of reduced and kept dimensions, \
             got {}",
            groups.len()
        ))
    };
    let kept: SmallVec<[(usize, bool); 8]> = groups.iter().copied().filter(|g| !g.1).collect();
    let red: SmallVec<[(usize, bool); 8]> = groups.iter().copied().filter(|g| g.1).collect();
    Ok(Layout::Permuted {
        dims: ShapeArg::new(&dims_v).ok_or_else(too_many)?,
        steps: ShapeArg::new(&steps_v).ok_or_else(too_many)?,
        outer: product(&kept),
        r: product(&red),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(dims: &[usize], axes: &[i64], keep: bool) -> ReductionPlan {
        ReductionPlan::new(dims, axes, keep).unwrap()
    }

    #[test]
    fn contiguous_reductions_become_outer_r_inner() {
        // TF's example: [2, 1, 3, 1, 5] over [1, 4] is [6, 5] over [1].
        let p = plan(&[2, 1, 3, 1, 5], &[1, 4], false);
        assert_eq!(p.out_shape.dims(), &[2, 3, 1]);
        assert_eq!(
            p.layout,
            Layout::Contiguous {
                outer: 6,
                r: 5,
                inner: 1
            }
        );
        // An axis named twice (-2 and 1) is an error, as in TF 2.21.
        let e = ReductionPlan::new(&[4, 6, 7], &[-2, 1], true).unwrap_err();
        assert!(e.to_string().contains("duplicate dimension: 1"), "{e}");
        let p = plan(&[4, 6, 7], &[-2], true);
        assert_eq!(p.out_shape.dims(), &[4, 1, 7]);
        assert_eq!(
            p.layout,
            Layout::Contiguous {
                outer: 4,
                r: 6,
                inner: 7
            }
        );
        let p = plan(&[4, 6], &[0, 1], false);
        assert_eq!(
            p.layout,
            Layout::Contiguous {
                outer: 1,
                r: 24,
                inner: 1
            }
        );
        assert_eq!(plan(&[3, 1], &[1], false).layout, Layout::Identity);
        assert_eq!(plan(&[], &[], false).layout, Layout::Identity);
        assert_eq!(plan(&[1, 1], &[0, 1], false).layout, Layout::Identity);
    }

    #[test]
    fn empty_inputs_reduce_nothing_into_each_output() {
        let p = plan(&[3, 0], &[1], false);
        assert_eq!(
            p.layout,
            Layout::Contiguous {
                outer: 3,
                r: 0,
                inner: 1
            }
        );
        let p = plan(&[0, 3], &[1], false);
        assert_eq!(p.out_shape.dims(), &[0]);
        assert_eq!(
            p.layout,
            Layout::Contiguous {
                outer: 0,
                r: 0,
                inner: 1
            }
        );
    }

    #[test]
    fn scattered_axes_are_permuted_first() {
        // [2, 3, 4, 5] over [0, 2]: gather [3, 5, 2, 4] with steps
        // [20, 1, 60, 5], then [15, 8].
        let p = plan(&[2, 3, 4, 5], &[0, 2], false);
        let Layout::Permuted {
            dims,
            steps,
            outer,
            r,
        } = p.layout
        else {
            panic!("{:?}", p.layout)
        };
        assert_eq!(&dims.d[..4], &[3, 5, 2, 4]);
        assert_eq!(&steps.d[..4], &[20, 1, 60, 5]);
        assert_eq!((outer, r), (15, 8));
        assert_eq!(p.out_shape.dims(), &[3, 5]);
    }
}

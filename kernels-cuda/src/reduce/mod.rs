//! GPU reductions: `Sum`, `Mean`, `Max` (over a set of axes, with
//! `keep_dims`) and `ArgMax` (over one axis), for half, bfloat16, float,
//! double, int32 and int64 (and bool for ArgMax), with int32 or int64
//! `reduction_indices`/`dimension` read on the host.
//!
//! The host canonicalises the axes as TF's `ReductionHelper` does
//! (negative axes, duplicates rejected, size-1 dimensions dropped, adjacent runs
//! merged; `axes`), so the input becomes `[outer, r, inner]` with the
//! middle dimension reduced; reduced axes that are not one contiguous run
//! are first moved last by a strided gather. Then one of three kernels
//! (`launch`): a thread per output for short reductions, a block per row
//! (`inner` = 1) with warp shuffles, or a block per 32 columns; long
//! reductions with few outputs are split into parts whose accumulators a
//! second pass finishes.
//!
//! Numerics (TF's, and `kernels-cpu`'s): half and bfloat16 accumulate in
//! float and round once; integer sums wrap; the int32 mean accumulates in
//! int64 and divides with truncation; float means divide in the compute
//! type; the mean of nothing is NaN (0 for integers), the sum 0, the max
//! -inf (the integer minimum). Max propagates NaN (TF registers Max with
//! Eigen's `MaxReducer<T, PropagateNaN>`, and the CPU kernel does the
//! same). ArgMax follows Eigen's `ArgMaxPairReducer` as the CPU kernel
//! does: the first index of the largest value, NaN never wins, values not
//! above the type's lowest finite value never win, and a row without a
//! winner gives 0; the GPU's partial results combine (larger value, then
//! smaller index) to exactly that answer whatever the order. Float sums
//! and means add in a different order than the CPU (a tree per block), so
//! they may differ from it in the last bits.

mod argmax;
mod axes;
mod launch;
mod source;
mod sum_mean_max;

pub use argmax::{ArgMaxGpu, arg_max_sources};
pub use source::{
    ARG_MAX_DTYPES, ARG_MAX_INDEX_DTYPES, REDUCE_DTYPES, ReduceOp, arg_max_source, reduce_source,
};
pub use sum_mean_max::{ReductionGpu, reduce_sources};

// What Einsum (`linalg`, with `array`) uses of the reductions.
#[cfg(all(feature = "linalg", feature = "array"))]
pub(crate) use launch::{ReduceFunctions, reduce_into};
#[cfg(all(feature = "linalg", feature = "array"))]
pub(crate) use sum_mean_max::{acc_size, source_of};

//! Reductions: `Sum`, `Mean`, `Max`, `Min`, `Prod`, `All`, `Any` (over a set
//! of axes, with `keep_dims`) and `ArgMax`, `ArgMin` (over one axis).
//!
//! Every reduction first simplifies its problem as TensorFlow's
//! `ReductionHelper` does: size-1 dimensions are dropped and adjacent
//! dimensions that are all reduced (or all kept) are merged, so most
//! reductions become one of three shapes: a full reduction, rows
//! (`[outer, reduced]`, the innermost-contiguous fast path) or columns
//! (`[outer, reduced, inner]`). Large inputs are split across threads with
//! rayon; results do not depend on the number of threads.
//!
//! Modules: `axes` (the simplified problem, planned from
//! [`opreg_op_logic::axes`], which reads `reduction_indices` and checks the
//! axes for the GPU kernels too), `engine` (the generic, vectorizable reduction loops),
//! `reducers` (the accumulators of Sum, Mean and Max and their element
//! traits), `sum_mean_max` (those three kernels) and `argmax` (ArgMax).

mod argmax;
mod axes;
mod engine;
mod min_prod_logical;
mod reducers;
mod sum_mean_max;

//! opreg's runtime: running TensorFlow GraphDefs and loading op libraries.
//!
//! [`Graph`] checks a GraphDef as a whole and orders it,
//! [`Graph::infer_shapes`] runs shape inference over it, and [`Session`]
//! runs it with feeds and fetches (kernels created once, plans cached,
//! intermediates freed after their last consumer). [`library`] loads op
//! libraries built with `registry_core::export_op_library!`.
//!
//! The runtime is apart from the framework (`registry-core`) and from the
//! kernel crates, which do not depend on it: editing the executor rebuilds
//! only the runtime and what runs graphs.

mod batch_split;
mod budget;
pub mod control_flow;
mod dataflow;
mod error;
pub mod functions;
mod graph;
pub mod library;
mod optimize;
mod placement;
mod plan;
mod session;
mod shapes;
mod threads;
pub mod versions;

pub use error::{GraphError, RunError, UnknownOp};
pub use functions::{FunctionError, FunctionLibrary};
pub use graph::{Endpoint, Graph, GraphNode, load_graph_def};
pub use optimize::{GraphOptimizations, OptimizeReport, optimize_graph};
pub use placement::requested_device_type;
pub use session::{
    BatchParts, BatchSplit, DEFAULT_MAX_LOOP_ITERATIONS, PreparedRun, RunProfile, Session,
    SessionOptions, StepTime,
};
pub use shapes::GraphShapes;
pub use threads::join_global_pool;

/// True for the ops the runtime runs itself rather than through a kernel:
/// control flow (`Enter`, `Switch`, `Merge`...) and the functional ops
/// (`While`, `If`, `Case`, `PartitionedCall`...). They have no kernels, so
/// kernel coverage and "every op has a kernel" checks leave them out.
///
/// ```
/// assert!(opreg_runtime::is_runtime_op("Merge"));
/// assert!(opreg_runtime::is_runtime_op("StatelessWhile"));
/// assert!(!opreg_runtime::is_runtime_op("MatMul"));
/// ```
pub fn is_runtime_op(op: &str) -> bool {
    control_flow::CONTROL_FLOW_OPS.contains(&op) || functions::ops::FUNCTIONAL_OPS.contains(&op)
}

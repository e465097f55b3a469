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

mod budget;
pub mod control_flow;
mod dataflow;
mod error;
pub mod functions;
mod graph;
pub mod library;
mod placement;
mod plan;
mod session;
mod shapes;
mod threads;
pub mod versions;

pub use error::{GraphError, RunError, UnknownOp};
pub use functions::{FunctionError, FunctionLibrary};
pub use graph::{Endpoint, Graph, GraphNode, load_graph_def};
pub use placement::requested_device_type;
pub use session::{DEFAULT_MAX_LOOP_ITERATIONS, PreparedRun, Session, SessionOptions};
pub use shapes::GraphShapes;

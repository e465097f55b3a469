//! Running TensorFlow GraphDefs: [`Graph`] checks a GraphDef as a whole and
//! orders it, [`Graph::infer_shapes`] runs shape inference over it, and
//! [`Session`] runs it with feeds and fetches (kernels created once, plans
//! cached, intermediates freed after their last consumer).

mod budget;
mod error;
mod graph;
mod placement;
mod plan;
mod session;
mod shapes;

pub use error::{GraphError, RunError};
pub use graph::{Endpoint, Graph, GraphNode, load_graph_def};
pub use placement::requested_device_type;
pub use session::{PreparedRun, Session, SessionOptions};
pub use shapes::GraphShapes;

//! [`GraphError`] (a graph that cannot be run, found before running) and
//! [`RunError`] (a run that failed). Every message names the node and op.

use std::path::PathBuf;

use opreg_proto::{DataType, DataTypeExt};

use registry_core::device::DeviceError;
use registry_core::kernel::{CreateKernelError, KernelError};
use registry_core::node_def::NodeDefError;
use registry_core::registry::RegistryError;
use registry_core::shape::ShapeError;
use registry_core::tensor::TensorError;

/// Why a GraphDef cannot be loaded or run, found by checking it as a whole.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum GraphError {
    /// The file could not be read.
    #[error("cannot read graph file {}: {message}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        message: String,
    },
    /// The bytes are neither a binary nor a text GraphDef.
    #[error("{} is not a GraphDef: {message}", path.display())]
    Decode {
        /// The file.
        path: PathBuf,
        /// What the decoders said.
        message: String,
    },
    /// The graph has no nodes.
    #[error("the graph has no nodes")]
    Empty,
    /// The graph's versions refuse this consumer, or it uses an op removed
    /// at its producer version (TensorFlow's messages).
    #[error(transparent)]
    Version(#[from] crate::versions::VersionError),
    /// Loading failed and the graph was produced by a TensorFlow newer than
    /// its forward-compatibility window allows (TensorFlow's note around the
    /// error).
    #[error(
        "Converting GraphDef to Graph has failed with an error: '{source}' The binary trying to \
         import the GraphDef was built when GraphDef version was {consumer}. The GraphDef was \
         produced by a binary built when GraphDef version was {producer}. The difference between \
         these versions is larger than TensorFlow's forward compatibility guarantee, and might be \
         the root cause for failing to import the GraphDef."
    )]
    BeyondForwardCompatibility {
        /// The graph's producer version.
        producer: i32,
        /// This consumer's version.
        consumer: i32,
        /// Why loading failed.
        source: Box<GraphError>,
    },
    /// Two nodes share a name.
    #[error("node name '{name}' is used by nodes {first} and {second}")]
    DuplicateNode {
        /// The name.
        name: String,
        /// Index of the first node with it.
        first: usize,
        /// Index of the second.
        second: usize,
    },
    /// Ops of the graph are not registered: every one of them, in order of
    /// first use (one line each: the op, how many nodes use it, the first
    /// of them, and the registry's answer with its suggestions).
    #[error("{}", unknown_ops_message(.ops))]
    UnknownOp {
        /// Each unregistered op.
        ops: Vec<UnknownOp>,
    },
    /// A node does not fit its OpDef.
    #[error(transparent)]
    NodeDef(#[from] NodeDefError),
    /// An input names a node that is not in the graph.
    #[error(
        "node '{node}' (op '{op}'): input {index} '{input}' names node '{missing}', which is not in the graph"
    )]
    DanglingInput {
        /// The node.
        node: String,
        /// Its op.
        op: String,
        /// The input's index in `NodeDef.input`.
        index: usize,
        /// The input string.
        input: String,
        /// The missing node's name.
        missing: String,
    },
    /// An input names an output index its source does not have.
    #[error(
        "node '{node}' (op '{op}'): input {index} '{input}' asks for output {port} of '{source_node}', which has {num_outputs} outputs"
    )]
    BadInputPort {
        /// The node.
        node: String,
        /// Its op.
        op: String,
        /// The input's index.
        index: usize,
        /// The input string.
        input: String,
        /// The source node.
        source_node: String,
        /// The requested output.
        port: usize,
        /// The source's output count.
        num_outputs: usize,
    },
    /// An input's dtype differs from what the node expects there.
    #[error("node '{node}' (op '{op}'): input {index} was passed {} from {input} incompatible with expected {}", .actual.type_name(), .expected.type_name())]
    InputType {
        /// The node.
        node: String,
        /// Its op.
        op: String,
        /// The input's index.
        index: usize,
        /// The input string.
        input: String,
        /// The dtype the node expects.
        expected: DataType,
        /// The dtype the source produces.
        actual: DataType,
    },
    /// The data and control edges form a cycle.
    #[error("the graph has a cycle through {} node(s), e.g. {}", .nodes.len(), .nodes.iter().take(5).map(|n| format!("'{n}'")).collect::<Vec<_>>().join(" -> "))]
    Cycle {
        /// Nodes on (or behind) the cycle, in edge order where known.
        nodes: Vec<String>,
    },
    /// Shape inference failed for a node.
    #[error("shape inference: {0}")]
    Shape(#[from] ShapeError),
    /// A feed or fetch names no node, or an output the node does not have.
    #[error("{kind} '{name}': {reason}")]
    UnknownEndpoint {
        /// `feed` or `fetch`.
        kind: &'static str,
        /// The name as given (`node:port`).
        name: String,
        /// What is wrong.
        reason: String,
    },
    /// The graph's function library is not valid, or a function cannot be
    /// instantiated.
    #[error(transparent)]
    Function(#[from] crate::functions::FunctionError),
    /// A function's instantiated body is not a valid graph.
    #[error("in function '{function}': {source}")]
    InFunction {
        /// The function.
        function: String,
        /// What is wrong with its body.
        source: Box<GraphError>,
    },
    /// TF 1 control flow that cannot run: inputs from different loop
    /// frames, an `Exit` outside a loop, a back edge that does not end at a
    /// `Merge`...
    #[error("node '{node}' (op '{op}'): {message}")]
    ControlFlow {
        /// The node.
        node: String,
        /// Its op.
        op: String,
        /// What is wrong.
        message: String,
    },
    /// No device can run a node.
    #[error("cannot place node '{node}' (op '{op}'): {source}")]
    Placement {
        /// The node.
        node: String,
        /// Its op.
        op: String,
        /// The kernel lookup or construction error for the preferred device.
        #[source]
        source: Box<CreateKernelError>,
    },
}

/// Why a run failed.
///
/// A device named in [`SessionOptions::devices`](crate::SessionOptions)
/// that cannot be opened fails with [`RunError::Device`]: on a machine
/// without a GPU, `"no GPU device: ..."`.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum RunError {
    /// The feeds or fetches do not fit the graph.
    #[error(transparent)]
    Graph(Box<GraphError>),
    /// A fed tensor has another dtype than the output it replaces.
    #[error("feed '{name}' has dtype {}, but the graph's '{name}' is {}", .actual.type_name(), .expected.type_name())]
    FeedType {
        /// The feed's name.
        name: String,
        /// The graph's dtype there.
        expected: DataType,
        /// The fed tensor's dtype.
        actual: DataType,
    },
    /// A prepared run got another number of feed values than it names.
    #[error("the run names {} feeds ({}) but {given} values were given", .expected.len(), .expected.join(", "))]
    FeedCount {
        /// The feeds named when the run was prepared.
        expected: Vec<String>,
        /// The number of values given.
        given: usize,
    },
    /// The same name is fed twice.
    #[error("'{0}' is fed twice")]
    DuplicateFeed(String),
    /// A kernel failed.
    #[error("node '{node}' (op '{op}', device '{device}'): {source}")]
    Compute {
        /// The node.
        node: String,
        /// Its op.
        op: String,
        /// Its device.
        device: String,
        /// The kernel's error (boxed to keep the error small).
        #[source]
        source: Box<KernelError>,
    },
    /// A device the session was asked to use is not available.
    #[error(transparent)]
    Device(#[from] DeviceError),
    /// A tensor could not be moved between the host and a device for a
    /// node's input (or a fetch).
    #[error("node '{node}' (op '{op}'): moving input {index} to {to}: {source}")]
    Transfer {
        /// The consuming node (or the fetch's name).
        node: String,
        /// Its op (`fetch` for fetches).
        op: String,
        /// The input's index.
        index: usize,
        /// Where it was going (`CPU`, `GPU`).
        to: String,
        /// What failed.
        #[source]
        source: Box<TensorError>,
    },
    /// The run would hold more bytes of tensors at once than
    /// [`SessionOptions::max_memory_bytes`](crate::SessionOptions) allows.
    #[error(
        "node '{node}' (op '{op}'): the run now holds {bytes} bytes of tensors, over the session's limit of {limit} bytes"
    )]
    MemoryLimit {
        /// The node whose outputs went over (a feed's name for feeds).
        node: String,
        /// Its op (`feed` for feeds).
        op: String,
        /// The bytes held after it.
        bytes: u64,
        /// The limit.
        limit: u64,
    },
    /// A loop (a TF 1 loop frame) went over the session's iteration or
    /// time limit.
    #[error("loop '{frame}' was stopped after {iterations} iterations: it reached {reason}")]
    LoopLimit {
        /// The loop's frame name.
        frame: String,
        /// The iterations it completed.
        iterations: u64,
        /// Which limit.
        reason: String,
    },
    /// A fetched tensor is dead: it lies on the branch a `Switch` did not
    /// take (TF fails such a fetch too).
    #[error(
        "fetch '{fetch}' has no value: it is dead (on the branch of a Switch that was not taken)"
    )]
    DeadFetch {
        /// The fetch.
        fetch: String,
    },
    /// The run ended without computing a fetch: nodes waited for inputs
    /// that never came (a graph whose control flow is not well formed).
    #[error(
        "fetch '{fetch}' was never computed: the run ended with nodes still waiting for inputs{}",
        waiting_list(.waiting)
    )]
    NotComputed {
        /// The fetch.
        fetch: String,
        /// Some of the nodes that got part of their inputs but never ran.
        waiting: Vec<String>,
    },
}

fn waiting_list(waiting: &[String]) -> String {
    if waiting.is_empty() {
        String::new()
    } else {
        format!(
            " (e.g. {})",
            waiting
                .iter()
                .map(|n| format!("'{n}'"))
                .collect::<Vec<_>>()
                .join(", ")
        )
    }
}

impl RunError {
    /// True for a fetch that lies on an untaken branch.
    pub fn is_dead_fetch(&self) -> bool {
        matches!(self, RunError::DeadFetch { .. })
    }
}

impl From<GraphError> for RunError {
    fn from(e: GraphError) -> Self {
        RunError::Graph(Box::new(e))
    }
}

/// An op a graph uses that is not registered (see [`GraphError::UnknownOp`]).
#[derive(Debug, Clone)]
pub struct UnknownOp {
    /// The op's name.
    pub op: String,
    /// How many nodes use it.
    pub count: usize,
    /// The first node that uses it.
    pub first_node: String,
    /// The registry's answer for it (with suggestions).
    pub source: Box<RegistryError>,
}

fn unknown_ops_message(ops: &[UnknownOp]) -> String {
    let line = |u: &UnknownOp| {
        let uses = if u.count == 1 {
            String::new()
        } else {
            format!(" (and {} more nodes)", u.count - 1)
        };
        format!("node '{}'{uses}: {}", u.first_node, u.source)
    };
    match ops {
        [one] => line(one),
        _ => {
            let mut m = format!(
                "{} ops of the graph are not registered in this binary:",
                ops.len()
            );
            for u in ops {
                m.push_str("\n  ");
                m.push_str(&line(u));
            }
            m
        }
    }
}

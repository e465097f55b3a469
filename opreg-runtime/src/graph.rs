//! [`Graph`]: a GraphDef checked as a whole (ops, NodeDefs, edges, dtypes,
//! cycles) and put in topological order, ready for planning and shape
//! inference.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::path::Path;

use opreg_proto::{DataType, GraphDef, NodeDef, OpDef, TextFormat, VersionDef};
use rustc_hash::FxHashMap;

use crate::GraphError;
use crate::control_flow::ControlFlow;
use crate::error::UnknownOp;
use crate::functions::FunctionLibrary;
use crate::versions;
use registry_core::node_def::{
    add_defaults_to_node_def, in_out_types_for_node, parse_input, types_compatible,
    validate_node_def,
};
use registry_core::registry::OpRegistry;
use registry_core::shape::ShapeFn;

/// A data edge: output `port` of node `node` (an index into [`Graph::nodes`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Endpoint {
    /// The producing node's index.
    pub node: usize,
    /// Its output index.
    pub port: usize,
}

/// One node of a checked graph.
#[derive(Debug, Clone)]
pub struct GraphNode {
    /// The NodeDef, with the OpDef's defaults added.
    pub def: NodeDef,
    /// The op's OpDef.
    pub op_def: OpDef,
    /// The op's shape function.
    pub shape_fn: Option<ShapeFn>,
    /// Where each data input comes from, in order.
    pub inputs: Vec<Endpoint>,
    /// Nodes that must run first (control inputs `^name`).
    pub control_inputs: Vec<usize>,
    /// The dtype of each input.
    pub input_types: Vec<DataType>,
    /// The dtype of each output.
    pub output_types: Vec<DataType>,
}

impl GraphNode {
    /// The node's name.
    pub fn name(&self) -> &str {
        &self.def.name
    }

    /// The node's op.
    pub fn op(&self) -> &str {
        &self.def.op
    }
}

/// A GraphDef that passed every check that needs no input values, with its
/// nodes in a topological order (inputs before consumers; among independent
/// nodes, the GraphDef's order).
///
/// ```
/// use opreg_runtime::Graph;
/// use registry_core::proto::{GraphDef, TextFormat};
/// # use opreg_standard_ops as _; // the ops used below
///
/// let graph_def = GraphDef::from_pbtxt(r#"
///   node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
///   node { name: "y" op: "Abs" input: "x" attr { key: "T" value { type: DT_FLOAT } } }
/// "#).unwrap();
/// let graph = Graph::new(graph_def).unwrap();
/// assert_eq!(graph.node("y").unwrap().inputs[0].node, graph.index_of("x").unwrap());
///
/// let cyclic = GraphDef::from_pbtxt(r#"
///   node { name: "a" op: "Abs" input: "b" attr { key: "T" value { type: DT_FLOAT } } }
///   node { name: "b" op: "Abs" input: "a" attr { key: "T" value { type: DT_FLOAT } } }
/// "#).unwrap();
/// assert!(Graph::new(cyclic).unwrap_err().to_string().contains("cycle"));
/// ```
#[derive(Debug, Clone)]
pub struct Graph {
    nodes: Vec<GraphNode>,
    index: FxHashMap<String, usize>,
    versions: Option<VersionDef>,
    library: FunctionLibrary,
    /// The loop frames of TF 1 control flow, when the graph has any of its
    /// ops (`Enter`, `Exit`, `Switch`, `Merge`, `NextIteration`,
    /// `LoopCond`).
    control_flow: Option<ControlFlow>,
}

/// Reads a GraphDef from a binary (`.pb`) or text (`.pbtxt`) file; the
/// format is chosen by the extension, else by trying binary then text.
pub fn load_graph_def(path: impl AsRef<Path>) -> Result<GraphDef, GraphError> {
    let path = path.as_ref();
    let bytes = std::fs::read(path).map_err(|e| GraphError::Io {
        path: path.to_owned(),
        message: e.to_string(),
    })?;
    let is_text = path.extension().is_some_and(|e| e == "pbtxt" || e == "txt");
    let decode_text = |bytes: &[u8]| -> Result<GraphDef, String> {
        let text = std::str::from_utf8(bytes).map_err(|_| "not UTF-8 text".to_owned())?;
        GraphDef::from_pbtxt(text).map_err(|e| e.to_string())
    };
    let decode_binary =
        |bytes: &[u8]| <GraphDef as prost::Message>::decode(bytes).map_err(|e| e.to_string());
    let result = if is_text {
        decode_text(&bytes).map_err(|text| format!("as text: {text}"))
    } else {
        decode_binary(&bytes).or_else(|binary| {
            decode_text(&bytes).map_err(|text| format!("as binary: {binary}; as text: {text}"))
        })
    };
    result.map_err(|message| GraphError::Decode {
        path: path.to_owned(),
        message,
    })
}

impl Graph {
    /// Checks `graph_def` against the global op registry.
    pub fn new(graph_def: GraphDef) -> Result<Self, GraphError> {
        Self::with_registry(OpRegistry::global(), graph_def)
    }

    /// Reads and checks a graph file (see [`load_graph_def`]).
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self, GraphError> {
        Self::new(load_graph_def(path)?)
    }

    /// Checks `graph_def` against `ops`: its versions (TF's `CheckVersions`,
    /// see [`versions`]), every op registered and not removed at the
    /// graph's producer version, every NodeDef
    /// valid (TF's `ValidateNodeDef`), every input naming an existing node
    /// and output of the right dtype, no cycles, and shape inference over
    /// the whole graph (Placeholders with their declared, possibly partial,
    /// shapes).
    pub fn with_registry(ops: &OpRegistry, mut graph_def: GraphDef) -> Result<Self, GraphError> {
        let versions = graph_def.versions.clone();
        let library = graph_def.library.take().unwrap_or_default();
        FunctionLibrary::new(ops, library)
            .map_err(GraphError::Function)
            .and_then(|library| Self::checked_with_library(ops, graph_def, library))
            .map_err(|e| {
                if versions::beyond_forward_compatibility(versions.as_ref()) {
                    GraphError::BeyondForwardCompatibility {
                        producer: versions.as_ref().map_or(0, |v| v.producer),
                        consumer: versions::GRAPH_DEF_VERSION,
                        source: Box::new(e),
                    }
                } else {
                    e
                }
            })
    }

    /// [`with_registry`](Self::with_registry) for a graph whose functions
    /// are `library` (a function's instantiated body, or a GraphDef whose
    /// `library` was taken out).
    pub(crate) fn checked_with_library(
        ops: &OpRegistry,
        graph_def: GraphDef,
        library: FunctionLibrary,
    ) -> Result<Self, GraphError> {
        versions::check_versions(graph_def.versions.as_ref())?;
        let producer = graph_def.versions.as_ref().map_or(0, |v| v.producer);
        if graph_def.node.is_empty() {
            return Err(GraphError::Empty);
        }
        let mut index: FxHashMap<String, usize> = FxHashMap::default();
        for (i, node) in graph_def.node.iter().enumerate() {
            if let Some(&first) = index.get(&node.name) {
                return Err(GraphError::DuplicateNode {
                    name: node.name.clone(),
                    first,
                    second: i,
                });
            }
            index.insert(node.name.clone(), i);
        }
        let unknown = unknown_ops(ops, &library, &graph_def.node);
        if !unknown.is_empty() {
            return Err(GraphError::UnknownOp { ops: unknown });
        }
        let mut nodes = Vec::with_capacity(graph_def.node.len());
        for mut def in graph_def.node {
            // A registered op, else a function of the library (whose
            // signature is its OpDef; its shapes are unknown).
            let (op_def, shape_fn) = match ops.look_up(&def.op) {
                Ok(op) => (op.op_def(), op.shape_fn()),
                Err(e) => match library.signature(&def.op) {
                    Some(signature) => (signature, None),
                    None => {
                        return Err(GraphError::UnknownOp {
                            ops: vec![UnknownOp {
                                op: def.op.clone(),
                                count: 1,
                                first_node: def.name.clone(),
                                source: Box::new(e),
                            }],
                        });
                    }
                },
            };
            versions::check_op_deprecation(op_def, producer)?;
            add_defaults_to_node_def(op_def, &mut def);
            validate_node_def(&def, op_def)?;
            let (input_types, output_types) = in_out_types_for_node(&def, op_def)?;
            nodes.push(GraphNode {
                def,
                op_def: op_def.clone(),
                shape_fn,
                inputs: Vec::new(),
                control_inputs: Vec::new(),
                input_types,
                output_types,
            });
        }
        for i in 0..nodes.len() {
            let (inputs, controls) = resolve_inputs(&nodes, &index, i)?;
            nodes[i].inputs = inputs;
            nodes[i].control_inputs = controls;
        }
        let order = topological_order(&nodes)?;
        let mut graph = Self::reordered(nodes, &order);
        graph.versions = graph_def.versions;
        graph.library = library;
        graph.control_flow = ControlFlow::analyze(&graph)?;
        // Static shape errors (a MatMul of constants that cannot multiply,
        // a bad Reshape of a constant...) are found before anything runs.
        graph.infer_shapes(&[])?;
        Ok(graph)
    }

    /// The nodes in topological order.
    pub fn nodes(&self) -> &[GraphNode] {
        &self.nodes
    }

    /// The node called `name`.
    pub fn node(&self, name: &str) -> Option<&GraphNode> {
        self.index_of(name).map(|i| &self.nodes[i])
    }

    /// The index in [`nodes`](Self::nodes) of the node called `name`.
    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.index.get(name).copied()
    }

    /// Resolves `node:port` (or `node` for port 0) to an endpoint; `kind`
    /// (`feed` or `fetch`) goes into the error.
    pub fn endpoint(&self, name: &str, kind: &'static str) -> Result<Endpoint, GraphError> {
        let parsed = parse_input(name).map_err(|e| GraphError::UnknownEndpoint {
            kind,
            name: name.to_owned(),
            reason: e.to_string(),
        })?;
        if parsed.is_control {
            return Err(GraphError::UnknownEndpoint {
                kind,
                name: name.to_owned(),
                reason: "a control input names no tensor".into(),
            });
        }
        let node = self
            .index_of(parsed.node)
            .ok_or_else(|| GraphError::UnknownEndpoint {
                kind,
                name: name.to_owned(),
                reason: format!("the graph has no node '{}'", parsed.node),
            })?;
        let outputs = self.nodes[node].output_types.len();
        if parsed.port >= outputs {
            return Err(GraphError::UnknownEndpoint {
                kind,
                name: name.to_owned(),
                reason: format!(
                    "node '{}' (op '{}') has {outputs} output(s)",
                    parsed.node, self.nodes[node].def.op
                ),
            });
        }
        Ok(Endpoint {
            node,
            port: parsed.port,
        })
    }

    /// The dtype of an endpoint.
    pub fn dtype(&self, endpoint: Endpoint) -> DataType {
        self.nodes[endpoint.node].output_types[endpoint.port]
    }

    fn reordered(nodes: Vec<GraphNode>, order: &[usize]) -> Self {
        let mut position = vec![0; nodes.len()];
        for (pos, &old) in order.iter().enumerate() {
            position[old] = pos;
        }
        let mut slots: Vec<Option<GraphNode>> = nodes.into_iter().map(Some).collect();
        let mut sorted = Vec::with_capacity(slots.len());
        for &old in order {
            if let Some(mut node) = slots[old].take() {
                for e in &mut node.inputs {
                    e.node = position[e.node];
                }
                for c in &mut node.control_inputs {
                    *c = position[*c];
                }
                sorted.push(node);
            }
        }
        let index = sorted
            .iter()
            .enumerate()
            .map(|(i, n)| (n.def.name.clone(), i))
            .collect();
        Self {
            nodes: sorted,
            index,
            versions: None,
            library: FunctionLibrary::default(),
            control_flow: None,
        }
    }

    /// The graph's functions (its GraphDef's `library`).
    pub fn library(&self) -> &FunctionLibrary {
        &self.library
    }

    /// The graph as a GraphDef: its nodes in topological order (each with
    /// its OpDef's defaults), versions and functions.
    ///
    /// ```
    /// use opreg_runtime::Graph;
    /// use registry_core::proto::{GraphDef, TextFormat};
    /// # use opreg_standard_ops as _; // the ops used below
    /// let graph = Graph::new(GraphDef::from_pbtxt(r#"
    ///   node { name: "y" op: "Abs" input: "x" attr { key: "T" value { type: DT_FLOAT } } }
    ///   node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
    /// "#).unwrap()).unwrap();
    /// let names: Vec<String> = graph.to_graph_def().node.into_iter().map(|n| n.name).collect();
    /// assert_eq!(names, ["x", "y"]);
    /// ```
    pub fn to_graph_def(&self) -> GraphDef {
        let library = self.library.to_proto();
        GraphDef {
            node: self.nodes.iter().map(|n| n.def.clone()).collect(),
            versions: self.versions.clone(),
            library: (!library.function.is_empty()).then_some(library),
            ..GraphDef::default()
        }
    }

    /// The graph's loop frames, when it has TF 1 control flow.
    pub fn control_flow(&self) -> Option<&ControlFlow> {
        self.control_flow.as_ref()
    }

    /// True when the runtime runs node `node` itself rather than through a
    /// registered kernel: TF 1 control flow (`Enter`, `Switch`, `Merge`...),
    /// the functional ops (`While`, `If`, `PartitionedCall`...) and calls of
    /// the library's functions.
    pub fn is_run_by_runtime(&self, node: usize) -> bool {
        let op = self.nodes[node].def.op.as_str();
        crate::is_runtime_op(op) || self.library.signature(op).is_some()
    }

    /// True when input `input` of node `node` is a loop's back edge (a
    /// `NextIteration` into a `Merge`): the one kind of edge that may close
    /// a cycle, and that topological order ignores.
    pub fn is_back_edge(&self, node: usize, input: usize) -> bool {
        let n = &self.nodes[node];
        n.inputs
            .get(input)
            .is_some_and(|e| is_back_edge(&self.nodes[e.node], n))
    }

    /// The GraphDef's `versions` (producer, min_consumer, bad_consumers).
    pub fn versions(&self) -> Option<&VersionDef> {
        self.versions.as_ref()
    }

    /// TF's warning for each op (once) that the graph uses and that is
    /// deprecated at a version newer than the graph's producer: it still
    /// runs, but a graph re-exported by a newer TensorFlow will not.
    pub fn deprecation_warnings(&self) -> Vec<String> {
        let producer = self.versions.as_ref().map_or(0, |v| v.producer);
        let mut seen = std::collections::BTreeSet::new();
        self.nodes
            .iter()
            .filter(|n| seen.insert(n.op_def.name.as_str()))
            .filter_map(|n| versions::deprecation_warning(&n.op_def, producer))
            .collect()
    }
}

/// Resolves node `i`'s input strings to endpoints and control predecessors.
fn resolve_inputs(
    nodes: &[GraphNode],
    index: &FxHashMap<String, usize>,
    i: usize,
) -> Result<(Vec<Endpoint>, Vec<usize>), GraphError> {
    let node = &nodes[i];
    let mut inputs = Vec::new();
    let mut controls = Vec::new();
    for (k, input) in node.def.input.iter().enumerate() {
        // validate_node_def has parsed every input already.
        let Ok(parsed) = parse_input(input) else {
            continue;
        };
        let Some(&source) = index.get(parsed.node) else {
            return Err(GraphError::DanglingInput {
                node: node.def.name.clone(),
                op: node.def.op.clone(),
                index: k,
                input: input.clone(),
                missing: parsed.node.to_owned(),
            });
        };
        if parsed.is_control {
            controls.push(source);
            continue;
        }
        let num_outputs = nodes[source].output_types.len();
        if parsed.port >= num_outputs {
            return Err(GraphError::BadInputPort {
                node: node.def.name.clone(),
                op: node.def.op.clone(),
                index: k,
                input: input.clone(),
                source_node: parsed.node.to_owned(),
                port: parsed.port,
                num_outputs,
            });
        }
        let position = inputs.len();
        let actual = nodes[source].output_types[parsed.port];
        if let Some(&expected) = node.input_types.get(position)
            && !types_compatible(expected, actual)
        {
            return Err(GraphError::InputType {
                node: node.def.name.clone(),
                op: node.def.op.clone(),
                index: position,
                input: input.clone(),
                expected,
                actual,
            });
        }
        inputs.push(Endpoint {
            node: source,
            port: parsed.port,
        });
    }
    Ok((inputs, controls))
}

/// A loop's back edge: a data edge from a `NextIteration` into a `Merge`.
fn is_back_edge(source: &GraphNode, consumer: &GraphNode) -> bool {
    source.def.op == "NextIteration" && consumer.def.op == "Merge"
}

/// Kahn's algorithm, taking the lowest original index first among ready
/// nodes (loop back edges left out); a leftover means a cycle.
fn topological_order(nodes: &[GraphNode]) -> Result<Vec<usize>, GraphError> {
    let n = nodes.len();
    let mut pending = vec![0usize; n];
    let mut consumers: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (i, node) in nodes.iter().enumerate() {
        for source in node
            .inputs
            .iter()
            .map(|e| e.node)
            .filter(|&s| !is_back_edge(&nodes[s], node))
            .chain(node.control_inputs.iter().copied())
        {
            pending[i] += 1;
            consumers[source].push(i);
        }
    }
    let mut ready: BinaryHeap<Reverse<usize>> =
        (0..n).filter(|&i| pending[i] == 0).map(Reverse).collect();
    let mut order = Vec::with_capacity(n);
    while let Some(Reverse(i)) = ready.pop() {
        order.push(i);
        for &c in &consumers[i] {
            pending[c] -= 1;
            if pending[c] == 0 {
                ready.push(Reverse(c));
            }
        }
    }
    if order.len() < n {
        let nodes_on_cycle = cycle_path(nodes, &pending);
        return Err(GraphError::Cycle {
            nodes: nodes_on_cycle,
        });
    }
    Ok(order)
}

/// Follows unresolved inputs from a stuck node until a node repeats: the
/// names along the cycle.
fn cycle_path(nodes: &[GraphNode], pending: &[usize]) -> Vec<String> {
    let Some(start) = (0..nodes.len()).find(|&i| pending[i] > 0) else {
        return Vec::new();
    };
    let mut seen = vec![usize::MAX; nodes.len()];
    let mut path = Vec::new();
    let mut current = start;
    while seen[current] == usize::MAX {
        seen[current] = path.len();
        path.push(current);
        let next = nodes[current]
            .inputs
            .iter()
            .map(|e| e.node)
            .filter(|&s| !is_back_edge(&nodes[s], &nodes[current]))
            .chain(nodes[current].control_inputs.iter().copied())
            .find(|&s| pending[s] > 0);
        match next {
            Some(s) => current = s,
            None => break,
        }
    }
    let from = if seen[current] == usize::MAX {
        0
    } else {
        seen[current]
    };
    let mut names: Vec<String> = path[from..]
        .iter()
        .rev()
        .map(|&i| nodes[i].def.name.clone())
        .collect();
    if let Some(first) = names.first().cloned() {
        names.push(first);
    }
    names
}

/// Every op of `nodes` that `ops` does not hold, in order of first use,
/// with its node count and first node.
fn unknown_ops(ops: &OpRegistry, library: &FunctionLibrary, nodes: &[NodeDef]) -> Vec<UnknownOp> {
    let mut unknown: Vec<UnknownOp> = Vec::new();
    for def in nodes {
        if let Some(u) = unknown.iter_mut().find(|u| u.op == def.op) {
            u.count += 1;
            continue;
        }
        if library.signature(&def.op).is_some() {
            continue;
        }
        if let Err(e) = ops.look_up(&def.op) {
            unknown.push(UnknownOp {
                op: def.op.clone(),
                count: 1,
                first_node: def.name.clone(),
                source: Box::new(e),
            });
        }
    }
    unknown
}

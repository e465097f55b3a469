//! What the rewrite passes share: the nodes a signature preserves, pruning
//! to what they need, and building nodes and graphs.

use opreg_proto::{AttrValue, GraphDef, NodeDef};
use registry_core::attr::NodeAttrs;
use registry_core::node_def::parse_input;
use registry_core::registry::OpRegistry;
use registry_core::tensor::Tensor;
use rustc_hash::FxHashSet;

use crate::{Endpoint, Graph, GraphError, GraphNode};

/// The nodes a rewrite must leave in place, by name: those with a fed
/// output (their value comes from outside, so nothing may be computed
/// from them ahead of time), and the fetched and target nodes (their
/// outputs must keep their values).
#[derive(Debug, Clone, Default)]
pub(crate) struct Preserve {
    fed: FxHashSet<String>,
    kept: FxHashSet<String>,
}

impl Preserve {
    /// The nodes of a run's feeds, fetches and targets, each checked
    /// against `graph`.
    pub(crate) fn new(
        graph: &Graph,
        feeds: &[&str],
        fetches: &[&str],
        targets: &[&str],
    ) -> Result<Self, GraphError> {
        let node_of = |name: &str, kind: &'static str| -> Result<String, GraphError> {
            let e = graph.endpoint(name, kind)?;
            Ok(graph.nodes()[e.node].def.name.clone())
        };
        let mut preserve = Self::default();
        for name in feeds {
            preserve.fed.insert(node_of(name, "feed")?);
        }
        for name in fetches {
            preserve.kept.insert(node_of(name, "fetch")?);
        }
        for name in targets {
            let node = graph
                .node(name)
                .ok_or_else(|| GraphError::UnknownEndpoint {
                    kind: "target",
                    name: (*name).to_owned(),
                    reason: format!("the graph has no node '{name}'"),
                })?;
            preserve.kept.insert(node.def.name.clone());
        }
        Ok(preserve)
    }

    /// True when an output of node `name` is fed.
    pub(crate) fn is_fed(&self, name: &str) -> bool {
        self.fed.contains(name)
    }

    /// True when node `name` is fed, fetched or a target.
    pub(crate) fn is_preserved(&self, name: &str) -> bool {
        self.fed.contains(name) || self.kept.contains(name)
    }
}

/// The nodes the preserved ones need: their ancestors through data and
/// control edges (a fed node's too, so that the graph stays whole), as a
/// checked graph in which every node is needed.
pub(crate) fn pruned(
    graph: &Graph,
    preserve: &Preserve,
    ops: &OpRegistry,
) -> Result<Graph, GraphError> {
    let nodes = graph.nodes();
    let mut needed = vec![false; nodes.len()];
    let mut stack: Vec<usize> = (0..nodes.len())
        .filter(|&i| preserve.is_preserved(&nodes[i].def.name))
        .collect();
    while let Some(i) = stack.pop() {
        if std::mem::replace(&mut needed[i], true) {
            continue;
        }
        stack.extend(nodes[i].inputs.iter().map(|e| e.node));
        stack.extend(nodes[i].control_inputs.iter().copied());
    }
    let defs = (0..nodes.len())
        .filter(|&i| needed[i])
        .map(|i| nodes[i].def.clone())
        .collect();
    rebuild(graph, defs, ops)
}

/// `graph` with its nodes replaced by `defs` (its versions and functions
/// kept), checked like any graph.
pub(crate) fn rebuild(
    graph: &Graph,
    defs: Vec<NodeDef>,
    ops: &OpRegistry,
) -> Result<Graph, GraphError> {
    let graph_def = GraphDef {
        node: defs,
        versions: graph.versions().cloned(),
        ..GraphDef::default()
    };
    Graph::checked_with_library(ops, graph_def, graph.library().clone())
}

/// A `Const` node named `name` holding `value`, on `device`.
pub(crate) fn const_node(name: String, device: &str, value: &Tensor) -> NodeDef {
    NodeDef {
        name,
        op: "Const".into(),
        device: device.to_owned(),
        attr: [
            ("dtype".to_owned(), AttrValue::from(value.dtype())),
            ("value".to_owned(), AttrValue::from(value.to_proto())),
        ]
        .into(),
        ..NodeDef::default()
    }
}

/// The value of a `Const` node.
pub(crate) fn const_value(node: &GraphNode) -> Option<Tensor> {
    if node.def.op != "Const" {
        return None;
    }
    NodeAttrs::new(&node.def, &node.op_def)
        .get::<Tensor>("value")
        .ok()
}

/// How a NodeDef names the tensor `e` of `graph`: `node`, or `node:port`.
pub(crate) fn tensor_name(graph: &Graph, e: Endpoint) -> String {
    let name = &graph.nodes()[e.node].def.name;
    if e.port == 0 {
        name.clone()
    } else {
        format!("{name}:{}", e.port)
    }
}

/// How many inputs (data or control) of other nodes name each node.
pub(crate) fn use_counts(graph: &Graph) -> Vec<usize> {
    let mut uses = vec![0; graph.nodes().len()];
    for node in graph.nodes() {
        for e in &node.inputs {
            uses[e.node] += 1;
        }
        for &c in &node.control_inputs {
            uses[c] += 1;
        }
    }
    uses
}

/// Each node's only reader: the node that alone uses it (once, as a data
/// input), when it is neither fed nor fetched; `None` otherwise.
pub(crate) fn sole_readers(graph: &Graph, preserve: &Preserve) -> Vec<Option<usize>> {
    let nodes = graph.nodes();
    let uses = use_counts(graph);
    let mut reader: Vec<Option<usize>> = vec![None; nodes.len()];
    for (i, node) in nodes.iter().enumerate() {
        for e in &node.inputs {
            reader[e.node] = Some(i);
        }
    }
    reader
        .into_iter()
        .enumerate()
        .map(|(i, r)| r.filter(|_| uses[i] == 1 && !preserve.is_preserved(&nodes[i].def.name)))
        .collect()
}

/// The graph of the nodes of `defs` still there (`None`: removed) after a
/// pass that made `count` rewrites; `None` when it made none.
pub(crate) fn rewritten(
    graph: &Graph,
    defs: Vec<Option<NodeDef>>,
    count: usize,
    ops: &OpRegistry,
) -> Result<Option<(Graph, usize)>, GraphError> {
    if count == 0 {
        return Ok(None);
    }
    let defs = defs.into_iter().flatten().collect();
    Ok(Some((rebuild(graph, defs, ops)?, count)))
}

/// A node name not yet taken in `graph` or `taken`, built from `base`.
pub(crate) fn unique_name(graph: &Graph, taken: &mut FxHashSet<String>, base: &str) -> String {
    let mut name = base.to_owned();
    let mut n = 1;
    while graph.node(&name).is_some() || taken.contains(&name) {
        name = format!("{base}_{n}");
        n += 1;
    }
    taken.insert(name.clone());
    name
}

/// The control inputs of a NodeDef (`^name`), as written.
pub(crate) fn control_inputs(def: &NodeDef) -> impl Iterator<Item = &String> {
    def.input
        .iter()
        .filter(|input| parse_input(input).is_ok_and(|parsed| parsed.is_control))
}

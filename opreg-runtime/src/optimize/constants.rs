//! Constant folding: the nodes whose inputs are all constants are computed
//! once, with the CPU kernels, and replaced by `Const` nodes holding their
//! values (TensorFlow's Grappler `ConstantFolding`, for the nodes it can
//! evaluate).
//!
//! A node is folded when it is stateless, a registered op (not a function
//! call, not control flow), not fed, its dtypes are fixed-size, all its
//! data and control inputs are constants (or folded), and its outputs are
//! at most `max_constant_bytes` each (known from shape inference, else
//! checked once computed). Only the constants a remaining node reads, or a
//! fetch, are materialized; a node no kernel can compute on its inputs
//! stays as it was, for the run to report.

use opreg_proto::NodeDef;
use registry_core::kernel::KernelRegistry;
use registry_core::registry::OpRegistry;
use registry_core::shape::Shape;
use registry_core::tensor::{Tensor, element_size};
use rustc_hash::{FxHashMap, FxHashSet};

use super::GraphOptimizations;
use super::edit::{self, Preserve};
use crate::{Endpoint, Graph, GraphError, GraphNode, Session, SessionOptions};

/// Ops that are never folded: placeholders are values from outside.
const NEVER_FOLDED: &[&str] = &["Placeholder", "PlaceholderV2", "PlaceholderWithDefault"];

/// Folds `graph`'s constant computations; `None` when there are none. The
/// count is the number of tensors replaced by constants.
pub(super) fn fold(
    graph: &Graph,
    preserve: &Preserve,
    session_options: &SessionOptions,
    ops: &'static OpRegistry,
    kernels: &'static KernelRegistry,
) -> Result<Option<(Graph, usize)>, GraphError> {
    let options = &session_options.optimizations;
    let nodes = graph.nodes();
    let shapes = graph.infer_shapes(&[]).ok();
    let mut constant = vec![false; nodes.len()];
    for (i, node) in nodes.iter().enumerate() {
        constant[i] = !preserve.is_fed(&node.def.name)
            && (node.def.op == "Const"
                || (is_foldable(node, ops)
                    && node.inputs.iter().all(|e| constant[e.node])
                    && node.control_inputs.iter().all(|&c| constant[c])
                    && shapes
                        .as_ref()
                        .is_none_or(|shapes| fits(node, &shapes[i], options.max_constant_bytes))));
    }
    let wanted = wanted_tensors(graph, &constant, preserve);
    if wanted.is_empty() {
        return Ok(None);
    }
    let values = evaluate(graph, &constant, &wanted, session_options, ops, kernels)?;
    let replaced: FxHashMap<Endpoint, Tensor> = wanted
        .into_iter()
        .zip(values)
        .filter_map(|(e, value)| {
            let value = value?;
            let bytes = value.num_elements() as u64
                * element_size(value.dtype()).unwrap_or(usize::MAX) as u64;
            (value.is_on_host() && bytes <= options.max_constant_bytes).then_some((e, value))
        })
        .collect();
    if replaced.is_empty() {
        return Ok(None);
    }
    let count = replaced.len();
    let defs = replace(graph, &replaced);
    Ok(Some((edit::rebuild(graph, defs, ops)?, count)))
}

/// True when `node` may be computed ahead of time.
fn is_foldable(node: &GraphNode, ops: &OpRegistry) -> bool {
    let op = node.def.op.as_str();
    !node.op_def.is_stateful
        && !node.inputs.is_empty()
        && !NEVER_FOLDED.contains(&op)
        && !crate::is_runtime_op(op)
        && ops.contains(op)
        && node
            .input_types
            .iter()
            .chain(&node.output_types)
            .all(|t| element_size(*t).is_some())
}

/// True when every output of `node` whose shape is known is at most
/// `max_bytes`.
fn fits(node: &GraphNode, shapes: &[Shape], max_bytes: u64) -> bool {
    shapes.iter().zip(&node.output_types).all(|(shape, dtype)| {
        // An unknown size (overflow included) is checked once computed.
        let Some(elements) = shape.num_elements() else {
            return true;
        };
        let size = element_size(*dtype).unwrap_or(0) as u64;
        (elements as u64).saturating_mul(size) <= max_bytes
    })
}

/// The constant tensors to materialize, in graph order: those a
/// non-constant node reads, and the outputs of fetched constant nodes
/// (one output only: a node of several keeps its name for its fetches).
fn wanted_tensors(graph: &Graph, constant: &[bool], preserve: &Preserve) -> Vec<Endpoint> {
    let nodes = graph.nodes();
    let mut seen = FxHashSet::default();
    let mut wanted = Vec::new();
    let mut want = |e: Endpoint| {
        if nodes[e.node].def.op != "Const" && seen.insert(e) {
            wanted.push(e);
        }
    };
    for (i, node) in nodes.iter().enumerate() {
        if constant[i] {
            if preserve.is_preserved(&node.def.name) && node.output_types.len() == 1 {
                want(Endpoint { node: i, port: 0 });
            }
            continue;
        }
        for e in &node.inputs {
            if constant[e.node] {
                want(*e);
            }
        }
    }
    wanted.retain(|e| {
        nodes[e.node].output_types.len() == 1 || !preserve.is_preserved(&nodes[e.node].def.name)
    });
    wanted.sort_by_key(|e| (e.node, e.port));
    wanted
}

/// Computes `wanted` on the CPU from the constant nodes: all at once, or,
/// if that fails, one by one (a tensor that cannot be computed is `None`).
fn evaluate(
    graph: &Graph,
    constant: &[bool],
    wanted: &[Endpoint],
    options: &SessionOptions,
    ops: &'static OpRegistry,
    kernels: &'static KernelRegistry,
) -> Result<Vec<Option<Tensor>>, GraphError> {
    let defs: Vec<NodeDef> = graph
        .nodes()
        .iter()
        .zip(constant)
        .filter(|(_, constant)| **constant)
        .map(|(node, _)| {
            let mut def = node.def.clone();
            // Computed here, on the CPU, whatever device the graph asked.
            def.device.clear();
            def
        })
        .collect();
    let constants = edit::rebuild(graph, defs, ops)?;
    let session = Session::with_registries(
        constants,
        SessionOptions {
            devices: vec!["CPU".into()],
            // Intermediates a few times the size of the results at most.
            max_memory_bytes: Some(
                options
                    .optimizations
                    .max_constant_bytes
                    .saturating_mul(16)
                    .max(64 << 20),
            ),
            // Computed as the session would compute them.
            denormals: options.denormals,
            optimizations: GraphOptimizations::none(),
            ..SessionOptions::default()
        },
        ops,
        kernels,
    );
    let names: Vec<String> = wanted
        .iter()
        .map(|&e| edit::tensor_name(graph, e))
        .collect();
    let fetches: Vec<&str> = names.iter().map(String::as_str).collect();
    Ok(match session.run(&[], &fetches) {
        Ok(values) => values.into_iter().map(Some).collect(),
        Err(_) => fetches
            .iter()
            .map(|name| session.run(&[], &[name]).ok().and_then(|mut v| v.pop()))
            .collect(),
    })
}

/// `graph`'s NodeDefs with the `replaced` tensors as constants: a node of
/// one output becomes a `Const` of the same name; the output of a node of
/// several becomes a new `Const`, which its readers then name.
fn replace(graph: &Graph, replaced: &FxHashMap<Endpoint, Tensor>) -> Vec<NodeDef> {
    let nodes = graph.nodes();
    let mut taken = FxHashSet::default();
    let mut renamed: FxHashMap<Endpoint, String> = FxHashMap::default();
    let mut defs = Vec::with_capacity(nodes.len() + replaced.len());
    for (i, node) in nodes.iter().enumerate() {
        let here = Endpoint { node: i, port: 0 };
        if node.output_types.len() == 1
            && let Some(value) = replaced.get(&here)
        {
            defs.push(edit::const_node(
                node.def.name.clone(),
                &node.def.device,
                value,
            ));
            continue;
        }
        for port in 0..node.output_types.len() {
            let e = Endpoint { node: i, port };
            if node.output_types.len() > 1
                && let Some(value) = replaced.get(&e)
            {
                let base = format!("{}/folded_{port}", node.def.name);
                let name = edit::unique_name(graph, &mut taken, &base);
                defs.push(edit::const_node(name.clone(), &node.def.device, value));
                renamed.insert(e, name);
            }
        }
        let mut def = node.def.clone();
        for (k, e) in node.inputs.iter().enumerate() {
            if let Some(name) = renamed.get(e) {
                def.input[k] = name.clone();
            }
        }
        defs.push(def);
    }
    defs
}

//! The `graph_validation` target: a GraphDef (binary, or text when the
//! bytes are not a binary GraphDef) is checked as a graph and its shapes
//! inferred; a valid graph is then run, each Placeholder fed zeros of its
//! declared shape (unknown dims as 1), fetching every node's outputs.

use opreg_runtime::{Graph, RunError, Session};
use prost::Message;
use registry_core::kernel::KernelError;
use registry_core::proto::attr_value::Value;
use registry_core::proto::{DataType, GraphDef, TextFormat};
use registry_core::tensor::Tensor;

/// The most elements a fed Placeholder may have.
const MAX_FEED_ELEMENTS: i64 = 1 << 16;

/// The target.
pub fn graph_validation(data: &[u8]) {
    super::setup();
    let def = match GraphDef::decode(data) {
        Ok(def) => def,
        Err(_) => match std::str::from_utf8(data).ok().map(GraphDef::from_pbtxt) {
            Some(Ok(def)) => def,
            _ => return,
        },
    };
    let Ok(graph) = Graph::new(def) else {
        return;
    };
    let _ = graph.infer_shapes(&[]);
    let mut feeds = Vec::new();
    for node in graph.nodes() {
        if node.op() == "Placeholder" {
            let Some(tensor) = placeholder_value(&node.def.attr) else {
                return;
            };
            feeds.push((node.name().to_owned(), tensor));
        }
    }
    let mut fetches = Vec::new();
    for node in graph.nodes() {
        for port in 0..node.output_types.len() {
            fetches.push(format!("{}:{port}", node.name()));
        }
    }
    let session = Session::new(graph);
    let feeds: Vec<(&str, Tensor)> = feeds.iter().map(|(n, t)| (n.as_str(), t.clone())).collect();
    let fetches: Vec<&str> = fetches.iter().map(String::as_str).collect();
    let result = session.run(&feeds, &fetches);
    panic_on_kernel_panic(&result);
}

/// Zeros of a Placeholder's dtype and declared shape, or `None` when the
/// tensor would be too big or cannot be made.
fn placeholder_value(
    attrs: &std::collections::BTreeMap<String, registry_core::proto::AttrValue>,
) -> Option<Tensor> {
    let dtype = match attrs.get("dtype")?.value.as_ref()? {
        Value::Type(t) => DataType::try_from(*t).ok()?,
        _ => return None,
    };
    let dims: Vec<i64> = match attrs.get("shape").and_then(|v| v.value.as_ref()) {
        Some(Value::Shape(s)) if !s.unknown_rank => s
            .dim
            .iter()
            .map(|d| if d.size < 0 { 1 } else { d.size })
            .collect(),
        _ => Vec::new(),
    };
    let mut elements: i64 = 1;
    for &d in &dims {
        elements = elements.checked_mul(d)?;
    }
    if elements > MAX_FEED_ELEMENTS {
        return None;
    }
    let dims: Vec<usize> = dims.iter().map(|&d| d as usize).collect();
    Tensor::zeros(dtype, dims.as_slice()).ok()
}

/// A kernel panic is caught by the executor and reported as an error; for
/// the fuzzer it is a finding, so it becomes a panic again.
pub(super) fn panic_on_kernel_panic<T>(result: &Result<T, RunError>) {
    if let Err(RunError::Compute {
        node, op, source, ..
    }) = result
        && let KernelError::Panicked(message) = &**source
    {
        panic!("kernel of node '{node}' (op '{op}') panicked: {message}");
    }
    if let Err(RunError::Graph(e)) = result
        && let opreg_runtime::GraphError::Placement { source, .. } = &**e
        && let registry_core::kernel::CreateKernelError::Construction {
            source: KernelError::Panicked(message),
            node,
            op,
            ..
        } = &**source
    {
        panic!("kernel constructor of node '{node}' (op '{op}') panicked: {message}");
    }
}

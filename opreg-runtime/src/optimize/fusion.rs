//! Fusion: a contraction, its bias, a residual addition and its activation
//! become one node.
//!
//! A `Conv2D`, `DepthwiseConv2dNative` (both NHWC) or `MatMul` read only by
//! a `BiasAdd` (NHWC) that takes it as its value, for `Conv2D` and `MatMul`
//! optionally followed by an `AddV2` (or `Add`) that alone reads that
//! `BiasAdd` and adds a tensor of its shape (a residual connection; the
//! shapes must be the same as far as shape inference knows them: same rank,
//! each dimension equal or unknown in both), optionally followed by a
//! `Relu`, `Relu6`, `Elu`, `LeakyRelu`, `Tanh` or `Sigmoid` that alone
//! reads the chain's last node, becomes TensorFlow's `_FusedConv2D`,
//! `_FusedDepthwiseConv2dNative` or `_FusedMatMul` (`fused_ops`
//! `[BiasAdd]`, `[BiasAdd, <activation>]`, `[BiasAdd, Add]` or
//! `[BiasAdd, Add, <activation>]`, what TensorFlow's remapper makes, the
//! `Add` forms as with oneDNN: the added tensor is the second of `args`).
//! The fused node takes the name of the chain's last node, so its readers
//! and fetches are unchanged; a node fed, fetched or read elsewhere ends
//! the chain before it. Only where the contraction would run on the CPU
//! (the fused ops have CPU kernels only) and the fused op has a kernel for
//! its type. The fused kernels compute each element as the unfused kernels
//! do.

use opreg_proto::{AttrValue, DataType, NodeDef};
use registry_core::attr::NodeAttrs;
use registry_core::kernel::KernelRegistry;
use registry_core::node_def::add_defaults_to_node_def;
use registry_core::registry::OpRegistry;

use super::edit::{self, Preserve};
use crate::placement::candidates;
use crate::shapes::GraphShapes;
use crate::{Endpoint, Graph, GraphError, SessionOptions, requested_device_type};

/// The contractions, and the fused op each becomes.
const FUSABLE: &[(&str, &str)] = &[
    ("Conv2D", "_FusedConv2D"),
    ("DepthwiseConv2dNative", "_FusedDepthwiseConv2dNative"),
    ("MatMul", "_FusedMatMul"),
];

/// The contractions whose fused op also takes a residual `Add` (TensorFlow's
/// oneDNN fusions).
const ADD_AFTER: &[&str] = &["Conv2D", "MatMul"];

/// The activations a fused node can end with.
const ACTIVATIONS: &[&str] = &["Relu", "Relu6", "Elu", "LeakyRelu", "Tanh", "Sigmoid"];

/// Attrs of the contraction the fused op does not have, dropped when they
/// hold these values (MatMul's gradient hints, which the CPU ignores; an
/// empty `explicit_paddings`).
fn droppable(name: &str, value: &AttrValue) -> bool {
    match name {
        "grad_a" | "grad_b" => true,
        "explicit_paddings" => {
            matches!(&value.value, Some(opreg_proto::attr_value::Value::List(l)) if l.i.is_empty())
        }
        _ => false,
    }
}

/// Fuses every chain it can; `None` when there is none.
pub(super) fn fuse(
    graph: &Graph,
    preserve: &Preserve,
    options: &SessionOptions,
    ops: &OpRegistry,
    kernels: &KernelRegistry,
) -> Result<Option<(Graph, usize)>, GraphError> {
    let nodes = graph.nodes();
    let readers = edit::sole_readers(graph, preserve);
    let sole_reader = |i: usize| readers[i];
    let mut defs: Vec<Option<NodeDef>> = nodes.iter().map(|n| Some(n.def.clone())).collect();
    // Shapes are inferred when a residual Add is first considered.
    let mut shapes: Option<Option<GraphShapes>> = None;
    let mut count = 0;
    for (c, node) in nodes.iter().enumerate() {
        let Some(&(_, fused_op)) = FUSABLE.iter().find(|(op, _)| *op == node.def.op) else {
            continue;
        };
        let Some(b) = sole_reader(c) else { continue };
        let bias = &nodes[b];
        if bias.def.op != "BiasAdd"
            || bias
                .inputs
                .first()
                .is_none_or(|e| e.node != c || e.port != 0)
            || bias.def.device != node.def.device
            || NodeAttrs::new(&bias.def, &bias.op_def)
                .get::<&str>("data_format")
                .is_ok_and(|f| f != "NHWC")
            || !runs_on_cpu(node, options, kernels)
        {
            continue;
        }
        let add = sole_reader(b)
            .filter(|_| ADD_AFTER.contains(&node.def.op.as_str()))
            .and_then(|a| {
                let shapes = shapes.get_or_insert_with(|| graph.infer_shapes(&[]).ok());
                let addend = residual_addend(graph, shapes.as_ref()?, a, b)?;
                Some(Residual { add: a, addend })
            });
        let before_activation = add.as_ref().map_or(b, |r| r.add);
        let activation = sole_reader(before_activation).filter(|&a| {
            let act = &nodes[a];
            ACTIVATIONS.contains(&act.def.op.as_str())
                && act.inputs.len() == 1
                && act.inputs[0].port == 0
                && act.def.device == node.def.device
        });
        let chain = Chain {
            contraction: c,
            bias: b,
            add,
            activation,
        };
        let Some(fused) = fused_node(graph, &chain, fused_op, ops, kernels) else {
            continue;
        };
        let last = chain.last();
        for i in chain.nodes() {
            defs[i] = None;
        }
        defs[last] = Some(fused);
        count += 1;
    }
    edit::rewritten(graph, defs, count, ops)
}

/// A residual addition after the bias: the `AddV2`/`Add` node and the
/// tensor it adds.
#[derive(Debug, Clone, Copy)]
struct Residual {
    add: usize,
    addend: Endpoint,
}

/// The nodes one fused node replaces.
#[derive(Debug, Clone, Copy)]
struct Chain {
    contraction: usize,
    bias: usize,
    add: Option<Residual>,
    activation: Option<usize>,
}

impl Chain {
    /// Every node of the chain, in order.
    fn nodes(&self) -> impl Iterator<Item = usize> {
        [
            Some(self.contraction),
            Some(self.bias),
            self.add.map(|r| r.add),
            self.activation,
        ]
        .into_iter()
        .flatten()
    }

    /// The last node, whose name the fused node takes.
    fn last(&self) -> usize {
        self.activation
            .or(self.add.map(|r| r.add))
            .unwrap_or(self.bias)
    }
}

/// The tensor that node `a` adds to `BiasAdd` `b`'s output when `a` is an
/// `AddV2` or `Add` on `b`'s device of `b` and a tensor of the same shape
/// as far as `shapes` know them (same rank, each dimension equal or
/// unknown in both); `None` otherwise.
fn residual_addend(graph: &Graph, shapes: &GraphShapes, a: usize, b: usize) -> Option<Endpoint> {
    let nodes = graph.nodes();
    let add = &nodes[a];
    if !matches!(add.def.op.as_str(), "AddV2" | "Add")
        || add.def.device != nodes[b].def.device
        || add.inputs.len() != 2
    {
        return None;
    }
    let sum = Endpoint { node: b, port: 0 };
    let addend = match (add.inputs[0], add.inputs[1]) {
        (x, y) if x == sum && y != sum => y,
        (x, y) if y == sum && x != sum => x,
        _ => return None,
    };
    let shape_of = |e: Endpoint| shapes.get(e.node)?.get(e.port)?.dims();
    let (sum_dims, addend_dims) = (shape_of(sum)?, shape_of(addend)?);
    (sum_dims == addend_dims).then_some(addend)
}

/// True when the contraction runs on the CPU: its requested device, else
/// the session's first device with a kernel for it.
pub(super) fn runs_on_cpu(
    node: &crate::GraphNode,
    options: &SessionOptions,
    kernels: &KernelRegistry,
) -> bool {
    let registrations = kernels.kernels_for_op(&node.def.op);
    candidates(requested_device_type(&node.def.device), &options.devices)
        .into_iter()
        .find(|d| registrations.iter().any(|r| r.device == d))
        .is_some_and(|d| d == "CPU")
}

/// The fused node for `chain`, named as its last node; `None` when an
/// attr of the contraction has no place in the fused op or the fused op has
/// no CPU kernel for its type.
fn fused_node(
    graph: &Graph,
    chain: &Chain,
    fused_op: &str,
    ops: &OpRegistry,
    kernels: &KernelRegistry,
) -> Option<NodeDef> {
    let nodes = graph.nodes();
    let (conv, bias) = (&nodes[chain.contraction], &nodes[chain.bias]);
    let fused_def = ops.look_up_op_def(fused_op).ok()?;
    let dtype: DataType = *conv.input_types.first()?;
    let mut def = NodeDef {
        name: nodes[chain.last()].def.name.clone(),
        op: fused_op.to_owned(),
        device: conv.def.device.clone(),
        input: vec![
            edit::tensor_name(graph, conv.inputs[0]),
            edit::tensor_name(graph, conv.inputs[1]),
            edit::tensor_name(graph, bias.inputs[1]),
        ],
        ..NodeDef::default()
    };
    for (name, value) in &conv.def.attr {
        if fused_def.attr.iter().any(|d| &d.name == name) {
            def.attr.insert(name.clone(), value.clone());
        } else if !droppable(name, value) {
            return None;
        }
    }
    let mut fused_ops = vec!["BiasAdd".to_owned()];
    let mut args = vec![dtype as i32];
    if let Some(residual) = chain.add {
        fused_ops.push("Add".to_owned());
        def.input.push(edit::tensor_name(graph, residual.addend));
        args.push(dtype as i32);
    }
    if let Some(a) = chain.activation {
        let act = &nodes[a];
        fused_ops.push(act.def.op.clone());
        if act.def.op == "LeakyRelu" {
            let alpha = NodeAttrs::new(&act.def, &act.op_def)
                .get::<f32>("alpha")
                .ok()?;
            def.attr
                .insert("leakyrelu_alpha".into(), AttrValue::from(alpha));
        }
    }
    let num_args = i64::try_from(args.len()).ok()?;
    def.attr
        .insert("num_args".into(), AttrValue::from(num_args));
    def.attr.insert(
        "fused_ops".into(),
        AttrValue::from(opreg_proto::attr_value::ListValue {
            s: fused_ops.into_iter().map(String::into_bytes).collect(),
            ..Default::default()
        }),
    );
    if fused_def.attr.iter().any(|d| d.name == "TArgs") {
        def.attr.insert(
            "TArgs".into(),
            AttrValue::from(opreg_proto::attr_value::ListValue {
                r#type: args,
                ..Default::default()
            }),
        );
    }
    let controls = chain
        .nodes()
        .flat_map(|i| edit::control_inputs(&nodes[i].def).cloned());
    for control in controls {
        if !def.input.contains(&control) {
            def.input.push(control);
        }
    }
    let mut with_defaults = def.clone();
    add_defaults_to_node_def(fused_def, &mut with_defaults);
    kernels.find_kernel(&with_defaults, "CPU").ok()?;
    Some(def)
}

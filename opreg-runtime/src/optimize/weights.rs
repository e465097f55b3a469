//! Weight folding: the per-channel arithmetic after a convolution or MatMul
//! with constant weights (what a frozen Keras model keeps of batch
//! normalization once its constants are folded: `conv * scale + offset`)
//! goes into the weights and a `BiasAdd`.
//!
//! - `Mul(w(x, W), s)` (either operand order), where `w` is a `Conv2D` or
//!   `DepthwiseConv2dNative` (NHWC) or a `MatMul`, `W` a `Const`, and `s` a
//!   constant with one value per output channel (or one in all), becomes
//!   `w(x, W * s)`: the scale moves into the weights, per output channel.
//!   The `Mul` node keeps its name; `w`, read by nothing else, goes.
//! - `Add`/`AddV2(w(x, W), b)` (either order) and `Sub(w(x, W), b)`, with
//!   `b` a constant of one value per output channel, become
//!   `BiasAdd(w(x, W), ±b)`, the form fused kernels take.
//!
//! Float and double only (the scaled weights are computed in the weights'
//! type: the result differs from the unfolded graph's by rounding).

use std::ops::Mul;

use opreg_proto::{AttrValue, DataType, NodeDef};
use registry_core::attr::NodeAttrs;
use registry_core::registry::OpRegistry;
use registry_core::tensor::{Tensor, TensorElement};
use rustc_hash::FxHashSet;

use super::edit::{self, Preserve};
use crate::{Endpoint, Graph, GraphError, GraphNode};

/// The ops whose second input is a weight tensor with the output channels
/// last (for `MatMul` unless `transpose_b`).
const WEIGHTED_OPS: &[&str] = &["Conv2D", "DepthwiseConv2dNative", "MatMul"];

/// What [`fold`] changed.
pub(super) struct Folded {
    pub(super) graph: Graph,
    pub(super) scales: usize,
    pub(super) biases: usize,
}

/// Folds scales into weights, then additions into `BiasAdd`s; `None` when
/// neither applies.
pub(super) fn fold(
    graph: &Graph,
    preserve: &Preserve,
    ops: &OpRegistry,
) -> Result<Option<Folded>, GraphError> {
    let split = |folded: Option<(Graph, usize)>| folded.map_or((None, 0), |(g, n)| (Some(g), n));
    let (scaled, scales) = split(fold_scales(graph, preserve, ops)?);
    let current = scaled.as_ref().unwrap_or(graph);
    let (biased, biases) = split(add_biases(current, preserve, ops)?);
    Ok(biased.or(scaled).map(|graph| Folded {
        graph,
        scales,
        biases,
    }))
}

/// The weights and number of output channels of the weighted node
/// (`Conv2D`, `DepthwiseConv2dNative`, `MatMul`) at `e`, when they are a
/// `Const` of float or double and the node is NHWC; with `sole_reader`
/// (the use counts and preserved nodes), only when one input reads it and
/// it is not preserved (so that its value may change).
fn weighted(
    graph: &Graph,
    e: Endpoint,
    sole_reader: Option<(&[usize], &Preserve)>,
) -> Option<(Tensor, usize)> {
    let node = &graph.nodes()[e.node];
    if e.port != 0 || !WEIGHTED_OPS.contains(&node.def.op.as_str()) {
        return None;
    }
    if let Some((uses, preserve)) = sole_reader
        && (uses[e.node] != 1 || preserve.is_preserved(&node.def.name))
    {
        return None;
    }
    let attrs = NodeAttrs::new(&node.def, &node.op_def);
    if node.def.op != "MatMul" && attrs.get::<&str>("data_format").ok()? != "NHWC" {
        return None;
    }
    let filter = node.inputs.get(1)?;
    if filter.port != 0 {
        return None;
    }
    let weights = edit::const_value(&graph.nodes()[filter.node])?;
    if !matches!(weights.dtype(), DataType::DtFloat | DataType::DtDouble) {
        return None;
    }
    let dims = weights.dims();
    let channels = match node.def.op.as_str() {
        "Conv2D" if dims.len() == 4 => dims[3],
        "DepthwiseConv2dNative" if dims.len() == 4 => dims[2] * dims[3],
        "MatMul" if dims.len() == 2 => {
            if attrs.get::<bool>("transpose_b").ok()? {
                dims[0]
            } else {
                dims[1]
            }
        }
        _ => return None,
    };
    Some((weights, channels))
}

/// The constant at `e` when it holds one value per channel (`[channels]`,
/// or ones then `channels`, at most `max_rank` dims) or one value for all
/// (when `single` allows it).
fn per_channel(
    graph: &Graph,
    e: Endpoint,
    channels: usize,
    max_rank: usize,
    single: bool,
) -> Option<Tensor> {
    if e.port != 0 {
        return None;
    }
    let value = edit::const_value(&graph.nodes()[e.node])?;
    let dims = value.dims();
    if dims.len() > max_rank {
        return None;
    }
    let leading_ones = dims.iter().rev().skip(1).all(|&d| d == 1);
    let fits = match dims.last() {
        None => single,
        Some(&last) => leading_ones && (last == channels || (single && last == 1)),
    };
    fits.then_some(value)
}

/// The rank of the weighted node's output (4 for convolutions, 2 for
/// MatMul).
fn output_rank(node: &GraphNode) -> usize {
    if node.def.op == "MatMul" { 2 } else { 4 }
}

/// Rewrites each `Mul` of a weighted node by a per-channel constant.
fn fold_scales(
    graph: &Graph,
    preserve: &Preserve,
    ops: &OpRegistry,
) -> Result<Option<(Graph, usize)>, GraphError> {
    let nodes = graph.nodes();
    let uses = edit::use_counts(graph);
    let mut defs: Vec<Option<NodeDef>> = nodes.iter().map(|n| Some(n.def.clone())).collect();
    let mut added = Vec::new();
    let mut taken = FxHashSet::default();
    let mut count = 0;
    for (i, node) in nodes.iter().enumerate() {
        if node.def.op != "Mul" || preserve.is_fed(&node.def.name) || node.inputs.len() != 2 {
            continue;
        }
        let found = [(0, 1), (1, 0)].into_iter().find_map(|(a, b)| {
            let x = node.inputs[a];
            let (weights, channels) = weighted(graph, x, Some((&uses, preserve)))?;
            let rank = output_rank(&nodes[x.node]);
            let scale = per_channel(graph, node.inputs[b], channels, rank, true)?;
            let transposed = nodes[x.node].def.op == "MatMul"
                && NodeAttrs::new(&nodes[x.node].def, &nodes[x.node].op_def)
                    .get::<bool>("transpose_b")
                    .unwrap_or(false);
            let scaled = scale_weights(&weights, &scale, transposed)?;
            Some((x.node, scaled))
        });
        let Some((w, scaled)) = found else {
            continue;
        };
        let weighted = &nodes[w];
        let name = edit::unique_name(
            graph,
            &mut taken,
            &format!("{}/folded_weights", node.def.name),
        );
        added.push(edit::const_node(
            name.clone(),
            &weighted.def.device,
            &scaled,
        ));
        let mut def = weighted.def.clone();
        def.name = node.def.name.clone();
        def.input = vec![weighted.def.input[0].clone(), name];
        def.input
            .extend(edit::control_inputs(&weighted.def).cloned());
        def.input.extend(edit::control_inputs(&node.def).cloned());
        defs[i] = Some(def);
        defs[w] = None;
        count += 1;
    }
    if count == 0 {
        return Ok(None);
    }
    let defs = defs.into_iter().flatten().chain(added).collect();
    Ok(Some((edit::rebuild(graph, defs, ops)?, count)))
}

/// `weights * scale`, the scale per output channel: the last dimension of
/// the weights (`[h, w, in, out]`, `[h, w, in, multiplier]` flattened with
/// `in`, `[k, n]`), or the first when `transposed` (`MatMul`'s
/// `transpose_b`, `[n, k]`).
fn scale_weights(weights: &Tensor, scale: &Tensor, transposed: bool) -> Option<Tensor> {
    match weights.dtype() {
        DataType::DtFloat => scaled::<f32>(weights, scale, transposed),
        DataType::DtDouble => scaled::<f64>(weights, scale, transposed),
        _ => None,
    }
}

fn scaled<T: TensorElement + Mul<Output = T>>(
    weights: &Tensor,
    scale: &Tensor,
    transposed: bool,
) -> Option<Tensor> {
    let w = weights.as_slice::<T>().ok()?;
    let s = scale.as_slice::<T>().ok()?;
    if s.is_empty() || w.is_empty() {
        return None;
    }
    let inner = if transposed {
        weights.dims().get(1).copied()?.max(1)
    } else {
        1
    };
    let data = w
        .iter()
        .enumerate()
        .map(|(j, &v)| v * s[(j / inner) % s.len()])
        .collect();
    Tensor::from_vec(weights.dims().to_vec(), data).ok()
}

/// Rewrites each `Add`/`AddV2`/`Sub` of a weighted node's output and a
/// per-channel constant into a `BiasAdd`.
fn add_biases(
    graph: &Graph,
    preserve: &Preserve,
    ops: &OpRegistry,
) -> Result<Option<(Graph, usize)>, GraphError> {
    let nodes = graph.nodes();
    let mut defs: Vec<NodeDef> = nodes.iter().map(|n| n.def.clone()).collect();
    let mut added = Vec::new();
    let mut taken = FxHashSet::default();
    let mut count = 0;
    for (i, node) in nodes.iter().enumerate() {
        let op = node.def.op.as_str();
        if !matches!(op, "Add" | "AddV2" | "Sub")
            || preserve.is_fed(&node.def.name)
            || node.inputs.len() != 2
            || !matches!(
                node.input_types.first(),
                Some(DataType::DtFloat | DataType::DtDouble)
            )
        {
            continue;
        }
        let orders: &[(usize, usize)] = if op == "Sub" {
            &[(0, 1)]
        } else {
            &[(0, 1), (1, 0)]
        };
        let found = orders.iter().find_map(|&(a, b)| {
            let x = node.inputs[a];
            // The weighted node may be read elsewhere too: only the
            // addition changes form.
            let (_, channels) = weighted(graph, x, None)?;
            let rank = output_rank(&nodes[x.node]);
            let bias = per_channel(graph, node.inputs[b], channels, rank, false)?;
            Some((x, node.inputs[b], bias))
        });
        let Some((x, b, bias)) = found else {
            continue;
        };
        let bias_name = if op == "Sub" || bias.dims().len() != 1 {
            let value = if op == "Sub" {
                negated(&bias)
            } else {
                Some(bias)
            };
            let Some(value) = value.and_then(|v| v.reshape([v.num_elements()]).ok()) else {
                continue;
            };
            let name = edit::unique_name(graph, &mut taken, &format!("{}/bias", node.def.name));
            added.push(edit::const_node(
                name.clone(),
                &nodes[b.node].def.device,
                &value,
            ));
            name
        } else {
            edit::tensor_name(graph, b)
        };
        let mut def = NodeDef {
            name: node.def.name.clone(),
            op: "BiasAdd".into(),
            device: node.def.device.clone(),
            input: vec![edit::tensor_name(graph, x), bias_name],
            attr: [
                ("T".to_owned(), AttrValue::from(node.input_types[0])),
                ("data_format".to_owned(), AttrValue::from("NHWC")),
            ]
            .into(),
            ..NodeDef::default()
        };
        def.input.extend(edit::control_inputs(&node.def).cloned());
        defs[i] = def;
        count += 1;
    }
    if count == 0 {
        return Ok(None);
    }
    defs.extend(added);
    Ok(Some((edit::rebuild(graph, defs, ops)?, count)))
}

/// `-value`, for float or double: the value scaled by -1 (exact).
fn negated(value: &Tensor) -> Option<Tensor> {
    let minus_one = match value.dtype() {
        DataType::DtFloat => Tensor::from_vec([], vec![-1.0f32]),
        DataType::DtDouble => Tensor::from_vec([], vec![-1.0f64]),
        _ => return None,
    };
    scale_weights(value, &minus_one.ok()?, false)
}

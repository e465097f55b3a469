//! The `executor` target: one generated node of a registered op that has a
//! CPU kernel, fed by Const or Placeholder nodes, run through a Session.
//!
//! Input: two bytes pick the op (little-endian, modulo the op count); the
//! rest draws the node's attrs (mostly valid for the OpDef, sometimes
//! missing, out of range or of another kind), its input count (from `N`
//! and type lists, sometimes one too many or too few), each input's dtype
//! (mostly the one the attrs resolve to) and each input tensor (shapes with
//! 0, 1 and huge dims; edge values).
//!
//! Findings: any panic (in validation, shape inference, kernel
//! construction or compute: the executor's caught kernel panics are
//! re-raised), an output whose dtype differs from the graph's, and an
//! output whose shape contradicts what shape inference said.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use arbitrary::{Result, Unstructured};
use opreg_runtime::{Endpoint, Graph, Session};
use registry_core::device::DEVICE_CPU;
use registry_core::kernel::KernelRegistry;
use registry_core::proto::attr_value::Value;
use registry_core::proto::{AttrValue, DataType, GraphDef, NodeDef, OpDef, TextFormat};
use registry_core::registry::OpRegistry;
use registry_core::shape::Shape;
use registry_core::tensor::Tensor;

use super::graph::panic_on_kernel_panic;
use super::values;

/// The name of the generated node.
const NODE: &str = "node";

/// The ops with a CPU kernel, sorted (the target's op numbering).
pub fn ops_with_cpu_kernels() -> &'static [&'static str] {
    static OPS: OnceLock<Vec<&'static str>> = OnceLock::new();
    OPS.get_or_init(|| {
        super::setup();
        let mut ops: Vec<&'static str> = KernelRegistry::global()
            .all()
            .into_iter()
            .filter(|k| k.device == DEVICE_CPU)
            .map(|k| k.op)
            .filter(|op| OpRegistry::global().contains(op))
            .collect();
        ops.sort_unstable();
        ops.dedup();
        ops
    })
}

/// A generated graph: the inputs and the node.
struct Case {
    def: GraphDef,
    feeds: Vec<(String, Tensor)>,
}

/// What became of one executor input (for tests that check the target
/// reaches the kernels, not just the validators).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Too few bytes to make a node.
    NoCase,
    /// The graph was refused before running (NodeDef validation).
    Invalid,
    /// The run failed with an error (kernel lookup, construction or
    /// compute).
    Failed,
    /// The node ran; its outputs' dtypes and shapes were checked (shapes
    /// only when inference succeeded: `shape_checked`).
    Ran {
        /// Whether shape inference succeeded and was compared.
        shape_checked: bool,
    },
}

/// The target.
pub fn executor(data: &[u8]) {
    executor_outcome(data);
}

/// The target, telling what happened (panics on findings).
pub fn executor_outcome(data: &[u8]) -> Outcome {
    super::setup();
    let ops = ops_with_cpu_kernels();
    let [a, b, rest @ ..] = data else {
        return Outcome::NoCase;
    };
    let op = ops[usize::from(u16::from_le_bytes([*a, *b])) % ops.len()];
    let Ok(op_def) = OpRegistry::global().look_up_op_def(op) else {
        return Outcome::NoCase;
    };
    let mut u = Unstructured::new(rest);
    match generate(&mut u, op_def) {
        Ok(case) => check(&case),
        Err(_) => Outcome::NoCase,
    }
}

fn allowed(attr: &registry_core::proto::op_def::AttrDef) -> (Vec<i32>, Vec<Vec<u8>>) {
    match attr.allowed_values.as_ref().and_then(|v| v.value.as_ref()) {
        Some(Value::List(list)) => (list.r#type.clone(), list.s.clone()),
        _ => (Vec::new(), Vec::new()),
    }
}

fn generate(u: &mut Unstructured<'_>, op_def: &OpDef) -> Result<Case> {
    let mut attrs: BTreeMap<String, AttrValue> = BTreeMap::new();
    // Type attrs first, so a tensor attr can take its `dtype`.
    let mut ordered: Vec<_> = op_def.attr.iter().collect();
    ordered.sort_by_key(|a| a.r#type != "type");
    for attr in ordered {
        // Sometimes missing: the default (if any) fills in, else an error.
        if u.ratio(1, 16)? {
            continue;
        }
        let (types, strings) = allowed(attr);
        // A tensor attr (Const's `value`) mostly matches the `dtype` attr.
        let dtype = match attrs.get("dtype").and_then(|v| v.value.as_ref()) {
            Some(Value::Type(t)) => DataType::try_from(*t).ok(),
            _ => None,
        };
        let value = values::attr_value(u, &attr.r#type, &types, &strings, dtype)?;
        attrs.insert(attr.name.clone(), value);
    }
    let input_types = input_types(u, op_def, &attrs)?;
    let mut def = GraphDef::default();
    let mut feeds = Vec::new();
    let mut inputs = Vec::with_capacity(input_types.len());
    let mut previous: Option<Vec<usize>> = None;
    let element_dtype = match attrs.get("element_dtype").and_then(|v| v.value.as_ref()) {
        Some(Value::Type(t)) => DataType::try_from(*t).ok(),
        _ => None,
    };
    for (i, dtype) in input_types.into_iter().enumerate() {
        let name = format!("in{i}");
        if dtype == DataType::DtVariant {
            def.node.extend(tensor_list_nodes(u, &name, element_dtype)?);
            inputs.push(name);
            continue;
        }
        let dims = values::dims_after(u, previous.as_deref())?;
        previous = Some(dims.clone());
        let tensor = values::tensor(u, dtype, &dims)?;
        if u.arbitrary::<bool>()? {
            def.node.push(const_node(name.clone(), &tensor));
        } else {
            let mut node = NodeDef {
                name: name.clone(),
                op: "Placeholder".into(),
                ..Default::default()
            };
            node.attr.insert("dtype".into(), type_attr(dtype));
            def.node.push(node);
            feeds.push((name.clone(), tensor));
        }
        inputs.push(name);
    }
    def.node.push(NodeDef {
        name: NODE.into(),
        op: op_def.name.clone(),
        input: inputs,
        attr: attrs,
        ..Default::default()
    });
    Ok(Case { def, feeds })
}

/// A variant input: a TensorList made by `TensorListFromTensor` (named
/// `name`) from a drawn tensor of `element_dtype` (mostly the node's
/// `element_dtype` attr) and an element shape that is unknown, the true
/// one, or the true one with unknown dims.
fn tensor_list_nodes(
    u: &mut Unstructured<'_>,
    name: &str,
    element_dtype: Option<DataType>,
) -> Result<Vec<NodeDef>> {
    let supported = values::tensor_dtypes();
    let dtype = match element_dtype {
        Some(d) if supported.contains(&d) && u.ratio(15, 16)? => d,
        _ => *u.choose(&supported)?,
    };
    let mut dims = values::dims(u)?;
    if dims.is_empty() {
        dims.push(u.int_in_range(0..=3)?);
    }
    let tensor = values::tensor(u, dtype, &dims)?;
    let element_shape = if u.ratio(1, 4)? {
        Tensor::scalar(-1i32)
    } else {
        let mut shape = Vec::with_capacity(dims.len() - 1);
        for &d in &dims[1..] {
            shape.push(if u.ratio(1, 4)? {
                -1
            } else {
                i32::try_from(d).unwrap_or(-1)
            });
        }
        Tensor::from_vec(vec![shape.len()], shape).expect("a vector of its own length")
    };
    let items = format!("{name}_items");
    let shape = format!("{name}_element_shape");
    let mut list = NodeDef {
        name: name.to_owned(),
        op: "TensorListFromTensor".into(),
        input: vec![items.clone(), shape.clone()],
        ..Default::default()
    };
    list.attr.insert("element_dtype".into(), type_attr(dtype));
    list.attr
        .insert("shape_type".into(), type_attr(DataType::DtInt32));
    Ok(vec![
        const_node(items, &tensor),
        const_node(shape, &element_shape),
        list,
    ])
}

/// A `Const` node named `name` holding `tensor`.
fn const_node(name: String, tensor: &Tensor) -> NodeDef {
    let mut node = NodeDef {
        name,
        op: "Const".into(),
        ..Default::default()
    };
    node.attr.insert("dtype".into(), type_attr(tensor.dtype()));
    node.attr.insert(
        "value".into(),
        AttrValue {
            value: Some(Value::Tensor(tensor.to_proto())),
        },
    );
    node
}

fn type_attr(dtype: DataType) -> AttrValue {
    AttrValue {
        value: Some(Value::Type(dtype as i32)),
    }
}

/// The dtypes of the node's inputs as its attrs resolve them (a drawn
/// dtype where they do not), sometimes with one input too many or few.
fn input_types(
    u: &mut Unstructured<'_>,
    op_def: &OpDef,
    attrs: &BTreeMap<String, AttrValue>,
) -> Result<Vec<DataType>> {
    let supported = values::tensor_dtypes();
    let tensor_type = |t: i32| DataType::try_from(t).ok().filter(|d| supported.contains(d));
    let attr = |name: &str| attrs.get(name).and_then(|v| v.value.as_ref());
    let mut types = Vec::new();
    for arg in &op_def.input_arg {
        let list: Vec<Option<DataType>> = if !arg.type_list_attr.is_empty() {
            match attr(&arg.type_list_attr) {
                Some(Value::List(l)) if l.r#type.len() <= 8 => {
                    l.r#type.iter().map(|&t| tensor_type(t)).collect()
                }
                _ => vec![None],
            }
        } else {
            let count = match attr(&arg.number_attr) {
                Some(Value::I(n)) if (0..=8).contains(n) => *n as usize,
                _ => 1,
            };
            let dtype = if arg.r#type == DataType::DtVariant as i32 {
                // Made by `tensor_list_nodes`.
                Some(DataType::DtVariant)
            } else if arg.type_attr.is_empty() {
                tensor_type(arg.r#type)
            } else {
                match attr(&arg.type_attr) {
                    Some(Value::Type(t)) => tensor_type(*t),
                    _ => None,
                }
            };
            vec![dtype; count]
        };
        for dtype in list {
            let dtype = match dtype {
                Some(d) if u.ratio(31, 32)? => d,
                _ => *u.choose(&supported)?,
            };
            types.push(dtype);
        }
    }
    if u.ratio(1, 32)? {
        types.push(*u.choose(&supported)?);
    } else if u.ratio(1, 32)? {
        types.pop();
    }
    Ok(types)
}

fn check(case: &Case) -> Outcome {
    let Ok(graph) = Graph::new(case.def.clone()) else {
        return Outcome::Invalid;
    };
    let Some(index) = graph.index_of(NODE) else {
        return Outcome::Invalid;
    };
    let outputs = graph.nodes()[index].output_types.len();
    let fed_shapes: Vec<(Endpoint, Shape)> = case
        .feeds
        .iter()
        .filter_map(|(name, t)| {
            let dims: Vec<i64> = t.dims().iter().map(|&d| d as i64).collect();
            Some((graph.endpoint(name, "feed").ok()?, Shape::from_dims(&dims)))
        })
        .collect();
    let inferred = graph.infer_shapes(&fed_shapes);
    let expected_types: Vec<DataType> = (0..outputs)
        .map(|port| graph.dtype(Endpoint { node: index, port }))
        .collect();
    let session = Session::new(graph);
    let feeds: Vec<(&str, Tensor)> = case
        .feeds
        .iter()
        .map(|(n, t)| (n.as_str(), t.clone()))
        .collect();
    let fetches: Vec<String> = (0..outputs).map(|p| format!("{NODE}:{p}")).collect();
    let fetches: Vec<&str> = fetches.iter().map(String::as_str).collect();
    let result = session.run(&feeds, &fetches);
    panic_on_kernel_panic(&result);
    let Ok(tensors) = result else {
        return Outcome::Failed;
    };
    let node = || {
        case.def
            .node
            .last()
            .map(|n| n.to_pbtxt_short())
            .unwrap_or_default()
    };
    for (port, tensor) in tensors.iter().enumerate() {
        assert_eq!(
            tensor.dtype(),
            expected_types[port],
            "output {port} has another dtype than the graph says\nnode: {}",
            node()
        );
        if let Ok(shapes) = &inferred {
            let dims: Vec<i64> = tensor.dims().iter().map(|&d| d as i64).collect();
            let actual = Shape::from_dims(&dims);
            let said = &shapes[index][port];
            assert!(
                said.is_compatible(&actual),
                "shape inference says output {port} is {said}, the kernel made {actual}\nnode: {}\ninput shapes: {:?}",
                node(),
                case.feeds
                    .iter()
                    .map(|(n, t)| format!("{n}: {:?}", t.dims()))
                    .collect::<Vec<_>>()
            );
        }
    }
    Outcome::Ran {
        shape_checked: inferred.is_ok(),
    }
}

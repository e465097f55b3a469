//! The library's ops as JAX sees them: those with a CPU kernel, by slot
//! (the handler of slot `i` serves op `i`), with their Python names and
//! XLA FFI target names, and the result shapes and dtypes of a call
//! inferred by the op's own shape function.

use std::sync::OnceLock;

use prost::Message;
use registry_core::library::LibraryContents;
use registry_core::library::slots::SLOTS;
use registry_core::node_def::in_out_types_for_node;
use registry_core::proto::{DataType, OpDef};
use registry_core::shape::{Shape, ShapeFn, infer_shapes};
use serde_json::{Value as Json, json};

use crate::attrs;
use crate::bind::bind;
use crate::dtypes;
use crate::error::CallError;

/// The version of the protocol between a library and the Python package
/// (these entry points and their JSON): the package refuses a library of
/// another.
pub const ABI_VERSION: u32 = 1;

/// A crate whose ops JAX may call (what `export_jax_library!` submits).
#[derive(Debug)]
pub struct JaxExport {
    /// The crate's name.
    pub crate_name: &'static str,
}

inventory::collect!(JaxExport);

/// An op the library offers to JAX.
pub(crate) struct LoadedOp {
    pub(crate) op_def: OpDef,
    pub(crate) shape_fn: Option<ShapeFn>,
    /// The Python function's name (`zero_out`).
    pub(crate) function: String,
    /// The XLA FFI target it registers (`opreg_zero_out_ZeroOut`).
    pub(crate) target: String,
}

/// Every op offered, by slot (the handler of slot `i` serves `ops[i]`).
pub(crate) struct Library {
    pub(crate) name: String,
    pub(crate) ops: Vec<LoadedOp>,
    /// Ops left out, and why.
    pub(crate) skipped: Vec<String>,
}

static LIBRARY: OnceLock<Library> = OnceLock::new();

/// The library's ops, collected on first use.
pub(crate) fn library() -> &'static Library {
    LIBRARY.get_or_init(collect)
}

fn collect() -> Library {
    let mut crates: Vec<&'static str> = inventory::iter::<JaxExport>
        .into_iter()
        .map(|e| e.crate_name)
        .collect();
    crates.sort_unstable();
    crates.dedup();
    let mut ops = Vec::new();
    let mut skipped = Vec::new();
    for krate in &crates {
        let contents = LibraryContents::collect(krate);
        let mut registrations = contents.ops.clone();
        registrations.sort_by_key(|r| r.name);
        for registration in registrations {
            let name = registration.name;
            let op_def = match OpDef::decode(registration.op_def) {
                Ok(op_def) => op_def,
                Err(e) => {
                    skipped.push(format!("{name}: its OpDef does not decode: {e}"));
                    continue;
                }
            };
            let has_cpu_kernel = contents
                .kernels
                .iter()
                .any(|k| k.op == name && k.device == "CPU");
            if !has_cpu_kernel {
                skipped.push(format!("{name}: no CPU kernel"));
                continue;
            }
            if ops.len() == SLOTS {
                skipped.push(format!("{name}: a library offers JAX at most {SLOTS} ops"));
                continue;
            }
            ops.push(LoadedOp {
                function: function_name(name),
                target: format!("opreg_{krate}_{name}"),
                shape_fn: registration.shape_fn,
                op_def,
            });
        }
    }
    Library {
        name: crates.join(", "),
        ops,
        skipped,
    }
}

/// TensorFlow's Python name of an op: `ZeroOut` -> `zero_out`,
/// `BatchMatMulV2` -> `batch_mat_mul_v2`, `Conv2D` -> `conv2d`.
pub fn function_name(op: &str) -> String {
    let chars: Vec<char> = op.chars().collect();
    let mut out = String::with_capacity(op.len() + 4);
    for (i, &c) in chars.iter().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            let prev = chars[i - 1];
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_ascii_lowercase());
            if prev.is_ascii_lowercase() || (prev.is_ascii_uppercase() && next_lower) {
                out.push('_');
            }
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

// --------------------------------------------------------------- infer

/// The result shapes and dtypes of a call of op `slot`, and the attrs to
/// call its target with. `request`: `{"inputs": [...], "attrs": {...}}`,
/// one input per input arg: `{"dtype": "float32", "shape": [2, 3]}`, or a
/// list of them for a list arg.
pub fn infer(slot: usize, request: &Json) -> Result<Json, CallError> {
    let op = library()
        .ops
        .get(slot)
        .ok_or_else(|| CallError::Internal(format!("the library has no op {slot}")))?;
    infer_op(op, request).map_err(|e| e.context(&format!("op '{}'", op.op_def.name)))
}

fn infer_op(op: &LoadedOp, request: &Json) -> Result<Json, CallError> {
    let op_def = &op.op_def;
    let empty = serde_json::Map::new();
    let given = match &request["attrs"] {
        Json::Object(map) => map,
        Json::Null => &empty,
        other => {
            return Err(CallError::Value(format!(
                "attrs must be a mapping, got {other}"
            )));
        }
    };
    let attrs = attrs::from_json(op_def, given)?;
    let inputs = request["inputs"]
        .as_array()
        .ok_or_else(|| CallError::Internal("the request has no inputs list".into()))?;
    let mut groups: Vec<Vec<DataType>> = Vec::with_capacity(inputs.len());
    let mut shapes: Vec<Shape> = Vec::new();
    for (index, input) in inputs.iter().enumerate() {
        let arg = op_def.input_arg.get(index).map_or("?", |a| a.name.as_str());
        let tensors: Vec<&Json> = match input {
            Json::Array(items) => items.iter().collect(),
            one => vec![one],
        };
        let mut dtypes = Vec::with_capacity(tensors.len());
        for tensor in tensors {
            let (dtype, shape) = input_aval(arg, tensor)?;
            dtypes.push(dtype);
            shapes.push(shape);
        }
        groups.push(dtypes);
    }
    let node = bind(op_def, &attrs, &groups)?;
    let shape_fn = op.shape_fn.ok_or_else(|| {
        CallError::Unsupported(
            "the op has no shape function, and JAX needs its result shapes before the call".into(),
        )
    })?;
    let out_shapes = infer_shapes(op_def, shape_fn, &node, &shapes, &[])
        .map_err(|e| CallError::Value(e.to_string()))?;
    let (_, out_types) =
        in_out_types_for_node(&node, op_def).map_err(|e| CallError::Value(e.to_string()))?;
    let mut outputs = Vec::with_capacity(out_types.len());
    for (index, (shape, dtype)) in out_shapes.iter().zip(&out_types).enumerate() {
        let dims = shape.to_known_dims().ok_or_else(|| {
            CallError::Unsupported(format!(
                "output {index} has shape {shape}: its size depends on input values, and JAX must know it before the call"
            ))
        })?;
        let name = dtypes::numpy_name(*dtype).ok_or_else(|| {
            CallError::Unsupported(format!(
                "output {index} is {dtype:?}, which JAX has no arrays of"
            ))
        })?;
        outputs.push(json!({"dtype": name, "shape": dims}));
    }
    let mut names: Vec<&String> = node.attr.keys().collect();
    names.sort();
    let call_attrs = names
        .into_iter()
        .map(|name| {
            let def = op_def
                .attr
                .iter()
                .find(|a| &a.name == name)
                .ok_or_else(|| {
                    CallError::Internal(format!("the node has attr '{name}', the op not"))
                })?;
            attrs::call_attr(def, &node.attr[name])
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(json!({"outputs": outputs, "attrs": call_attrs}))
}

/// An input's dtype and shape from the request.
fn input_aval(arg: &str, tensor: &Json) -> Result<(DataType, Shape), CallError> {
    let dtype_name = tensor["dtype"].as_str().unwrap_or("?");
    let dtype = dtypes::from_name(dtype_name).ok_or_else(|| {
        CallError::Type(format!(
            "input '{arg}' is a {dtype_name} array, which opreg kernels cannot take"
        ))
    })?;
    let dims = tensor["shape"]
        .as_array()
        .and_then(|d| d.iter().map(Json::as_i64).collect::<Option<Vec<i64>>>())
        .ok_or_else(|| CallError::Value(format!("input '{arg}' has no static shape")))?;
    Ok((dtype, Shape::from_dims(&dims)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_names_follow_tensorflows_rule() {
        assert_eq!(function_name("ZeroOut"), "zero_out");
        assert_eq!(function_name("BatchMatMulV2"), "batch_mat_mul_v2");
        assert_eq!(function_name("Conv2D"), "conv2d");
        assert_eq!(function_name("LRN"), "lrn");
        assert_eq!(function_name("MatMul"), "mat_mul");
        assert_eq!(function_name("TPUReplicate"), "tpu_replicate");
    }
}

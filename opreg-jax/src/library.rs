//! The library as the Python package sees it: its ops (those with a CPU
//! kernel), each with the XLA FFI handler and target name it registers,
//! and the C entry points that describe them, infer a call's result shapes
//! and dtypes, and report counters. Requests and answers are JSON text
//! (the package needs nothing but Python's standard library and JAX).

use std::ffi::{CStr, CString, c_char};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::OnceLock;

use prost::Message;
use registry_core::attr::summarize_attr_value;
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
use crate::ffi;
use crate::handler::{self, handler_for_slot};

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

// ------------------------------------------------------------ describe

/// The library's description: versions, and each op with its function
/// name, target, handler address, inputs and attrs.
pub fn describe() -> Json {
    let library = library();
    let ops: Vec<Json> = library
        .ops
        .iter()
        .enumerate()
        .map(|(slot, op)| {
            let handler = handler_for_slot(slot).map_or(0, |h| h as usize);
            json!({
                "name": op.op_def.name,
                "function": op.function,
                "target": op.target,
                "handler": handler,
                "summary": op.op_def.summary,
                "inputs": op.op_def.input_arg.iter().map(|a| json!({
                    "name": a.name,
                    "list": !a.number_attr.is_empty() || !a.type_list_attr.is_empty(),
                })).collect::<Vec<_>>(),
                "outputs": op.op_def.output_arg.iter().map(|a| a.name.as_str()).collect::<Vec<_>>(),
                "attrs": op.op_def.attr.iter().map(|a| json!({
                    "name": a.name,
                    "type": a.r#type,
                    "default": a.default_value.as_ref().map(summarize_attr_value),
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    json!({
        "abi": ABI_VERSION,
        "opreg_jax": env!("CARGO_PKG_VERSION"),
        "ffi_api": [ffi::API_MAJOR, ffi::API_MINOR],
        "library": library.name,
        "ops": ops,
        "skipped": library.skipped,
    })
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

// -------------------------------------------------------- entry points

fn to_c(value: Json) -> *mut c_char {
    // JSON text has no NUL bytes (they are escaped).
    CString::new(value.to_string()).map_or(std::ptr::null_mut(), CString::into_raw)
}

fn error_json(error: &CallError) -> Json {
    json!({"error": {"kind": error.python_kind(), "message": error.to_string()}})
}

/// `describe()` as JSON text; free it with [`opreg_jax_free`].
#[unsafe(no_mangle)]
pub extern "C" fn opreg_jax_describe() -> *mut c_char {
    let answer = catch_unwind(describe).unwrap_or_else(|panic| {
        error_json(&CallError::Internal(format!(
            "describing the library panicked: {}",
            registry_core::kernel::KernelError::from_panic(&*panic)
        )))
    });
    to_c(answer)
}

/// `infer(slot, request)` as JSON text (`{"error": ...}` when it fails);
/// free it with [`opreg_jax_free`].
///
/// # Safety
/// `request` must be a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn opreg_jax_infer(slot: usize, request: *const c_char) -> *mut c_char {
    if request.is_null() {
        return to_c(error_json(&CallError::Internal("no request".into())));
    }
    // SAFETY: the caller's promise.
    let text = unsafe { CStr::from_ptr(request) }.to_string_lossy();
    let answer = catch_unwind(AssertUnwindSafe(|| {
        let request: Json = serde_json::from_str(&text)
            .map_err(|e| CallError::Internal(format!("the request is not JSON: {e}")))?;
        infer(slot, &request)
    }))
    .unwrap_or_else(|panic| {
        Err(CallError::Kernel(
            registry_core::kernel::KernelError::from_panic(&*panic),
        ))
    });
    to_c(answer.unwrap_or_else(|e| error_json(&e)))
}

/// The handlers' counters as JSON text: calls, kernels built, outputs
/// copied into XLA's buffers; free it with [`opreg_jax_free`].
#[unsafe(no_mangle)]
pub extern "C" fn opreg_jax_stats() -> *mut c_char {
    to_c(handler::stats())
}

/// Frees a string the entry points returned.
///
/// # Safety
/// `text` must come from one of them, freed once (or be null).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn opreg_jax_free(text: *mut c_char) {
    if !text.is_null() {
        // SAFETY: made by `CString::into_raw` in `to_c`, freed once.
        drop(unsafe { CString::from_raw(text) });
    }
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

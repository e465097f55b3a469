//! The C entry points the Python package calls: the library's description
//! (versions, and each op with its function name, target, handler address,
//! inputs and attrs), shape inference for a call, and the handlers'
//! counters. Requests and answers are JSON text (the package needs nothing
//! but Python's standard library and JAX).

use std::ffi::{CStr, CString, c_char};
use std::panic::{AssertUnwindSafe, catch_unwind};

use registry_core::attr::summarize_attr_value;
use serde_json::{Value as Json, json};

use crate::error::CallError;
use crate::ffi;
use crate::handler::{self, handler_for_slot};
use crate::library::{ABI_VERSION, infer, library};

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

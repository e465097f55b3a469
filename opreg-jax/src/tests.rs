//! The handlers and entry points driven the way XLA and the Python package
//! drive them, without either: call frames built here, with an API table
//! whose `XLA_FFI_Error_Create` records the error it is asked to make.

use std::cell::RefCell;
use std::ffi::{CStr, CString, c_char, c_int, c_void};

use registry_core::kernel::{
    BuildKernel, KernelError, OpKernel, OpKernelConstruction, OpKernelContext,
};
use registry_core::shape::common::unchanged_shape;
use registry_core::{kernel, op};
use serde_json::{Value as Json, json};

use crate::entry::describe;
use crate::ffi;
use crate::handler::handler_for_slot;
use crate::library::{infer, library};

/// `y = x * factor`, elementwise.
#[op(
    input = "x: float",
    output = "y: float",
    attr = "factor: float = 2.0",
    shape_fn = unchanged_shape
)]
pub struct JaxTestScale;

#[kernel(op = JaxTestScale, device = CPU)]
struct JaxTestScaleKernel {
    factor: f32,
}

impl BuildKernel for JaxTestScaleKernel {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        Ok(Self {
            factor: ctx.attr("factor")?,
        })
    }
}

impl OpKernel for JaxTestScaleKernel {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        let (x, y) = ctx.input_and_output_to_overwrite(0, 0)?;
        for (y, x) in y
            .as_mut_slice::<f32>()?
            .iter_mut()
            .zip(x.as_slice::<f32>()?)
        {
            *y = x * self.factor;
        }
        Ok(())
    }
}

/// A kernel that panics.
#[op(input = "x: float", output = "y: float", shape_fn = unchanged_shape)]
pub struct JaxTestPanic;

#[kernel(op = JaxTestPanic, device = CPU)]
fn jax_test_panic(_ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    panic!("on purpose")
}

/// No kernel: not offered to JAX.
#[op(input = "x: float", output = "y: float")]
pub struct JaxTestNoKernel;

crate::export_jax_library!(opreg_jax);

thread_local! {
    /// The errors the fake `XLA_FFI_Error_Create` was asked to make on this
    /// thread (the handler runs on its caller's).
    static ERRORS: RefCell<Vec<(c_int, String)>> = const { RefCell::new(Vec::new()) };
}

unsafe extern "C" fn record_error(args: *mut ffi::ErrorCreateArgs) -> *mut ffi::Error {
    // SAFETY: the handler passes a live args struct with a C string.
    let (code, message) = unsafe { ((*args).errc, CStr::from_ptr((*args).message)) };
    ERRORS.with_borrow_mut(|e| e.push((code, message.to_string_lossy().into_owned())));
    // A non-null error; never dereferenced.
    std::ptr::NonNull::<ffi::Error>::dangling().as_ptr()
}

fn api(major: c_int) -> ffi::Api {
    ffi::Api {
        struct_size: ffi::API_HEAD_SIZE,
        extension_start: std::ptr::null_mut(),
        api_version: ffi::ApiVersion {
            struct_size: ffi::API_VERSION_SIZE,
            extension_start: std::ptr::null_mut(),
            major_version: major,
            minor_version: 3,
        },
        internal_api: std::ptr::null(),
        error_create: Some(record_error),
    }
}

/// An f32 buffer with its dims.
struct Buf {
    data: Vec<f32>,
    dims: Vec<i64>,
    dtype: c_int,
    raw: ffi::Buffer,
}

impl Buf {
    fn new(data: Vec<f32>, dtype: c_int) -> Box<Buf> {
        let mut b = Box::new(Buf {
            dims: vec![data.len() as i64],
            data,
            dtype,
            raw: ffi::Buffer {
                struct_size: ffi::BUFFER_SIZE,
                extension_start: std::ptr::null_mut(),
                dtype,
                data: std::ptr::null_mut(),
                rank: 1,
                dims: std::ptr::null_mut(),
            },
        });
        b.raw.data = b.data.as_mut_ptr().cast();
        b.raw.dims = b.dims.as_mut_ptr();
        b.raw.dtype = b.dtype;
        b
    }
}

/// A call frame over `args`, `rets` and `attrs` (name, type, pointer).
struct Frame {
    frame: ffi::CallFrame,
    _keep: Vec<Box<dyn std::any::Any>>,
}

fn frame(
    api: &ffi::Api,
    args: &mut [Box<Buf>],
    rets: &mut [Box<Buf>],
    attrs: Vec<(&str, c_int, *mut c_void)>,
) -> Frame {
    let mut keep: Vec<Box<dyn std::any::Any>> = Vec::new();
    let mut arg_types = vec![ffi::BUFFER; args.len()];
    let mut arg_ptrs: Vec<*mut c_void> = args
        .iter_mut()
        .map(|b| (&mut b.raw as *mut ffi::Buffer).cast())
        .collect();
    let mut ret_types = vec![ffi::BUFFER; rets.len()];
    let mut ret_ptrs: Vec<*mut c_void> = rets
        .iter_mut()
        .map(|b| (&mut b.raw as *mut ffi::Buffer).cast())
        .collect();
    let mut names: Vec<Box<ffi::ByteSpan>> = attrs
        .iter()
        .map(|(n, _, _)| {
            Box::new(ffi::ByteSpan {
                ptr: n.as_ptr().cast(),
                len: n.len(),
            })
        })
        .collect();
    let mut name_ptrs: Vec<*mut ffi::ByteSpan> =
        names.iter_mut().map(|b| &mut **b as *mut _).collect();
    let mut attr_types: Vec<c_int> = attrs.iter().map(|a| a.1).collect();
    let mut attr_ptrs: Vec<*mut c_void> = attrs.iter().map(|a| a.2).collect();
    let frame = ffi::CallFrame {
        struct_size: ffi::CALL_FRAME_SIZE,
        extension_start: std::ptr::null_mut(),
        api,
        ctx: std::ptr::null_mut(),
        stage: ffi::STAGE_EXECUTE,
        args: ffi::Args {
            struct_size: ffi::ARGS_SIZE,
            extension_start: std::ptr::null_mut(),
            size: args.len() as i64,
            types: arg_types.as_mut_ptr(),
            args: arg_ptrs.as_mut_ptr(),
        },
        rets: ffi::Rets {
            struct_size: ffi::RETS_SIZE,
            extension_start: std::ptr::null_mut(),
            size: rets.len() as i64,
            types: ret_types.as_mut_ptr(),
            rets: ret_ptrs.as_mut_ptr(),
        },
        attrs: ffi::Attrs {
            struct_size: ffi::ATTRS_SIZE,
            extension_start: std::ptr::null_mut(),
            size: attrs.len() as i64,
            types: attr_types.as_mut_ptr(),
            names: name_ptrs.as_mut_ptr(),
            attrs: attr_ptrs.as_mut_ptr(),
        },
        future: std::ptr::null_mut(),
    };
    keep.push(Box::new(arg_types));
    keep.push(Box::new(arg_ptrs));
    keep.push(Box::new(ret_types));
    keep.push(Box::new(ret_ptrs));
    keep.push(Box::new(names));
    keep.push(Box::new(name_ptrs));
    keep.push(Box::new(attr_types));
    keep.push(Box::new(attr_ptrs));
    Frame { frame, _keep: keep }
}

fn slot_of(op: &str) -> usize {
    library()
        .ops
        .iter()
        .position(|o| o.op_def.name == op)
        .unwrap_or_else(|| panic!("{op} is not offered"))
}

/// Runs the handler of `op` on `frame`; the error it made, if any.
fn call(op: &str, frame: &mut Frame) -> Option<(c_int, String)> {
    let handler = handler_for_slot(slot_of(op)).expect("a handler");
    let before = ERRORS.with_borrow(Vec::len);
    // SAFETY: a complete call frame over live buffers.
    let error = unsafe { handler(&mut frame.frame) };
    let made = ERRORS.with_borrow(|e| e[before..].to_vec());
    assert_eq!(
        error.is_null(),
        made.is_empty(),
        "null exactly when no error was made"
    );
    assert!(made.len() <= 1, "one error per call: {made:?}");
    made.last().cloned()
}

const F32: c_int = 11;
const F64: c_int = 12;

#[test]
fn the_metadata_probe_gets_the_api_version_without_touching_the_api() {
    let mut metadata = ffi::Metadata {
        struct_size: ffi::METADATA_SIZE,
        api_version: ffi::ApiVersion {
            struct_size: 0,
            extension_start: std::ptr::null_mut(),
            major_version: -1,
            minor_version: -1,
        },
        traits: 7,
        state_type_id: 0,
    };
    let mut extension = ffi::MetadataExtension {
        extension_base: ffi::ExtensionBase {
            struct_size: ffi::METADATA_EXTENSION_SIZE,
            kind: ffi::EXTENSION_METADATA,
            next: std::ptr::null_mut(),
        },
        metadata: &mut metadata,
    };
    let mut probe = frame(&api(0), &mut [], &mut [], vec![]);
    probe.frame.api = std::ptr::null(); // XLA need not set it for the probe
    probe.frame.extension_start = (&mut extension as *mut ffi::MetadataExtension).cast();
    assert_eq!(call("JaxTestScale", &mut probe), None);
    assert_eq!(
        (
            metadata.api_version.major_version,
            metadata.api_version.minor_version
        ),
        (0, 3)
    );
    assert_eq!(metadata.api_version.struct_size, ffi::API_VERSION_SIZE);
    assert_eq!(metadata.traits, 0);
    // A metadata struct smaller than API 0.3's is left alone.
    metadata.struct_size = 8;
    metadata.traits = 7;
    assert_eq!(call("JaxTestScale", &mut probe), None);
    assert_eq!(metadata.traits, 7);
}

#[test]
fn a_call_runs_the_kernel_on_xlas_buffers_with_its_attrs() {
    let api = api(0);
    let n = 64; // 256 bytes: held without a copy when the Vec is aligned
    let mut args = [Buf::new((0..n).map(|i| i as f32).collect(), F32)];
    let mut rets = [Buf::new(vec![0.0; n], F32)];
    let mut factor = 3.0f64;
    let mut scalar = ffi::Scalar {
        dtype: F64,
        value: (&mut factor as *mut f64).cast(),
    };
    let mut f = frame(
        &api,
        &mut args,
        &mut rets,
        vec![(
            "factor",
            ffi::attr_type::SCALAR,
            (&mut scalar as *mut ffi::Scalar).cast(),
        )],
    );
    assert_eq!(call("JaxTestScale", &mut f), None);
    let expected: Vec<f32> = (0..n).map(|i| i as f32 * 3.0).collect();
    assert_eq!(rets[0].data, expected);
    // Without the attr: its default.
    let mut f = frame(&api, &mut args, &mut rets, vec![]);
    assert_eq!(call("JaxTestScale", &mut f), None);
    assert_eq!(rets[0].data[5], 10.0);
    // Another stage (e.g. XLA's prepare) does nothing.
    let mut f = frame(&api, &mut args, &mut rets, vec![]);
    f.frame.stage = 1;
    rets[0].data.fill(-1.0);
    assert_eq!(call("JaxTestScale", &mut f), None);
    assert_eq!(rets[0].data[5], -1.0);
}

#[test]
fn bad_calls_become_xla_errors_with_the_status_code() {
    let api0 = api(0);
    let x = || [Buf::new(vec![1.0, 2.0], F32)];
    let y = || [Buf::new(vec![0.0, 0.0], F32)];
    // An attribute of the wrong kind: INVALID_ARGUMENT.
    let span = ffi::ByteSpan {
        ptr: c"abc".as_ptr(),
        len: 3,
    };
    let (mut args, mut rets) = (x(), y());
    let mut f = frame(
        &api0,
        &mut args,
        &mut rets,
        vec![(
            "factor",
            ffi::attr_type::STRING,
            (&span as *const ffi::ByteSpan).cast_mut().cast(),
        )],
    );
    assert_eq!(
        call("JaxTestScale", &mut f),
        Some((
            3,
            "opreg op 'JaxTestScale': attr 'factor' is a float, got a string".into()
        ))
    );
    // An input of a dtype the op does not take.
    let (mut args, mut rets) = ([Buf::new(vec![1.0, 2.0], F64)], y());
    let mut f = frame(&api0, &mut args, &mut rets, vec![]);
    let (code, message) = call("JaxTestScale", &mut f).expect("an error");
    assert_eq!(code, 3, "{message}");
    assert!(
        message.contains("input arg 'x' is float, but was given double"),
        "{message}"
    );
    // A result count the op does not make.
    let (mut args, mut rets) = (
        x(),
        [Buf::new(vec![0.0; 2], F32), Buf::new(vec![0.0; 2], F32)],
    );
    let mut f = frame(&api0, &mut args, &mut rets, vec![]);
    let (code, message) = call("JaxTestScale", &mut f).expect("an error");
    assert_eq!(
        (code, message.as_str()),
        (
            3,
            "opreg op 'JaxTestScale': the call has 2 results; the op makes 1"
        )
    );
    // A panic: INTERNAL, and the next call runs.
    let (mut args, mut rets) = (x(), y());
    let mut f = frame(&api0, &mut args, &mut rets, vec![]);
    let (code, message) = call("JaxTestPanic", &mut f).expect("an error");
    assert_eq!(
        (code, message.as_str()),
        (
            13,
            "opreg op 'JaxTestPanic': the kernel panicked: on purpose"
        )
    );
    let mut f = frame(&api0, &mut args, &mut rets, vec![]);
    assert_eq!(call("JaxTestScale", &mut f), None);
    assert_eq!(rets[0].data, [2.0, 4.0]);
    // An XLA of another FFI major version: UNIMPLEMENTED, nothing run.
    let api1 = api(1);
    rets[0].data.fill(0.0);
    let mut f = frame(&api1, &mut args, &mut rets, vec![]);
    let (code, message) = call("JaxTestScale", &mut f).expect("an error");
    assert_eq!(code, 12);
    assert!(
        message.ends_with("XLA's FFI API is 1.3; this op library was built for 0.3"),
        "{message}"
    );
    assert_eq!(rets[0].data, [0.0, 0.0]);
    // A call frame smaller than API 0.3's: INTERNAL.
    let mut f = frame(&api0, &mut args, &mut rets, vec![]);
    f.frame.struct_size = 64;
    let (code, message) = call("JaxTestScale", &mut f).expect("an error");
    assert_eq!(code, 13);
    assert!(
        message.contains("call frame is 64 bytes, this handler needs 168"),
        "{message}"
    );
}

#[test]
fn describe_offers_the_ops_with_cpu_kernels_and_infer_answers_shapes() {
    let described = describe();
    assert_eq!(described["abi"], crate::ABI_VERSION);
    assert_eq!(described["ffi_api"], json!([0, 3]));
    assert_eq!(described["library"], "opreg_jax");
    let names: Vec<&str> = described["ops"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["function"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["jax_test_panic", "jax_test_scale"]);
    assert_eq!(
        described["skipped"],
        json!(["JaxTestNoKernel: no CPU kernel"])
    );
    let scale = &described["ops"][1];
    assert_eq!(scale["target"], "opreg_opreg_jax_JaxTestScale");
    assert_ne!(scale["handler"], 0);
    assert_eq!(
        scale["attrs"][0],
        json!({"name": "factor", "type": "float", "default": "2"})
    );

    let slot = slot_of("JaxTestScale");
    let request =
        json!({"inputs": [{"dtype": "float32", "shape": [2, 5]}], "attrs": {"factor": "NaN"}});
    let answer = infer(slot, &request).expect("inferred");
    assert_eq!(
        answer["outputs"],
        json!([{"dtype": "float32", "shape": [2, 5]}])
    );
    let attrs = answer["attrs"].as_array().unwrap();
    assert_eq!(attrs.len(), 1);
    assert_eq!(
        (&attrs[0]["name"], &attrs[0]["kind"]),
        (&json!("factor"), &json!("float32"))
    );
    assert!(
        attrs[0]["value"].is_null(),
        "NaN has no JSON number: {}",
        attrs[0]
    );

    let bad = |request: Json| {
        let e = infer(slot, &request).unwrap_err();
        (e.python_kind(), e.to_string())
    };
    let (kind, message) = bad(json!({"inputs": [{"dtype": "int32", "shape": [2]}]}));
    assert_eq!(kind, "type", "{message}");
    let (kind, message) =
        bad(json!({"inputs": [{"dtype": "float32", "shape": [2]}], "attrs": {"factor": [1]}}));
    assert_eq!(
        (kind, message.as_str()),
        (
            "value",
            "op 'JaxTestScale': attr 'factor' is a float, got [1]"
        )
    );
    let (kind, _) = bad(
        json!({"inputs": [{"dtype": "float32", "shape": [2]}, {"dtype": "float32", "shape": [2]}]}),
    );
    assert_eq!(kind, "value");
}

#[test]
fn entry_points_answer_json_text_and_free_it() {
    let text = crate::entry::opreg_jax_describe();
    // SAFETY: a NUL-terminated string from the entry point, freed once.
    let described: Json =
        serde_json::from_str(unsafe { CStr::from_ptr(text) }.to_str().unwrap()).unwrap();
    // SAFETY: from the entry point, freed once.
    unsafe { crate::entry::opreg_jax_free(text) };
    assert_eq!(described["abi"], crate::ABI_VERSION);
    let request = CString::new("not json").unwrap();
    // SAFETY: a NUL-terminated request.
    let text: *mut c_char = unsafe { crate::entry::opreg_jax_infer(0, request.as_ptr()) };
    // SAFETY: as above.
    let answer: Json =
        serde_json::from_str(unsafe { CStr::from_ptr(text) }.to_str().unwrap()).unwrap();
    // SAFETY: from the entry point, freed once.
    unsafe { crate::entry::opreg_jax_free(text) };
    assert_eq!(answer["error"]["kind"], "internal");
}

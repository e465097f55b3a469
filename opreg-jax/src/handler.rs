//! The XLA FFI handlers: one per op (a [slot](registry_core::slot_table)),
//! each run by XLA's CPU runtime with the call's buffers and attributes.
//!
//! A call: the metadata probe answered (the FFI API version these handlers
//! were written for); XLA's API version and every struct size checked; the
//! attributes read by the op's attr types; the node bound from them and
//! the input buffers' dtypes, and its kernel built once per distinct node
//! (cached); the kernel run on XLA's input buffers in place and, through
//! the context's [`ForeignForwarding`] hook, on XLA's result buffers as
//! its outputs. An output a kernel makes elsewhere (one it computes in
//! memory of its own, or small or unaligned memory that opreg copies) is
//! copied into XLA's buffer once. Every error, and every panic, becomes an
//! XLA FFI error made by XLA's own `XLA_FFI_Error_Create`.

use std::ffi::{CString, c_int};
use std::hash::BuildHasherDefault;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock, RwLock};

use prost::Message;
use registry_core::kernel::{
    ForeignForwarding, Forwarded, KernelError, KernelInstance, OpKernelContext, create_op_kernel,
};
use registry_core::library::slots::slot;
use registry_core::proto::{DataType, DataTypeExt};
use registry_core::tensor::{HOST_ALIGNMENT, HostBuffer, INLINE_CAPACITY, Tensor, TensorShape};
use rustc_hash::FxHasher;
use serde_json::{Value as Json, json};
use smallvec::SmallVec;

use crate::attrs::{self, NamedAttr};
use crate::bind::{bind, group};
use crate::dtypes;
use crate::error::CallError;
use crate::ffi::{self, CallFrame, Handler};
use crate::library::{LoadedOp, library};

/// The handler of slot `HI * 32 + LO`.
unsafe extern "C" fn handler_slot<const HI: usize, const LO: usize>(
    frame: *mut CallFrame,
) -> *mut ffi::Error {
    // SAFETY: XLA passes its live call frame.
    unsafe { execute(HI * 32 + LO, frame) }
}

static HANDLERS: [[Handler; 32]; 32] = registry_core::slot_table!(handler_slot as Handler);

/// The handler of slot `index`, if there is one.
pub fn handler_for_slot(index: usize) -> Option<Handler> {
    slot(&HANDLERS, index)
}

static CALLS: AtomicU64 = AtomicU64::new(0);
static KERNELS_BUILT: AtomicU64 = AtomicU64::new(0);
static OUTPUT_COPIES: AtomicU64 = AtomicU64::new(0);

/// The counters, as JSON.
pub fn stats() -> Json {
    json!({
        "calls": CALLS.load(Ordering::Relaxed),
        "kernels_built": KERNELS_BUILT.load(Ordering::Relaxed),
        "output_copies": OUTPUT_COPIES.load(Ordering::Relaxed),
    })
}

/// One handler call.
///
/// # Safety
/// `frame` must be XLA's live call frame (or null).
unsafe fn execute(slot: usize, frame: *mut CallFrame) -> *mut ffi::Error {
    if frame.is_null() {
        return std::ptr::null_mut();
    }
    // SAFETY: a call frame starts with its size and extension list.
    let (size, extension) = unsafe { ((*frame).struct_size, (*frame).extension_start) };
    // SAFETY: an extension starts with its base, whose type says what it is.
    if !extension.is_null() && unsafe { (*extension).kind } == ffi::EXTENSION_METADATA {
        // SAFETY: a metadata extension, live for the call.
        unsafe { answer_probe(extension.cast()) };
        return std::ptr::null_mut();
    }
    if size < std::mem::offset_of!(CallFrame, ctx) {
        eprintln!("opreg-jax: XLA gave a call frame too small to report an error in");
        return std::ptr::null_mut();
    }
    // SAFETY: the frame covers `api`, XLA's API table (or null).
    let api = unsafe { (*frame).api.as_ref() };
    let Some(create) = api.and_then(|api| {
        let covered = ffi::covers(api.struct_size, ffi::API_HEAD_SIZE);
        covered.then_some(api.error_create).flatten()
    }) else {
        eprintln!("opreg-jax: XLA gave no usable API table to report errors with");
        return std::ptr::null_mut();
    };
    let version = api
        .map(|a| a.api_version)
        .filter(|v| ffi::covers(v.struct_size, ffi::API_VERSION_SIZE));
    let result = match version {
        Some(v) if v.major_version != ffi::API_MAJOR => Err(CallError::Unsupported(format!(
            "XLA's FFI API is {}.{}; this op library was built for {}.{}",
            v.major_version,
            v.minor_version,
            ffi::API_MAJOR,
            ffi::API_MINOR
        ))),
        _ if !ffi::covers(size, ffi::CALL_FRAME_SIZE) => Err(CallError::Internal(format!(
            "XLA's call frame is {size} bytes, this handler needs {}",
            ffi::CALL_FRAME_SIZE
        ))),
        _ => {
            // SAFETY: the frame is live and covers every field read.
            let frame = unsafe { &*frame };
            if frame.stage != ffi::STAGE_EXECUTE {
                return std::ptr::null_mut();
            }
            catch_unwind(AssertUnwindSafe(|| run(slot, frame)))
                .unwrap_or_else(|panic| Err(CallError::Kernel(KernelError::from_panic(&*panic))))
        }
    };
    match result {
        Ok(()) => std::ptr::null_mut(),
        Err(error) => {
            let op = library().ops.get(slot).map_or_else(
                || format!("op slot {slot}"),
                |op| format!("opreg op '{}'", op.op_def.name),
            );
            let error = error.context(&op);
            // NUL bytes cannot cross as C text.
            let message = CString::new(error.to_string().replace('\0', "")).unwrap_or_default();
            let mut args = ffi::ErrorCreateArgs {
                struct_size: ffi::ERROR_CREATE_ARGS_SIZE,
                extension_start: std::ptr::null_mut(),
                message: message.as_ptr(),
                errc: error.code() as c_int,
            };
            // SAFETY: XLA's own constructor, given a live args struct; it
            // copies the message.
            unsafe { create(&mut args) }
        }
    }
}

/// Answers XLA's metadata probe (made when the target is registered):
/// the FFI API version the handler was written for, and no traits. XLA's
/// API table is not used: it need not be set during the probe.
///
/// # Safety
/// `extension` must be XLA's live metadata extension.
unsafe fn answer_probe(extension: *mut ffi::MetadataExtension) {
    // SAFETY: the caller's promise; the sizes are checked before each read.
    unsafe {
        if !ffi::covers(
            (*extension).extension_base.struct_size,
            ffi::METADATA_EXTENSION_SIZE,
        ) {
            return;
        }
        let metadata = (*extension).metadata;
        if metadata.is_null() || !ffi::covers((*metadata).struct_size, ffi::METADATA_SIZE) {
            return;
        }
        (*metadata).api_version = ffi::ApiVersion {
            struct_size: ffi::API_VERSION_SIZE,
            extension_start: std::ptr::null_mut(),
            major_version: ffi::API_MAJOR,
            minor_version: ffi::API_MINOR,
        };
        (*metadata).traits = 0;
    }
}

/// An XLA buffer, read and checked.
struct XlaBuffer {
    dtype: DataType,
    data: *mut u8,
    dims: SmallVec<[usize; 4]>,
    bytes: usize,
}

/// Reads and checks `count` buffers of `kinds` and `pointers` (args or
/// rets).
///
/// # Safety
/// The arrays must hold `count` entries, each a live `XLA_FFI_Buffer` when
/// its kind says so.
unsafe fn read_buffers(
    what: &str,
    count: i64,
    kinds: *const c_int,
    pointers: *const *mut std::ffi::c_void,
) -> Result<SmallVec<[XlaBuffer; 4]>, CallError> {
    let count = usize::try_from(count).unwrap_or(0);
    let mut out = SmallVec::with_capacity(count);
    for i in 0..count {
        // SAFETY: the caller's promise.
        let (kind, raw) = unsafe { (*kinds.add(i), *pointers.add(i)) };
        if kind != ffi::BUFFER || raw.is_null() {
            return Err(CallError::Unsupported(format!(
                "{what} {i} is not a buffer (a token?); opreg ops take and make arrays only"
            )));
        }
        // SAFETY: a buffer, live for the call.
        let buffer = unsafe { &*raw.cast::<ffi::Buffer>() };
        if !ffi::covers(buffer.struct_size, ffi::BUFFER_SIZE) {
            return Err(CallError::Internal(format!(
                "XLA's {what} {i} buffer struct is {} bytes, this handler needs {}",
                buffer.struct_size,
                ffi::BUFFER_SIZE
            )));
        }
        let dtype = dtypes::from_xla(buffer.dtype).ok_or_else(|| {
            CallError::Type(format!(
                "{what} {i} is a {} array, which opreg kernels cannot take",
                dtypes::xla_name(buffer.dtype)
            ))
        })?;
        let rank = usize::try_from(buffer.rank).unwrap_or(0);
        let mut dims = SmallVec::with_capacity(rank);
        for d in 0..rank {
            // SAFETY: `dims` holds `rank` entries.
            let dim = unsafe { *buffer.dims.add(d) };
            dims.push(usize::try_from(dim).map_err(|_| {
                CallError::Internal(format!("{what} {i} has a negative dimension {dim}"))
            })?);
        }
        let bytes = dims
            .iter()
            .try_fold(dtype.element_size().unwrap_or(0), |n, &d| n.checked_mul(d))
            .ok_or_else(|| CallError::Internal(format!("{what} {i} is too large")))?;
        out.push(XlaBuffer {
            dtype,
            data: buffer.data.cast(),
            dims,
            bytes,
        });
    }
    Ok(out)
}

/// The key of a built kernel: the op's slot, the input dtypes and the
/// attrs XLA passed (encoded).
type KernelKey = (usize, SmallVec<[i32; 4]>, Vec<u8>);

type KernelCache =
    RwLock<std::collections::HashMap<KernelKey, Arc<KernelInstance>, BuildHasherDefault<FxHasher>>>;

fn kernel_cache() -> &'static KernelCache {
    static CACHE: OnceLock<KernelCache> = OnceLock::new();
    CACHE.get_or_init(Default::default)
}

/// The kernel of op `slot` for these attrs and input dtypes, built on
/// first use.
fn kernel_for(
    slot: usize,
    op: &LoadedOp,
    attrs: Vec<NamedAttr>,
    input_types: &[DataType],
) -> Result<Arc<KernelInstance>, CallError> {
    let mut encoded = Vec::new();
    for (name, value) in &attrs {
        encoded.extend_from_slice(name.as_bytes());
        encoded.push(0);
        value
            .encode_length_delimited(&mut encoded)
            .map_err(|e| CallError::Internal(format!("encoding attr '{name}': {e}")))?;
    }
    let key: KernelKey = (
        slot,
        input_types.iter().map(|&d| d as i32).collect(),
        encoded,
    );
    if let Some(kernel) = kernel_cache()
        .read()
        .unwrap_or_else(|p| p.into_inner())
        .get(&key)
    {
        return Ok(kernel.clone());
    }
    let groups = group(&op.op_def, &attrs, input_types)?;
    let node = bind(&op.op_def, &attrs, &groups)?;
    let kernel = Arc::new(create_op_kernel("CPU", &node).map_err(|e| match e {
        registry_core::kernel::CreateKernelError::Construction { source, .. } => {
            CallError::Kernel(source)
        }
        other => CallError::Value(other.to_string()),
    })?);
    KERNELS_BUILT.fetch_add(1, Ordering::Relaxed);
    let mut cache = kernel_cache().write().unwrap_or_else(|p| p.into_inner());
    Ok(cache.entry(key).or_insert(kernel).clone())
}

/// One call: XLA's buffers through the op's kernel.
fn run(slot: usize, frame: &CallFrame) -> Result<(), CallError> {
    CALLS.fetch_add(1, Ordering::Relaxed);
    let op = library()
        .ops
        .get(slot)
        .ok_or_else(|| CallError::Internal(format!("the library has no op {slot}")))?;
    for (what, size, needed) in [
        ("arguments", frame.args.struct_size, ffi::ARGS_SIZE),
        ("results", frame.rets.struct_size, ffi::RETS_SIZE),
    ] {
        if !ffi::covers(size, needed) {
            return Err(CallError::Internal(format!(
                "XLA's {what} struct is {size} bytes, this handler needs {needed}"
            )));
        }
    }
    // SAFETY: XLA's args and rets arrays hold `size` entries each, live for
    // the call.
    let (inputs, results) = unsafe {
        (
            read_buffers("input", frame.args.size, frame.args.types, frame.args.args)?,
            read_buffers("result", frame.rets.size, frame.rets.types, frame.rets.rets)?,
        )
    };
    // SAFETY: the frame's attributes are live for the call.
    let attrs = unsafe { attrs::from_xla(&op.op_def, &frame.attrs) }?;
    let input_types: SmallVec<[DataType; 4]> = inputs.iter().map(|b| b.dtype).collect();
    let kernel = kernel_for(slot, op, attrs, &input_types)?;
    let info = kernel.info();
    let output_types = info.output_types();
    if results.len() != output_types.len() {
        return Err(CallError::Value(format!(
            "the call has {} results; the op makes {}",
            results.len(),
            output_types.len()
        )));
    }
    for (index, (result, &dtype)) in results.iter().zip(output_types).enumerate() {
        if result.dtype != dtype {
            return Err(CallError::Type(format!(
                "result {index} was declared {}; the op makes {}",
                dtypes::numpy_name(result.dtype).unwrap_or("?"),
                dtypes::numpy_name(dtype).unwrap_or(dtype.type_name())
            )));
        }
    }
    // XLA's input buffers, read in place (small or unaligned ones are
    // copied by `from_foreign`).
    let mut lent: SmallVec<[Tensor; 4]> = SmallVec::with_capacity(inputs.len());
    for buffer in &inputs {
        // SAFETY: XLA's input buffer holds `bytes` bytes (its dtype times
        // its dims), readable and unchanged for the call; the tensor does
        // not outlive the call (checked below); XLA's bools are 0 or 1.
        let host =
            unsafe { HostBuffer::from_foreign(buffer.data, buffer.bytes, false, Box::new(())) }
                .map_err(KernelError::from)?;
        let shape = TensorShape::new(buffer.dims.clone()).map_err(KernelError::from)?;
        lent.push(Tensor::from_host_buffer(buffer.dtype, shape, host).map_err(KernelError::from)?);
    }
    let mut slots: SmallVec<[Option<Tensor>; 4]> = lent.iter().cloned().map(Some).collect();
    let mut outputs: SmallVec<[Option<Tensor>; 2]> = SmallVec::new();
    outputs.resize_with(results.len(), || None);
    let mut forwarding = XlaResults {
        inputs: &lent,
        results: &results,
        handed: SmallVec::from_elem(false, results.len()),
    };
    {
        let mut context = OpKernelContext::new(info, &**kernel.device(), &mut slots, &mut outputs)
            .with_foreign_forwarding(&mut forwarding);
        kernel.kernel().compute(&mut context)?;
    }
    drop(slots);
    for (index, (output, result)) in outputs.iter_mut().zip(&results).enumerate() {
        let tensor = output.take().ok_or(KernelError::MissingOutput { index })?;
        hand_over(index, &tensor, result)?;
    }
    drop(outputs);
    if let Some(index) = lent.iter().position(|t| {
        t.host_buffer()
            .is_some_and(|b| b.is_foreign() && b.ref_count() > 1)
    }) {
        return Err(CallError::Internal(format!(
            "the kernel kept a reference to input {index} after its call; XLA's buffers are lent for the call only"
        )));
    }
    Ok(())
}

/// Puts output `index` in XLA's result buffer: nothing to do when the
/// kernel wrote there, one copy otherwise.
fn hand_over(index: usize, tensor: &Tensor, result: &XlaBuffer) -> Result<(), CallError> {
    if tensor.dims() != result.dims.as_slice() {
        return Err(CallError::Internal(format!(
            "the kernel made output {index} of shape {}, but the op's shape function gave {:?} (the shape XLA allocated)",
            tensor.shape(),
            result.dims.as_slice()
        )));
    }
    let bytes = tensor.as_bytes().map_err(KernelError::from)?;
    if bytes.is_empty() || bytes.as_ptr() == result.data.cast_const() {
        return Ok(());
    }
    if bytes.len() != result.bytes {
        return Err(CallError::Internal(format!(
            "output {index} has {} bytes; XLA's buffer {}",
            bytes.len(),
            result.bytes
        )));
    }
    OUTPUT_COPIES.fetch_add(1, Ordering::Relaxed);
    // SAFETY: XLA's result buffer holds `result.bytes` writable bytes for
    // the call, written by nobody else; the kernel's bytes are another
    // allocation (its address differs and XLA's inputs never alias results).
    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), result.data, bytes.len()) };
    Ok(())
}

/// The context's hook into XLA's memory: outputs the kernel allocates are
/// XLA's result buffers; inputs are never handed over for writing (XLA
/// owns them, and they may be read again).
struct XlaResults<'a> {
    inputs: &'a [Tensor],
    results: &'a [XlaBuffer],
    /// Results already given to the kernel.
    handed: SmallVec<[bool; 2]>,
}

impl std::fmt::Debug for XlaResults<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("XlaResults")
            .field("handed", &self.handed)
            .finish()
    }
}

impl ForeignForwarding for XlaResults<'_> {
    fn forward(
        &mut self,
        input: usize,
        _output: usize,
        _shape: &TensorShape,
    ) -> Result<Forwarded, KernelError> {
        let again = self
            .inputs
            .get(input)
            .cloned()
            .ok_or_else(|| KernelError::internal(format!("no input {input} to keep")))?;
        Ok(Forwarded::Kept(again))
    }

    fn allocated_output(
        &mut self,
        index: usize,
        dtype: DataType,
        shape: &TensorShape,
        zeroed: bool,
    ) -> Result<Option<Tensor>, KernelError> {
        let Some(result) = self.results.get(index) else {
            return Ok(None);
        };
        let fits = result.dtype == dtype
            && result.dims.as_slice() == shape.dims()
            && result.bytes > INLINE_CAPACITY
            && (result.data as usize).is_multiple_of(HOST_ALIGNMENT);
        if !fits || self.handed[index] {
            // opreg allocates it; `hand_over` copies it into XLA's buffer.
            return Ok(None);
        }
        if zeroed || dtype == DataType::DtBool {
            // SAFETY: XLA's result buffer holds `bytes` writable bytes.
            unsafe { std::ptr::write_bytes(result.data, 0, result.bytes) };
        }
        // SAFETY: XLA's result buffer: `bytes` bytes, aligned and large
        // enough to be held without a copy, written only through this
        // tensor during the call (the tensor is handed back, checked, by
        // `hand_over`). Its values are unspecified unless zeroed above,
        // which `allocate_output_to_overwrite` allows; bools are zeroed.
        let host =
            unsafe { HostBuffer::from_foreign(result.data, result.bytes, true, Box::new(())) }?;
        self.handed[index] = true;
        Ok(Some(Tensor::from_host_buffer(dtype, shape.clone(), host)?))
    }
}

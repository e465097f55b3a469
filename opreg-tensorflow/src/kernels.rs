//! opreg kernels run by TensorFlow: built once per node from its NodeDef
//! with opreg's own construction context, computed on TensorFlow's tensors
//! without copying them, every error (and panic) turned into a TensorFlow
//! status.

use std::ffi::{c_int, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};

use prost::Message;
use registry_core::device::cpu_device;
use registry_core::kernel::{
    ForeignForwarding, Forwarded, KernelError, NodeInfo, OpKernel, OpKernelConstruction,
    OpKernelContext,
};
use registry_core::node_def::in_out_types_for_node;
use registry_core::proto::{DataType, DataTypeExt, NodeDef};
use registry_core::tensor::{Tensor, TensorShape};
use smallvec::SmallVec;

use crate::api::{TF_OpKernelConstruction, TF_OpKernelContext, TF_Tensor, TfApi};
use crate::load::{LoadedKernel, loaded};
use crate::status::{Status, kernel_error_code};
use crate::tensors::{from_tf, tf_dims, to_tf};

/// An opreg kernel built for one TensorFlow node.
struct BridgedKernel {
    api: &'static TfApi,
    kernel: Box<dyn OpKernel>,
    info: NodeInfo,
}

/// Builds the kernel of create slot `slot` for the node TensorFlow is
/// constructing; on failure, reports it to TensorFlow and returns null.
///
/// # Safety
/// `ctx` must be TensorFlow's live construction context.
pub(crate) unsafe fn create(slot: usize, ctx: *mut TF_OpKernelConstruction) -> *mut c_void {
    let Some((api, kernel)) = loaded().and_then(|l| Some((l.api, l.kernels.get(slot)?))) else {
        return std::ptr::null_mut();
    };
    let built = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: `ctx` is live (the caller's promise).
        unsafe { build(api, kernel, ctx) }
    }))
    .unwrap_or_else(|panic| Err(KernelError::from_panic(&*panic)));
    match built {
        Ok(kernel) => Box::into_raw(Box::new(kernel)).cast(),
        Err(e) => {
            let status = Status::error(api, kernel_error_code(&e), &e.to_string());
            // SAFETY: `ctx` is live; TF copies the status.
            unsafe { (api.TF_OpKernelConstruction_Failure)(ctx, status.raw()) };
            std::ptr::null_mut()
        }
    }
}

/// Reads the node's NodeDef from TensorFlow and builds the kernel.
///
/// # Safety
/// `ctx` must be TensorFlow's live construction context.
unsafe fn build(
    api: &'static TfApi,
    kernel: &LoadedKernel,
    ctx: *mut TF_OpKernelConstruction,
) -> Result<BridgedKernel, KernelError> {
    let status = Status::new(api);
    // SAFETY: `ctx` and `status` are live.
    let buffer = unsafe { (api.TF_OpKernelConstruction_GetNodeDef)(ctx, status.raw()) };
    status
        .check()
        .map_err(|(_, message)| KernelError::internal(format!("reading the NodeDef: {message}")))?;
    if buffer.is_null() {
        return Err(KernelError::internal("TensorFlow gave no NodeDef"));
    }
    // SAFETY: a TF_Buffer from TensorFlow holds `length` bytes at `data`
    // until it is deleted, below.
    let node = unsafe {
        let bytes = std::slice::from_raw_parts((*buffer).data.cast::<u8>(), (*buffer).length);
        let node = NodeDef::decode(bytes);
        (api.TF_DeleteBuffer)(buffer);
        node
    }
    .map_err(|e| KernelError::internal(format!("TensorFlow's NodeDef does not decode: {e}")))?;
    let op_def = &kernel.op_def;
    let (input_types, output_types) = in_out_types_for_node(&node, op_def)
        .map_err(|e| KernelError::invalid_argument(e.to_string()))?;
    let device = cpu_device();
    let construction =
        OpKernelConstruction::new(&node, op_def, &**device, &input_types, &output_types);
    let built = (kernel.registration.factory)(&construction)?;
    Ok(BridgedKernel {
        api,
        kernel: built,
        info: NodeInfo::new(node.name, node.op, "CPU", input_types, output_types),
    })
}

/// TensorFlow's compute function of every bridged kernel.
///
/// # Safety
/// `kernel` must come from [`create`] and `ctx` be TensorFlow's live
/// kernel context.
pub(crate) unsafe extern "C" fn compute(kernel: *mut c_void, ctx: *mut TF_OpKernelContext) {
    // SAFETY: `kernel` is a `BridgedKernel` made by `create` and not yet
    // deleted (TensorFlow's promise).
    let kernel = unsafe { &*kernel.cast::<BridgedKernel>() };
    let api = kernel.api;
    let result = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: `ctx` is live for the call.
        unsafe { run(kernel, ctx) }
    }))
    .unwrap_or_else(|panic| Err(KernelError::from_panic(&*panic)));
    if let Err(e) = result {
        let status = Status::error(api, kernel_error_code(&e), &e.to_string());
        // SAFETY: `ctx` is live; TF copies the status.
        unsafe { (api.TF_OpKernelContext_Failure)(ctx, status.raw()) };
    }
}

/// TensorFlow's delete function of every bridged kernel.
///
/// # Safety
/// `kernel` must come from [`create`], deleted once.
pub(crate) unsafe extern "C" fn delete(kernel: *mut c_void) {
    if !kernel.is_null() {
        // SAFETY: made by `Box::into_raw` in `create`, deleted once.
        drop(unsafe { Box::from_raw(kernel.cast::<BridgedKernel>()) });
    }
}

/// One compute: TensorFlow's inputs wrapped, the opreg kernel run, its
/// outputs handed to TensorFlow.
///
/// # Safety
/// `ctx` must be TensorFlow's live kernel context.
unsafe fn run(kernel: &BridgedKernel, ctx: *mut TF_OpKernelContext) -> Result<(), KernelError> {
    let api = kernel.api;
    let status = Status::new(api);
    // SAFETY: `ctx` is live.
    let (num_inputs, num_outputs) = unsafe { ((api.TF_NumInputs)(ctx), (api.TF_NumOutputs)(ctx)) };
    let info = &kernel.info;
    if num_inputs as usize != info.input_types().len()
        || num_outputs as usize != info.output_types().len()
    {
        return Err(KernelError::internal(format!(
            "TensorFlow gave {num_inputs} inputs and {num_outputs} outputs; the node has {} and {}",
            info.input_types().len(),
            info.output_types().len()
        )));
    }
    let mut inputs = SmallVec::<[Option<Tensor>; 4]>::new();
    for index in 0..num_inputs {
        // SAFETY: `ctx` is live and `index` below its input count.
        let tensor = unsafe { get_input(api, ctx, index, &status) }?;
        let expected = info.input_types()[index as usize];
        if tensor.dtype() != expected {
            return Err(KernelError::InputDtype {
                index: index as usize,
                expected,
                actual: tensor.dtype(),
            });
        }
        inputs.push(Some(tensor));
    }
    let mut outputs = SmallVec::<[Option<Tensor>; 2]>::new();
    outputs.resize_with(num_outputs as usize, || None);
    let mut forwarding = TfForwarding {
        api,
        ctx,
        held: SmallVec::new(),
    };
    {
        let device = cpu_device();
        let mut context = OpKernelContext::new(info, &**device, &mut inputs, &mut outputs)
            .with_foreign_forwarding(&mut forwarding);
        kernel.kernel.compute(&mut context)?;
    }
    // TensorFlow's inputs are released before its outputs are set.
    drop(inputs);
    for (index, slot) in outputs.iter_mut().enumerate() {
        let tensor = slot.take().ok_or(KernelError::MissingOutput { index })?;
        forwarding.hand_over(index, &tensor, &status)?;
    }
    Ok(())
}

/// Input `index` of the call, wrapped.
///
/// # Safety
/// `ctx` must be live and `index` below its input count.
unsafe fn get_input(
    api: &'static TfApi,
    ctx: *mut TF_OpKernelContext,
    index: c_int,
    status: &Status<'_>,
) -> Result<Tensor, KernelError> {
    let mut raw = std::ptr::null_mut();
    // SAFETY: the caller's promise; `raw` receives a new handle.
    unsafe { (api.TF_GetInput)(ctx, index, &mut raw, status.raw()) };
    status.check().map_err(|(_, message)| {
        KernelError::internal(format!("reading input {index}: {message}"))
    })?;
    // SAFETY: TF_GetInput succeeded: `raw` is a live handle we own.
    unsafe { from_tf(api, raw, false) }
}

/// Forwarding of TensorFlow's inputs: TensorFlow decides, with its own
/// reference counts (`TF_ForwardInputOrAllocateOutput`). TensorFlow sets
/// the output either way (the input's buffer, or a new one when it refuses)
/// and an output cannot be set twice, so the outputs it holds are
/// remembered: a refused forward's buffer is what the kernel's
/// `allocate_output` then gets.
struct TfForwarding {
    api: &'static TfApi,
    ctx: *mut TF_OpKernelContext,
    held: SmallVec<[HeldOutput; 1]>,
}

/// An output TensorFlow already holds.
struct HeldOutput {
    index: usize,
    /// Our handle of it, until it is wrapped for the kernel.
    unclaimed: Option<*mut TF_Tensor>,
    /// Its data's address.
    address: usize,
    shape: TensorShape,
}

impl std::fmt::Debug for TfForwarding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let held: Vec<usize> = self.held.iter().map(|h| h.index).collect();
        f.debug_struct("TfForwarding").field("held", &held).finish()
    }
}

impl Drop for TfForwarding {
    fn drop(&mut self) {
        for raw in self.held.iter_mut().filter_map(|h| h.unclaimed.take()) {
            // SAFETY: an unclaimed handle we own, deleted once.
            unsafe { (self.api.TF_DeleteTensor)(raw) };
        }
    }
}

impl TfForwarding {
    /// Gives TensorFlow output `index`, which it may already hold: nothing
    /// to do when the kernel wrote TensorFlow's own buffer, a copy into it
    /// when the kernel made another of the same shape, and a new
    /// `TF_Tensor` over the kernel's buffer otherwise.
    fn hand_over(
        &self,
        index: usize,
        tensor: &Tensor,
        status: &Status<'_>,
    ) -> Result<(), KernelError> {
        let api = self.api;
        if let Some(held) = self.held.iter().find(|h| h.index == index) {
            let bytes = tensor.as_bytes()?;
            if bytes.is_empty()
                || (bytes.as_ptr() as usize == held.address && *tensor.shape() == held.shape)
            {
                return Ok(());
            }
            if *tensor.shape() != held.shape {
                return Err(KernelError::internal(format!(
                    "output {index} has shape {}, but TensorFlow already holds it with shape {} (from a forwarding request)",
                    tensor.shape(),
                    held.shape
                )));
            }
            // SAFETY: TensorFlow holds the output, `bytes.len()` bytes (same
            // dtype and shape) at `address`, written by nobody else during
            // this call; the kernel's buffer is another allocation.
            unsafe {
                std::ptr::copy_nonoverlapping(bytes.as_ptr(), held.address as *mut u8, bytes.len());
            }
            return Ok(());
        }
        let raw = to_tf(api, tensor)?;
        // SAFETY: `ctx` is live, `index` below its output count, and `raw` a
        // live handle, deleted after TensorFlow took its reference.
        unsafe {
            (api.TF_SetOutput)(self.ctx, index as c_int, raw, status.raw());
            (api.TF_DeleteTensor)(raw);
        }
        status.check().map_err(|(_, message)| {
            KernelError::internal(format!("setting output {index}: {message}"))
        })
    }
}

impl ForeignForwarding for TfForwarding {
    fn forward(
        &mut self,
        input: usize,
        output: usize,
        shape: &TensorShape,
    ) -> Result<Forwarded, KernelError> {
        let api = self.api;
        let status = Status::new(api);
        if self.held.iter().any(|h| h.index == output) {
            // TensorFlow holds this output already: it cannot take another.
            // SAFETY: `ctx` is live and `input` one of its inputs.
            let again = unsafe { get_input(api, self.ctx, input as c_int, &status) }?;
            return Ok(Forwarded::Kept(again));
        }
        let dims = tf_dims(shape.dims());
        let candidate = input as c_int;
        let mut forwarded: c_int = -1;
        // SAFETY: `ctx` is live for the compute call this forwarding
        // belongs to; the indices are the node's; `dims` outlives the call.
        let raw = unsafe {
            (api.TF_ForwardInputOrAllocateOutput)(
                self.ctx,
                &candidate,
                1,
                output as c_int,
                dims.as_ptr(),
                dims.len() as c_int,
                &mut forwarded,
                status.raw(),
            )
        };
        status.check().map_err(|(_, message)| {
            KernelError::internal(format!("forwarding input {input}: {message}"))
        })?;
        if raw.is_null() {
            return Err(KernelError::internal(format!(
                "TensorFlow gave no output {output}"
            )));
        }
        // SAFETY: `raw` is a live handle we own.
        let address = unsafe { (api.TF_TensorData)(raw) } as usize;
        let held = HeldOutput {
            index: output,
            unclaimed: None,
            address,
            shape: shape.clone(),
        };
        if forwarded == candidate {
            // A small buffer is copied (its bytes go back to TensorFlow's
            // when the call ends, `hand_over`).
            // SAFETY: a live output handle we own, over the input's buffer,
            // which TensorFlow hands over for writing.
            let tensor = unsafe { from_tf(api, raw, true) }?;
            self.held.push(held);
            return Ok(Forwarded::Output(tensor));
        }
        self.held.push(HeldOutput {
            unclaimed: Some(raw),
            ..held
        });
        // SAFETY: `ctx` is live and `input` one of its inputs.
        let again = unsafe { get_input(api, self.ctx, candidate, &status) }?;
        Ok(Forwarded::Kept(again))
    }

    fn allocated_output(
        &mut self,
        index: usize,
        dtype: DataType,
        shape: &TensorShape,
        zeroed: bool,
    ) -> Result<Option<Tensor>, KernelError> {
        let api = self.api;
        let raw = match self.held.iter_mut().find(|h| h.index == index) {
            // After a refused forward: TensorFlow's buffer, if it fits.
            Some(held) if held.shape == *shape => match held.unclaimed.take() {
                Some(raw) => raw,
                None => return Ok(None),
            },
            Some(_) => return Ok(None),
            // A kernel that will zero-fill gets opreg's memory (fresh
            // mappings are zeros already); one that overwrites everything
            // gets TensorFlow's allocator's, reused and not zero-filled.
            None if zeroed => return Ok(None),
            None => {
                let size = dtype.element_size().unwrap_or(0) * shape.num_elements();
                let dims = tf_dims(shape.dims());
                let status = Status::new(api);
                // SAFETY: `ctx` is live for this compute call, `index` one of
                // its outputs, `dims` outlives the call.
                let raw = unsafe {
                    (api.TF_AllocateOutput)(
                        self.ctx,
                        index as c_int,
                        dtype as c_int,
                        dims.as_ptr(),
                        dims.len() as c_int,
                        size,
                        status.raw(),
                    )
                };
                status.check().map_err(|(_, message)| {
                    KernelError::internal(format!("allocating output {index}: {message}"))
                })?;
                if raw.is_null() {
                    return Err(KernelError::internal(format!(
                        "TensorFlow gave no output {index}"
                    )));
                }
                self.held.push(HeldOutput {
                    index,
                    unclaimed: None,
                    // SAFETY: `raw` is a live handle we own.
                    address: unsafe { (api.TF_TensorData)(raw) } as usize,
                    shape: shape.clone(),
                });
                raw
            }
        };
        // SAFETY: an output handle we own; TensorFlow allocated its buffer
        // for this output alone, so the kernel may write it.
        let mut tensor = unsafe { from_tf(api, raw, true) }?;
        if tensor.dtype() != dtype {
            return Err(KernelError::internal(format!(
                "TensorFlow allocated output {index} as {}, the node declares {}",
                tensor.dtype().type_name(),
                dtype.type_name()
            )));
        }
        // Bools must be 0 or 1 whatever the kernel means to write.
        if zeroed || dtype == DataType::DtBool {
            zero_fill(&mut tensor)?;
        }
        Ok(Some(tensor))
    }
}

/// Zeroes a tensor TensorFlow allocated (its bytes are uninitialised;
/// opreg's host outputs start at zero).
fn zero_fill(tensor: &mut Tensor) -> Result<(), KernelError> {
    if tensor.dtype() == DataType::DtBool {
        tensor.as_mut_slice::<bool>()?.fill(false);
    } else {
        tensor.as_mut_bytes()?.fill(0);
    }
    Ok(())
}

//! TensorFlow tensors as opreg tensors and back, without copying: an input
//! is a [foreign](HostBuffer::from_foreign) buffer over TensorFlow's memory
//! (holding TensorFlow's reference until opreg drops it), and an output is
//! a `TF_Tensor` over opreg's buffer (holding opreg's reference until
//! TensorFlow drops it).

use std::ffi::{c_int, c_void};

use registry_core::kernel::KernelError;
use registry_core::proto::{DataType, DataTypeExt};
use registry_core::tensor::{HostBuffer, Tensor, TensorShape, element_size};
use smallvec::SmallVec;

use crate::api::{TF_Tensor, TfApi};

/// Holds one `TF_Tensor` handle (a reference to its buffer), deleted when
/// the opreg buffer over it is dropped.
struct TfTensorHandle {
    api: &'static TfApi,
    tensor: *mut TF_Tensor,
}

// SAFETY: a TF_Tensor handle only holds a reference-counted buffer, which
// TensorFlow lets any thread release (its reference counts are atomic).
unsafe impl Send for TfTensorHandle {}
// SAFETY: shared access never uses the handle; only `Drop` does.
unsafe impl Sync for TfTensorHandle {}

impl Drop for TfTensorHandle {
    fn drop(&mut self) {
        // SAFETY: the handle came from TensorFlow and is deleted once, here.
        unsafe { (self.api.TF_DeleteTensor)(self.tensor) }
    }
}

/// The opreg tensor over TensorFlow's `tensor`, which it takes over (the
/// handle is deleted when the tensor's buffer is dropped). `writable` when
/// TensorFlow handed the buffer over for in-place writes (a forwarded
/// input).
///
/// # Safety
/// `tensor` must be a live `TF_Tensor` handle owned by the caller.
pub unsafe fn from_tf(
    api: &'static TfApi,
    tensor: *mut TF_Tensor,
    writable: bool,
) -> Result<Tensor, KernelError> {
    let handle = TfTensorHandle { api, tensor };
    // SAFETY: `tensor` is live (the caller's promise) for all these reads.
    let (raw_dtype, rank, data, len) = unsafe {
        (
            (api.TF_TensorType)(tensor),
            (api.TF_NumDims)(tensor),
            (api.TF_TensorData)(tensor),
            (api.TF_TensorByteSize)(tensor),
        )
    };
    let dtype = DataType::try_from(raw_dtype).map_err(|_| {
        KernelError::unimplemented(format!("TensorFlow dtype {raw_dtype} is unknown to opreg"))
    })?;
    if element_size(dtype).is_none() || dtype == DataType::DtString {
        return Err(KernelError::unimplemented(format!(
            "{} tensors cannot be passed between TensorFlow and opreg kernels (only types of fixed-size elements)",
            dtype.type_name()
        )));
    }
    let mut dims = SmallVec::<[usize; 4]>::new();
    for d in 0..rank.max(0) {
        // SAFETY: `d` is below the tensor's rank.
        let dim = unsafe { (api.TF_Dim)(tensor, d) };
        dims.push(usize::try_from(dim).map_err(|_| {
            KernelError::invalid_argument(format!(
                "TensorFlow tensor has a negative dimension {dim}"
            ))
        })?);
    }
    let shape = TensorShape::new(dims)?;
    // SAFETY: TensorFlow's buffer holds `len` bytes for as long as the
    // handle (moved into the buffer as its owner) lives; TensorFlow writes
    // no tensor's buffer after its producer ran, and hands one over for
    // writing (`writable`) only when nothing else references it. Its bools
    // are C++ bools (0 or 1).
    let buffer = unsafe { HostBuffer::from_foreign(data.cast(), len, writable, Box::new(handle)) }?;
    Ok(Tensor::from_host_buffer(dtype, shape, buffer)?)
}

/// A `TF_Tensor` over `tensor`'s buffer (no copy, unless TensorFlow wants
/// a more aligned one); the caller owns the returned handle.
pub fn to_tf(api: &'static TfApi, tensor: &Tensor) -> Result<*mut TF_Tensor, KernelError> {
    let buffer = tensor.host_buffer().ok_or_else(|| {
        KernelError::unimplemented(format!(
            "a {} tensor in {} memory cannot be handed to TensorFlow (only host tensors of fixed-size elements)",
            tensor.dtype().type_name(),
            tensor.device_type()
        ))
    })?;
    let dims = tf_dims(tensor.dims());
    let len = buffer.len();
    let boxed = Box::new(buffer.clone());
    let data = boxed.as_ptr().cast_mut().cast::<c_void>();
    let owner = Box::into_raw(boxed).cast::<c_void>();
    // SAFETY: `data` points at `len` bytes that stay valid until the
    // deallocator drops `owner` (the buffer handle that keeps them alive);
    // `len` is the element count times the element size, as TF_NewTensor
    // checks, so it does not fail. TensorFlow never writes to memory it
    // does not own (such buffers are never forwarded).
    let raw = unsafe {
        (api.TF_NewTensor)(
            tensor.dtype() as c_int,
            dims.as_ptr(),
            dims.len() as c_int,
            data,
            len,
            release_buffer,
            owner,
        )
    };
    if raw.is_null() {
        // Whether TensorFlow called the deallocator is unknown: the buffer
        // handle is leaked rather than risk freeing it twice.
        return Err(KernelError::internal(format!(
            "TensorFlow refused a {} tensor of shape {} ({len} bytes)",
            tensor.dtype().type_name(),
            tensor.shape()
        )));
    }
    Ok(raw)
}

/// A shape's dimensions as TensorFlow's C API takes them.
pub fn tf_dims(dims: &[usize]) -> SmallVec<[i64; 4]> {
    dims.iter().map(|&d| d as i64).collect()
}

/// The deallocator of [`to_tf`]'s tensors: drops the buffer handle.
unsafe extern "C" fn release_buffer(_data: *mut c_void, _len: usize, owner: *mut c_void) {
    // SAFETY: `owner` is the `Box<HostBuffer>` leaked by `to_tf`, released
    // once by TensorFlow.
    drop(unsafe { Box::from_raw(owner.cast::<HostBuffer>()) });
}

//! Host-side plumbing the element-wise kernels share: device addresses of
//! inputs and outputs, new or forwarded (in-place) outputs, empty outputs
//! and launch sizes.
//!
//! Kernels take raw device addresses (`u64`) rather than `CudaSlice`
//! arguments so that one buffer can be passed as both an input and the
//! output (in-place updates of a forwarded input). All GPU work is queued
//! on the device's one stream and the device runs without cudarc's event
//! tracking, so stream order alone orders a kernel after the writes of its
//! inputs, and a buffer dropped after a launch is freed (stream-ordered)
//! only after the kernel ran.

use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, DevicePtrMut, LaunchConfig};
use registry_core::kernel::{KernelError, OpKernelContext};
use registry_core::proto::{DataType, DataTypeExt};
use registry_core::tensor::{Tensor, TensorShape};

use super::source::gpu_element_size;
use opreg_cuda::{GpuDevice, GpuMemory, gpu_bytes, grid_for};

/// The device address of `bytes`.
pub(crate) fn address(bytes: &CudaSlice<u8>, stream: &CudaStream) -> u64 {
    // The returned guard records a read event only under event tracking,
    // which the device disables (see the module docs).
    let (ptr, _record) = bytes.device_ptr(stream);
    ptr
}

/// The device address of `tensor`, which must be input `index` of a GPU
/// kernel of dtype `dtype`.
pub(crate) fn input_address(
    dev: &GpuDevice,
    tensor: &Tensor,
    index: usize,
    dtype: DataType,
) -> Result<u64, KernelError> {
    check_dtype(tensor, index, dtype)?;
    Ok(address(gpu_bytes(tensor, index)?, dev.stream()))
}

/// Errors unless input `index` has dtype `dtype` (the executor checks the
/// node's types; this guards the kernel's own assumptions).
pub(crate) fn check_dtype(
    tensor: &Tensor,
    index: usize,
    dtype: DataType,
) -> Result<(), KernelError> {
    if tensor.dtype() != dtype {
        return Err(KernelError::internal(format!(
            "input {index} is {}, but this GPU kernel was built for {}",
            tensor.dtype().type_name(),
            dtype.type_name()
        )));
    }
    Ok(())
}

/// The device address of output `index`, which an input was just forwarded
/// to (so its buffer is unique and may be written).
pub(crate) fn forwarded_address(
    ctx: &mut OpKernelContext<'_>,
    index: usize,
) -> Result<u64, KernelError> {
    let tensor = ctx.output_mut(index)?;
    let memory = tensor
        .device_buffer_mut()
        .and_then(|b| b.downcast_mut::<GpuMemory>())
        .ok_or_else(|| {
            KernelError::internal(format!(
                "output {index} was forwarded from an input that is not unique GPU memory"
            ))
        })?;
    let stream = memory.stream().clone();
    let (ptr, _record) = memory.bytes_mut().device_ptr_mut(&stream);
    Ok(ptr)
}

/// A new, uninitialised output buffer for `n` elements of `dtype`, and its
/// device address.
///
/// # Safety
/// The caller must queue a kernel that writes all `n` elements before the
/// buffer becomes readable (before it is wrapped in a tensor that anything
/// else can read; queueing on the device's stream is enough, as every read
/// is queued after it).
pub(crate) unsafe fn new_output(
    dev: &GpuDevice,
    dtype: DataType,
    n: usize,
) -> Result<(CudaSlice<u8>, u64), KernelError> {
    let size = gpu_element_size(dtype).ok_or_else(|| {
        KernelError::internal(format!("no GPU element size for {}", dtype.type_name()))
    })?;
    let bytes = n.checked_mul(size).ok_or_else(|| {
        KernelError::resource_exhausted(format!(
            "{n} elements of {} overflow the address space",
            dtype.type_name()
        ))
    })?;
    // SAFETY: the caller promises to write every element before any read.
    let mut out = unsafe { dev.alloc_uninit(bytes)? };
    let ptr = {
        let (ptr, _record) = out.device_ptr_mut(dev.stream());
        ptr
    };
    Ok((out, ptr))
}

/// An output with no elements of `dtype` and `shape`: an empty input of
/// that dtype reshaped when there is one (no allocation), else an empty
/// buffer.
pub(crate) fn empty_output(
    dev: &GpuDevice,
    ctx: &OpKernelContext<'_>,
    dtype: DataType,
    shape: TensorShape,
) -> Result<Tensor, KernelError> {
    for i in 0..ctx.num_inputs() {
        if let Ok(t) = ctx.input(i)
            && t.dtype() == dtype
            && t.num_elements() == 0
            && !t.is_on_host()
        {
            return Ok(t.reshape(shape)?);
        }
    }
    dev.tensor(dtype, shape, empty_buffer(dev)?)
}

/// A device buffer of length 0. `cuMemAlloc` refuses zero-byte requests
/// (`CUDA_ERROR_INVALID_VALUE`) and the stream-ordered allocator is not
/// documented to accept them, so one byte is allocated and owned by a slice
/// of length 0, which frees it when dropped.
fn empty_buffer(dev: &GpuDevice) -> Result<CudaSlice<u8>, KernelError> {
    let ptr = dev.alloc_zeroed(1)?.leak();
    // SAFETY: `ptr` is a live allocation from the device's stream that
    // nothing else owns after `leak`; the new slice owns it alone and frees
    // it (stream-ordered) on drop, and with length 0 nothing is ever read or
    // written through it.
    Ok(unsafe { dev.stream().upgrade_device_ptr(ptr, 0) })
}

/// The launch for `n` elements processed `vector` at a time per thread on
/// the flat paths (the kernels grid-stride, so any grid is correct).
pub(crate) fn flat_launch(n: usize, vector: usize) -> LaunchConfig {
    grid_for(n.div_ceil(vector.max(1)))
}

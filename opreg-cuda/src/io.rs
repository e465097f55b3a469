//! A GPU kernel's view of its contexts: the [`GpuDevice`] it was given
//! ([`GpuContext::gpu`]), and the device addresses of its inputs and
//! outputs ([`GpuTensors`]), with the checks every kernel needs (the tensor
//! is in GPU memory, has the expected dtype, and an output is not shared).
//!
//! A kernel allocates its outputs with `OpKernelContext::allocate_output`
//! (or forwards an input with `forward_input_or_allocate_output`), which
//! allocate in the GPU's memory; it never allocates by hand.

use cudarc::driver::CudaSlice;
use registry_core::device::Device;
use registry_core::kernel::{KernelError, OpKernelConstruction, OpKernelContext};
use registry_core::proto::{DataType, DataTypeExt};
use registry_core::tensor::Tensor;

use super::device::{GpuDevice, driver_error};
use super::memory::GpuMemory;

/// A driver or library failure while running `what`, as a kernel error.
pub fn gpu_error(what: &str, e: impl std::fmt::Display) -> KernelError {
    KernelError::Device(driver_error(what, e))
}

/// The GPU of a kernel's contexts.
pub trait GpuContext {
    /// The device the kernel was built for or runs on, as the
    /// [`GpuDevice`] it is; errors when it is another device (a GPU kernel
    /// registered for another device type).
    fn gpu(&self) -> Result<&GpuDevice, KernelError>;
}

fn as_gpu(device: &dyn Device) -> Result<&GpuDevice, KernelError> {
    device.downcast::<GpuDevice>().ok_or_else(|| {
        KernelError::internal(format!(
            "a GPU kernel was given the {} device ({})",
            device.device_type(),
            device.description()
        ))
    })
}

impl GpuContext for OpKernelConstruction<'_> {
    fn gpu(&self) -> Result<&GpuDevice, KernelError> {
        as_gpu(self.device())
    }
}

impl GpuContext for OpKernelContext<'_> {
    fn gpu(&self) -> Result<&GpuDevice, KernelError> {
        as_gpu(self.device())
    }
}

/// `tensor`'s GPU memory: what a kernel reads.
fn gpu_memory(tensor: &Tensor) -> Result<&GpuMemory, KernelError> {
    tensor
        .device_buffer()
        .and_then(|b| b.downcast_ref::<GpuMemory>())
        .ok_or_else(|| {
            KernelError::internal(format!(
                "a GPU kernel read a tensor in {} memory",
                tensor.device_type()
            ))
        })
}

/// `tensor`'s GPU memory for writing: it must be in GPU memory and shared
/// with no other tensor.
fn gpu_memory_mut(tensor: &mut Tensor) -> Result<&mut GpuMemory, KernelError> {
    let place = tensor.device_type();
    tensor
        .device_buffer_mut()
        .and_then(|b| b.downcast_mut::<GpuMemory>())
        .ok_or_else(|| {
            KernelError::internal(format!(
                "a GPU kernel wrote a tensor in {place} memory, or one that is shared"
            ))
        })
}

/// The device address of `tensor`, which must be in GPU memory: what a
/// kernel reads.
pub fn gpu_ptr(tensor: &Tensor) -> Result<u64, KernelError> {
    gpu_memory(tensor).map(GpuMemory::device_ptr)
}

/// The device address of `tensor` for writing: it must be in GPU memory
/// and shared with no other tensor.
pub fn gpu_ptr_mut(tensor: &mut Tensor) -> Result<u64, KernelError> {
    gpu_memory_mut(tensor).map(GpuMemory::device_ptr_mut)
}

/// The device address of `tensor`, input `index` of a kernel built for
/// `dtype`, after checking that it is in GPU memory and of that dtype (the
/// kernel's own assumption; the executor checks the node's dtypes).
pub fn gpu_input_ptr(tensor: &Tensor, index: usize, dtype: DataType) -> Result<u64, KernelError> {
    if tensor.dtype() != dtype {
        return Err(KernelError::internal(format!(
            "input {index} is {}, but this GPU kernel was built for {}",
            tensor.dtype().type_name(),
            dtype.type_name()
        )));
    }
    gpu_ptr(tensor).map_err(|e| KernelError::internal(format!("input {index}: {e}")))
}

/// The device bytes of `tensor` (in GPU memory), for the libraries that
/// take cudarc slices (cuBLAS, cuDNN).
pub fn gpu_slice(tensor: &Tensor) -> Result<&CudaSlice<u8>, KernelError> {
    gpu_memory(tensor).map(GpuMemory::bytes)
}

/// The device bytes of `tensor` for writing: it must be in GPU memory and
/// shared with no other tensor.
pub fn gpu_slice_mut(tensor: &mut Tensor) -> Result<&mut CudaSlice<u8>, KernelError> {
    gpu_memory_mut(tensor).map(GpuMemory::bytes_mut)
}

/// Device addresses of a GPU kernel's inputs and outputs.
pub trait GpuTensors {
    /// Input `index`'s device address, after checking that it is in GPU
    /// memory and of dtype `dtype` (the kernel's own assumption; the
    /// executor checks the node's dtypes).
    fn gpu_input(&self, index: usize, dtype: DataType) -> Result<u64, KernelError>;

    /// Output `index`'s device address, for writing: the output must have
    /// been allocated (or an input forwarded to it) in GPU memory.
    fn gpu_output(&mut self, index: usize) -> Result<u64, KernelError>;

    /// Input `index`'s device address, or `out` when that input was
    /// forwarded to the output (`forwarded`, what
    /// `forward_input_or_allocate_output` returned): the operands of a
    /// kernel that may compute in place.
    fn gpu_operand(
        &self,
        index: usize,
        dtype: DataType,
        forwarded: Option<usize>,
        out: u64,
    ) -> Result<u64, KernelError> {
        if forwarded == Some(index) {
            Ok(out)
        } else {
            self.gpu_input(index, dtype)
        }
    }
}

impl GpuTensors for OpKernelContext<'_> {
    fn gpu_input(&self, index: usize, dtype: DataType) -> Result<u64, KernelError> {
        gpu_input_ptr(self.input(index)?, index, dtype)
    }

    fn gpu_output(&mut self, index: usize) -> Result<u64, KernelError> {
        gpu_ptr_mut(self.output_mut(index)?)
            .map_err(|e| KernelError::internal(format!("output {index}: {e}")))
    }
}

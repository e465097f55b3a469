//! Typed access to a GPU kernel's inputs and outputs, through
//! [`OpKernelContext`], with the device-memory checks every kernel needs.

use cudarc::driver::CudaSlice;
use registry_core::kernel::{KernelError, OpKernelContext};
use registry_core::tensor::Tensor;

use super::memory::GpuMemory;

/// A driver or library failure while running `what`, as a kernel error.
pub fn gpu_error(what: &str, e: impl std::fmt::Display) -> KernelError {
    KernelError::Device(super::device::driver_error(what, e))
}

/// Reading GPU inputs from a kernel context.
pub trait GpuKernelIo {
    /// Input `index`'s device memory; errors when it is not in GPU memory
    /// (the executor moves inputs to the kernel's device, so that means a
    /// host-memory arg was read as a device one).
    fn gpu_input(&self, index: usize) -> Result<(&Tensor, &CudaSlice<u8>), KernelError>;
}

/// Input `index`'s device bytes, or an error naming it.
pub fn gpu_bytes(tensor: &Tensor, index: usize) -> Result<&CudaSlice<u8>, KernelError> {
    tensor
        .device_buffer()
        .and_then(|b| b.downcast_ref::<GpuMemory>())
        .map(GpuMemory::bytes)
        .ok_or_else(|| {
            KernelError::internal(format!(
                "input {index} is in {} memory, but this GPU kernel reads it from GPU memory",
                tensor.device_type()
            ))
        })
}

impl GpuKernelIo for OpKernelContext<'_> {
    fn gpu_input(&self, index: usize) -> Result<(&Tensor, &CudaSlice<u8>), KernelError> {
        let tensor = self.input(index)?;
        Ok((tensor, gpu_bytes(tensor, index)?))
    }
}

//! [`GpuMemory`]: a tensor's elements in GPU memory, allocated on the
//! device's stream from the driver's stream-ordered pool.

use std::any::Any;
use std::sync::Arc;

use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, DevicePtrMut};
use registry_core::device::{DEVICE_GPU, DeviceError, DeviceMemory};

/// Bytes in GPU memory, owned by one tensor (or shared by several through
/// its [`DeviceBuffer`](registry_core::device::DeviceBuffer)); freed on the
/// device's stream when the last handle goes.
#[derive(Debug)]
pub struct GpuMemory {
    bytes: CudaSlice<u8>,
    /// The tensor's bytes: `bytes.len()`, except for empty tensors, whose
    /// allocation has one byte (the driver refuses empty allocations).
    len: usize,
    stream: Arc<CudaStream>,
}

impl GpuMemory {
    /// Wraps an allocation made on `stream` whose first `len` bytes hold a
    /// tensor; `None` when the allocation is shorter than `len`.
    pub fn new(bytes: CudaSlice<u8>, len: usize, stream: Arc<CudaStream>) -> Option<Self> {
        (len <= bytes.len()).then_some(Self { bytes, len, stream })
    }

    /// The device bytes (to pass to a kernel as a pointer argument); one
    /// unused byte for an empty tensor.
    pub fn bytes(&self) -> &CudaSlice<u8> {
        &self.bytes
    }

    /// The device bytes, for writing.
    pub fn bytes_mut(&mut self) -> &mut CudaSlice<u8> {
        &mut self.bytes
    }

    /// The stream the memory belongs to.
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// The device address of the first byte, to pass to a kernel that reads
    /// it. All GPU work is queued on the device's one stream and the device
    /// runs without cudarc's event tracking (see `GpuDevice`), so stream
    /// order alone orders a kernel after the writes of its inputs, and the
    /// guard cudarc returns records nothing.
    pub fn device_ptr(&self) -> u64 {
        let (ptr, _record) = self.bytes.device_ptr(&self.stream);
        ptr
    }

    /// The device address of the first byte, to pass to a kernel that
    /// writes it (the memory is borrowed mutably, so no other handle shares
    /// it; see [`device_ptr`](Self::device_ptr)).
    pub fn device_ptr_mut(&mut self) -> u64 {
        let stream = Arc::clone(&self.stream);
        let (ptr, _record) = self.bytes.device_ptr_mut(&stream);
        ptr
    }
}

impl DeviceMemory for GpuMemory {
    fn device_type(&self) -> &'static str {
        DEVICE_GPU
    }

    fn len(&self) -> usize {
        self.len
    }

    fn copy_to_host(&self, dst: &mut [u8]) -> Result<(), DeviceError> {
        if dst.len() != self.len {
            return Err(DeviceError::Transfer {
                device: "GPU".to_owned(),
                reason: format!(
                    "copying {} device bytes into a host buffer of {}",
                    self.len,
                    dst.len()
                ),
            });
        }
        if dst.is_empty() {
            return Ok(());
        }
        let driver = |operation: &str, e: cudarc::driver::DriverError| DeviceError::Driver {
            device: "GPU".to_owned(),
            operation: operation.to_owned(),
            message: e.to_string(),
        };
        self.stream
            .memcpy_dtoh(&self.bytes.slice(..self.len), dst)
            .map_err(|e| driver("copy to host", e))?;
        self.stream
            .synchronize()
            .map_err(|e| driver("synchronize after copy to host", e))
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

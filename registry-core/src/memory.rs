//! Where a tensor's elements live when not on the host: [`DeviceMemory`]
//! (a backend's block of device memory), [`DeviceBuffer`] (the shared
//! handle a [`Tensor`](crate::tensor::Tensor) holds) and [`DeviceError`];
//! and the names of the device types kernels are registered for.
//!
//! Tensors and devices both build on this module; it builds on neither.

use std::any::Any;
use std::sync::Arc;

/// A block of device memory holding one tensor's elements, owned by a
/// backend. The backend downcasts it back to its own type
/// ([`DeviceBuffer::downcast_ref`]) to launch kernels on it.
pub trait DeviceMemory: Send + Sync + std::fmt::Debug + Any {
    /// The device type it lives on (`"GPU"`).
    fn device_type(&self) -> &'static str;

    /// Its length in bytes.
    fn len(&self) -> usize;

    /// True when it holds no bytes.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Copies all of it into `dst` (exactly [`len`](Self::len) bytes),
    /// after the work queued before on its device has finished.
    fn copy_to_host(&self, dst: &mut [u8]) -> Result<(), DeviceError>;

    /// Itself, for downcasting.
    fn as_any(&self) -> &dyn Any;

    /// Itself, mutably, for downcasting.
    fn as_any_mut(&mut self) -> &mut dyn Any;
}

/// A reference-counted handle to [`DeviceMemory`], as a tensor's storage
/// holds it: cloning shares the memory, like
/// [`HostBuffer`](crate::tensor::HostBuffer).
///
/// (A thin `Arc` to a boxed trait object: a tensor's storage stays two words.)
#[derive(Debug, Clone)]
pub struct DeviceBuffer {
    memory: Arc<Box<dyn DeviceMemory>>,
}

// A tensor stays usable after a caught panic (as host tensors are): device
// memory is written only through `downcast_mut`, which needs the one handle,
// so a panic cannot leave a shared buffer half-updated behind a `&`.
impl std::panic::RefUnwindSafe for DeviceBuffer {}
impl std::panic::UnwindSafe for DeviceBuffer {}

impl DeviceBuffer {
    /// Wraps a backend's memory.
    pub fn new(memory: impl DeviceMemory) -> Self {
        Self {
            memory: Arc::new(Box::new(memory)),
        }
    }

    /// The memory.
    pub fn memory(&self) -> &dyn DeviceMemory {
        &**self.memory
    }

    /// The memory as the backend's type `T`, if it is one.
    pub fn downcast_ref<T: DeviceMemory>(&self) -> Option<&T> {
        self.memory.as_any().downcast_ref::<T>()
    }

    /// The memory as `T`, mutably, when this handle is the only one (so a
    /// kernel may write to it in place) and it is a `T`.
    pub fn downcast_mut<T: DeviceMemory>(&mut self) -> Option<&mut T> {
        Arc::get_mut(&mut self.memory)?
            .as_any_mut()
            .downcast_mut::<T>()
    }

    /// The device type it lives on.
    pub fn device_type(&self) -> &'static str {
        self.memory.device_type()
    }

    /// Its length in bytes.
    pub fn len(&self) -> usize {
        self.memory.len()
    }

    /// True when it holds no bytes.
    pub fn is_empty(&self) -> bool {
        self.memory.is_empty()
    }

    /// True when no other handle shares the memory.
    pub fn is_unique(&self) -> bool {
        Arc::strong_count(&self.memory) == 1
    }

    /// True when both handles share the same memory.
    pub fn ptr_eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.memory, &other.memory)
    }

    /// An identity of the memory, equal for the handles that share it.
    pub fn buffer_id(&self) -> usize {
        Arc::as_ptr(&self.memory).cast::<u8>() as usize
    }

    /// The number of handles sharing the memory.
    pub fn ref_count(&self) -> usize {
        Arc::strong_count(&self.memory)
    }
}

/// The CPU device type: host memory.
pub const DEVICE_CPU: &str = "CPU";
/// The GPU device type.
pub const DEVICE_GPU: &str = "GPU";

/// Errors from opening a device, moving tensors to and from it, or its
/// driver.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DeviceError {
    /// No linked backend registers this device type.
    #[error(
        "no {device_type} device: no backend for {device_type} is linked into this program{}",
        linked_note(.linked)
    )]
    NotLinked {
        /// The device type asked for.
        device_type: String,
        /// The device types that are linked.
        linked: Vec<String>,
    },
    /// The backend is linked but found no usable device (no driver, no
    /// library, no hardware).
    #[error("no {device_type} device: {reason}")]
    NotFound {
        /// The device type asked for.
        device_type: String,
        /// What the probe found missing.
        reason: String,
    },
    /// A driver or library call failed.
    #[error("{device}: {operation} failed: {message}")]
    Driver {
        /// The device (`"GPU:0"`).
        device: String,
        /// What was being done (`"copy to host"`).
        operation: String,
        /// The driver's message.
        message: String,
    },
    /// A tensor could not be moved: wrong dtype (strings stay on the host),
    /// wrong device, or a size mismatch.
    #[error("{device}: cannot transfer the tensor: {reason}")]
    Transfer {
        /// The device.
        device: String,
        /// Why.
        reason: String,
    },
}

fn linked_note(linked: &[String]) -> String {
    if linked.is_empty() {
        " (none is; opreg-cuda adds GPU)".to_owned()
    } else {
        format!(" (linked: {})", linked.join(", "))
    }
}

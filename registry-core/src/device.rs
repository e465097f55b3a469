//! Devices (TF's `DeviceBase`): the CPU, always there, and others kept
//! pluggable. A backend crate (such as `opreg-cuda`) implements [`Device`]
//! for its device type, keeps tensors in its own memory behind
//! [`DeviceMemory`], and registers an opener with [`DeviceRegistration`].
//! Kernels get the device they run on from their contexts
//! (`OpKernelConstruction::device`, `OpKernelContext::device`), which
//! allocate their outputs in its memory; the executor finds devices by type
//! through [`open_device`] and moves tensors between the host and a device
//! at the edges between nodes placed on different devices.
//!
//! Nothing here depends on a particular device API, so this crate builds
//! and runs everywhere; asking for a device that no linked backend provides,
//! or whose backend finds no hardware, is an error ([`DeviceError`]), never
//! a panic.
//!
//! ```
//! use registry_core::device::{open_device, DeviceError};
//! assert_eq!(open_device("CPU").unwrap().device_type(), "CPU");
//! // No backend registers the device type "TPU" here.
//! let err = open_device("TPU").unwrap_err();
//! assert!(matches!(err, DeviceError::NotLinked { .. }));
//! assert!(err.to_string().starts_with("no TPU device"));
//! ```

use std::any::Any;
use std::sync::{Arc, LazyLock};

use opreg_proto::DataType;

pub use crate::memory::{DEVICE_CPU, DEVICE_GPU, DeviceBuffer, DeviceError, DeviceMemory};
use crate::tensor::{Tensor, TensorShape};

/// One device: allocates tensors in its memory, uploads host tensors into
/// it and waits for its queued work. Downloads go through the tensor's own
/// [`DeviceMemory`] ([`Tensor::to_host`]).
pub trait Device: Send + Sync + std::fmt::Debug + Any {
    /// The device type kernels are registered for (`"CPU"`, `"GPU"`).
    fn device_type(&self) -> &'static str;

    /// A human-readable description (`"GPU:0 (NVIDIA H100 80GB HBM3, compute 9.0)"`).
    fn description(&self) -> String;

    /// A new tensor of `dtype` and `shape` in this device's memory, for a
    /// kernel to write (what `OpKernelContext::allocate_output` returns for
    /// outputs on the device). Its contents are unspecified until written
    /// (zeros on the CPU); reading them is never undefined behaviour, as
    /// [`Tensor::to_host`] reads every dtype's bytes as valid values.
    fn allocate(&self, dtype: DataType, shape: TensorShape) -> Result<Tensor, DeviceError>;

    /// A copy of host tensor `tensor` in this device's memory (same dtype
    /// and shape). The copy may still be in flight when this returns; work
    /// queued on the device afterwards sees it.
    fn upload(&self, tensor: &Tensor) -> Result<Tensor, DeviceError>;

    /// Waits until all work queued on the device has finished.
    fn synchronize(&self) -> Result<(), DeviceError>;

    /// Itself, for a backend's kernels to reach their own device type
    /// (`downcast` on `dyn Device`).
    fn as_any(&self) -> &dyn Any;
}

impl dyn Device {
    /// The device as the backend's type `D`, if it is one.
    ///
    /// ```
    /// use registry_core::device::{HostDevice, cpu_device};
    /// assert_eq!(cpu_device().downcast::<HostDevice>(), Some(&HostDevice::CPU));
    /// ```
    pub fn downcast<D: Device>(&self) -> Option<&D> {
        self.as_any().downcast_ref::<D>()
    }

    /// True for the CPU (host memory).
    pub fn is_cpu(&self) -> bool {
        self.device_type() == DEVICE_CPU
    }
}

/// A device whose memory is the host's: the CPU ([`cpu_device`]), or a
/// device type of one's own whose kernels compute on host memory (a plugin
/// backend with its own threading, a test device). Allocations are
/// zero-filled host tensors; uploads share the host tensor.
///
/// ```
/// use std::sync::Arc;
/// use registry_core::device::{Device, HostDevice, open_device};
///
/// registry_core::register_device!("MyHost", || Ok(Arc::new(HostDevice::new("MyHost"))));
/// let device = open_device("MyHost").unwrap();
/// assert_eq!(device.device_type(), "MyHost");
/// let shape = registry_core::tensor::TensorShape::new([2]).unwrap();
/// let t = device.allocate(registry_core::proto::DataType::DtFloat, shape).unwrap();
/// assert!(t.is_on_host());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HostDevice {
    device_type: &'static str,
}

impl HostDevice {
    /// The CPU.
    pub const CPU: HostDevice = HostDevice {
        device_type: DEVICE_CPU,
    };

    /// A device of type `device_type` on host memory.
    pub const fn new(device_type: &'static str) -> Self {
        Self { device_type }
    }

    fn error(&self, e: impl std::fmt::Display) -> DeviceError {
        DeviceError::Transfer {
            device: format!("{}:0", self.device_type),
            reason: e.to_string(),
        }
    }
}

impl Device for HostDevice {
    fn device_type(&self) -> &'static str {
        self.device_type
    }

    fn description(&self) -> String {
        format!("{}:0 (host memory)", self.device_type)
    }

    fn allocate(&self, dtype: DataType, shape: TensorShape) -> Result<Tensor, DeviceError> {
        Tensor::zeros(dtype, shape).map_err(|e| self.error(e))
    }

    fn upload(&self, tensor: &Tensor) -> Result<Tensor, DeviceError> {
        tensor.to_host().map_err(|e| self.error(e))
    }

    fn synchronize(&self) -> Result<(), DeviceError> {
        Ok(())
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// The CPU device, shared by every CPU kernel.
pub fn cpu_device() -> &'static Arc<dyn Device> {
    static CPU: LazyLock<Arc<dyn Device>> = LazyLock::new(|| Arc::new(HostDevice::CPU));
    &CPU
}

/// How a backend makes its device available (registered with
/// [`register_device!`](crate::register_device)): `open` probes for the
/// hardware and the libraries (returning [`DeviceError::NotFound`] when
/// there is none) and may cache what it opened.
///
/// ```
/// use std::sync::Arc;
/// use registry_core::device::{Device, DeviceError};
///
/// fn open_npu() -> Result<Arc<dyn Device>, DeviceError> {
///     Err(DeviceError::NotFound { device_type: "NPU".into(), reason: "no driver".into() })
/// }
/// registry_core::register_device!("NPU", open_npu);
/// let err = registry_core::device::open_device("NPU").unwrap_err();
/// assert_eq!(err.to_string(), "no NPU device: no driver");
/// ```
#[derive(Debug, Clone, Copy)]
pub struct DeviceRegistration {
    /// The device type (`"GPU"`).
    pub device_type: &'static str,
    /// Opens (or returns the already opened) device.
    pub open: fn() -> Result<Arc<dyn Device>, DeviceError>,
}

inventory::collect!(DeviceRegistration);

/// Registers a device type's opener (a [`DeviceRegistration`]): `open`, a
/// function (or non-capturing closure) returning the device or why there is
/// none, is called by [`open_device`] when the type is asked for.
///
/// ```
/// use std::sync::Arc;
/// use registry_core::device::{HostDevice, open_device};
///
/// registry_core::register_device!("Sandbox", || Ok(Arc::new(HostDevice::new("Sandbox"))));
/// assert_eq!(open_device("sandbox").unwrap().device_type(), "Sandbox");
/// ```
#[macro_export]
macro_rules! register_device {
    ($device_type:expr, $open:expr $(,)?) => {
        $crate::__private::inventory::submit! {
            $crate::device::DeviceRegistration { device_type: $device_type, open: $open }
        }
    };
}

/// The device of type `device_type` (case-insensitive): the CPU, or the
/// device of the first linked backend that registered the type. Errors when
/// no backend registers that type ([`DeviceError::NotLinked`]) or when its
/// backend finds no device ([`DeviceError::NotFound`]).
pub fn open_device(device_type: &str) -> Result<Arc<dyn Device>, DeviceError> {
    if device_type.eq_ignore_ascii_case(DEVICE_CPU) {
        return Ok(Arc::clone(cpu_device()));
    }
    let registration = inventory::iter::<DeviceRegistration>
        .into_iter()
        .find(|r| r.device_type.eq_ignore_ascii_case(device_type))
        .ok_or_else(|| DeviceError::NotLinked {
            device_type: device_type.to_ascii_uppercase(),
            linked: linked_device_types(),
        })?;
    (registration.open)()
}

/// The device types of the linked backends (not necessarily present), the
/// CPU aside.
///
/// ```
/// assert!(!registry_core::device::linked_device_types().contains(&"CPU".to_string()));
/// ```
pub fn linked_device_types() -> Vec<String> {
    let mut types: Vec<String> = inventory::iter::<DeviceRegistration>
        .into_iter()
        .map(|r| r.device_type.to_owned())
        .collect();
    types.sort();
    types.dedup();
    types
}

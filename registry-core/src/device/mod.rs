//! Devices other than the host (TF's `DeviceBase`), kept pluggable: a
//! backend crate (such as `kernels-cuda`) implements [`Device`] for its
//! device type, keeps tensors in its own memory behind [`DeviceMemory`],
//! and registers an opener with [`DeviceRegistration`]. The executor finds
//! devices by type through [`open_device`] and moves tensors between the
//! host and a device at the edges between nodes placed on different
//! devices.
//!
//! Nothing here depends on a particular device API, so this crate builds
//! and runs everywhere; asking for a device that no linked backend provides,
//! or whose backend finds no hardware, is an error ([`DeviceError`]), never
//! a panic.
//!
//! ```
//! use registry_core::device::{open_device, DeviceError};
//! // No backend registers the device type "TPU" here.
//! let err = open_device("TPU").unwrap_err();
//! assert!(matches!(err, DeviceError::NotLinked { .. }));
//! assert!(err.to_string().starts_with("no TPU device"));
//! ```

mod buffer;
mod error;

use std::sync::Arc;

pub use buffer::{DeviceBuffer, DeviceMemory};
pub use error::DeviceError;

use crate::tensor::Tensor;

/// One device of a backend: uploads host tensors into its memory and waits
/// for its queued work. Downloads go through the tensor's own
/// [`DeviceMemory`] ([`Tensor::to_host`]).
pub trait Device: Send + Sync + std::fmt::Debug {
    /// The device type kernels are registered for (`"GPU"`).
    fn device_type(&self) -> &'static str;

    /// A human-readable description (`"GPU:0 (NVIDIA H100 80GB HBM3, compute 9.0)"`).
    fn description(&self) -> String;

    /// A copy of host tensor `tensor` in this device's memory (same dtype
    /// and shape). The copy may still be in flight when this returns; work
    /// queued on the device afterwards sees it.
    fn upload(&self, tensor: &Tensor) -> Result<Tensor, DeviceError>;

    /// Waits until all work queued on the device has finished.
    fn synchronize(&self) -> Result<(), DeviceError>;
}

/// How a backend makes its device available: `open` probes for the
/// hardware and the libraries (returning [`DeviceError::NotFound`] when
/// there is none) and may cache what it opened.
///
/// ```
/// use std::sync::Arc;
/// use registry_core::device::{Device, DeviceError, DeviceRegistration};
///
/// fn open_npu() -> Result<Arc<dyn Device>, DeviceError> {
///     Err(DeviceError::NotFound { device_type: "NPU".into(), reason: "no driver".into() })
/// }
/// registry_core::__private::inventory::submit! {
///     DeviceRegistration { device_type: "NPU", open: open_npu }
/// }
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

/// The device of type `device_type` (case-insensitive), from the first
/// linked backend that registered it. Errors when no backend registers
/// that type ([`DeviceError::NotLinked`]) or when its backend finds no
/// device ([`DeviceError::NotFound`]).
pub fn open_device(device_type: &str) -> Result<Arc<dyn Device>, DeviceError> {
    let registration = inventory::iter::<DeviceRegistration>
        .into_iter()
        .find(|r| r.device_type.eq_ignore_ascii_case(device_type))
        .ok_or_else(|| DeviceError::NotLinked {
            device_type: device_type.to_ascii_uppercase(),
            linked: linked_device_types(),
        })?;
    (registration.open)()
}

/// The device types of the linked backends (not necessarily present).
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

//! [`DeviceError`]: a device that is missing, failed, or was given the wrong
//! tensor.

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
        " (none is; kernels-cuda's `cuda` feature adds GPU)".to_owned()
    } else {
        format!(" (linked: {})", linked.join(", "))
    }
}

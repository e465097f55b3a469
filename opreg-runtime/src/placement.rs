//! Placement: which device type runs a node (its requested device when a
//! kernel exists there, else the first device of the preference list that
//! has one).

/// The device type a NodeDef's `device` field asks for: `"/device:GPU:0"`,
/// `"/job:localhost/replica:0/task:0/device:CPU:0"`, `"/cpu:0"` and `"GPU"`
/// give `GPU`/`CPU`; an empty field gives `None`.
///
/// ```
/// use opreg_runtime::requested_device_type;
/// assert_eq!(requested_device_type("/job:w/replica:0/task:0/device:GPU:1").as_deref(), Some("GPU"));
/// assert_eq!(requested_device_type("/cpu:0").as_deref(), Some("CPU"));
/// assert_eq!(requested_device_type(""), None);
/// ```
pub fn requested_device_type(device: &str) -> Option<String> {
    let device = device.trim();
    if device.is_empty() {
        return None;
    }
    let last = device.rsplit('/').find(|part| !part.is_empty())?;
    let spec = last.strip_prefix("device:").unwrap_or(last);
    let kind = spec.split(':').next()?.trim();
    if kind.is_empty()
        || kind.starts_with("job")
        || kind.starts_with("replica")
        || kind.starts_with("task")
    {
        return None;
    }
    Some(kind.to_ascii_uppercase())
}

/// The device types to try for a node, in order: the requested one (if
/// any), then the preference list, without repeats.
pub(crate) fn candidates(requested: Option<String>, preference: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for device in requested.into_iter().chain(preference.iter().cloned()) {
        if !out.contains(&device) {
            out.push(device);
        }
    }
    out
}

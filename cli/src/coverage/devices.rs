//! Which device types `opreg coverage` shows.

use std::collections::BTreeSet;

use opreg_proto::KernelList;
use registry_core::KernelRegistry;
use registry_core::device::{DEVICE_CPU, DEVICE_GPU};

use super::CoverageError;

/// The device types to show: `requested` matched case-insensitively against
/// CPU, GPU and every device with a kernel (ours or TF's); by default CPU and
/// every device with one of our kernels.
pub fn resolve_devices(
    requested: &[String],
    kernels: &KernelRegistry,
    tf: Option<&KernelList>,
) -> Result<Vec<String>, CoverageError> {
    let ours: BTreeSet<String> = kernels.all().iter().map(|r| r.device.to_owned()).collect();
    let mut out: Vec<String> = Vec::new();
    let mut push = |d: String| {
        if !out.contains(&d) {
            out.push(d);
        }
    };
    if requested.is_empty() {
        push(DEVICE_CPU.to_owned());
        ours.into_iter().for_each(push);
        return Ok(out);
    }
    let mut known: Vec<String> = vec![DEVICE_CPU.to_owned(), DEVICE_GPU.to_owned()];
    let theirs: BTreeSet<String> = tf
        .map(|l| l.kernel.iter().map(|k| k.device_type.clone()).collect())
        .unwrap_or_default();
    for d in ours.into_iter().chain(theirs) {
        if !known.contains(&d) {
            known.push(d);
        }
    }
    for name in requested {
        let found = known
            .iter()
            .find(|k| k.eq_ignore_ascii_case(name.trim()))
            .ok_or_else(|| CoverageError::UnknownDevice {
                device: name.clone(),
                known: known.clone(),
            })?;
        push(found.clone());
    }
    Ok(out)
}

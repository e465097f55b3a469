//! TensorFlow's side: reading its `KernelList`, which of its kernels serve a
//! device and accept a type, and matching them one by one against ours.

use std::collections::HashMap;
use std::path::Path;

use opreg_proto::attr_value::Value;
use opreg_proto::{DataType, DataTypeExt, KernelDef, KernelList, OpDef};
use registry_core::kernel::KernelRegistry;
use registry_core::tensor::is_supported;

use super::CoverageError;
use super::types::allowed_types;

/// TF's kernels for one device, matched one by one against ours (the rules of
/// `tests/tests/tf_kernel_coverage.rs`): a TF kernel is matched when one of
/// our kernels for the device has the same label and accepts every type of
/// TF's constraints. Only kernels registered for exactly that device are
/// counted here (not `DEVICE_DEFAULT` ones).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TfKernelStats {
    /// TF's kernels for the device of ops registered here.
    pub total: usize,
    /// Those one of our kernels accepts.
    pub matched: usize,
    /// Those constrained to a type opreg has no tensors of (skipped).
    pub no_tensor: usize,
    /// Those for types the op itself does not allow (no node can use them).
    pub disallowed: Vec<String>,
    /// Those none of our kernels accepts (gaps), described.
    pub unmatched: Vec<String>,
}

/// The comparison with a TF `KernelList`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TfComparison {
    /// Where TF's kernels came from (the file's name).
    pub source: String,
    /// One entry per [`Coverage::devices`](super::Coverage::devices).
    pub kernels: Vec<TfKernelStats>,
}

/// Reads a binary `KernelList` (as TF's `get_all_registered_kernels()`
/// serializes it) and checks that it looks like one.
pub fn read_kernel_list(path: &Path) -> Result<KernelList, CoverageError> {
    let bytes = std::fs::read(path).map_err(|source| CoverageError::Read {
        path: path.to_owned(),
        source,
    })?;
    parse_kernel_list(&bytes, path)
}

/// Decodes a binary `KernelList`; `path` names it in errors. An empty list,
/// or a kernel without an op or device, is refused: such bytes are not a
/// kernel registry (prost decodes many unrelated inputs without complaint).
pub fn parse_kernel_list(bytes: &[u8], path: &Path) -> Result<KernelList, CoverageError> {
    let list: KernelList =
        prost::Message::decode(bytes).map_err(|source| CoverageError::Decode {
            path: path.to_owned(),
            source,
        })?;
    let not_list = |reason: String| CoverageError::NotKernelList {
        path: path.to_owned(),
        reason,
    };
    if list.kernel.is_empty() {
        return Err(not_list("it holds no kernels".into()));
    }
    if let Some((i, _)) = list
        .kernel
        .iter()
        .enumerate()
        .find(|(_, k)| k.op.is_empty() || k.device_type.is_empty())
    {
        return Err(not_list(format!("kernel #{i} has no op or no device type")));
    }
    Ok(list)
}

/// The types a TF kernel constrains `attr` to, or `None` when unconstrained.
fn tf_constraint(def: &KernelDef, attr: &str) -> Option<Vec<i32>> {
    def.constraint.iter().find(|c| c.name == attr).map(|c| {
        match c.allowed_values.as_ref().and_then(|v| v.value.as_ref()) {
            Some(Value::List(l)) => l.r#type.clone(),
            _ => Vec::new(),
        }
    })
}

/// TensorFlow's device type for kernels of every device (`DEVICE_DEFAULT`).
pub const TF_DEVICE_DEFAULT: &str = "DEFAULT";

/// Whether a TF kernel serves `device`: registered for it, or for
/// `DEVICE_DEFAULT`, which TF's kernel lookup falls back to on any device.
pub(super) fn tf_serves(def: &KernelDef, device: &str) -> bool {
    def.device_type == device || def.device_type == TF_DEVICE_DEFAULT
}

/// Whether a TF kernel accepts `t` for `attr`: it constrains the attr to a
/// list with `t`, or does not constrain it.
pub(super) fn tf_accepts(def: &KernelDef, attr: &str, t: DataType) -> bool {
    tf_constraint(def, attr).is_none_or(|types| types.contains(&(t as i32)))
}

fn type_name(t: i32) -> &'static str {
    DataType::try_from(t).map_or("?", DataTypeExt::type_name)
}

/// Matches TF's kernels for `device` one by one against ours.
pub(super) fn tf_kernel_stats(
    op_defs: &[OpDef],
    kernels: &KernelRegistry,
    tf: &KernelList,
    device: &str,
) -> TfKernelStats {
    let by_name: HashMap<&str, &OpDef> = op_defs.iter().map(|o| (o.name.as_str(), o)).collect();
    let mut stats = TfKernelStats::default();
    for def in tf.kernel.iter().filter(|k| k.device_type == device) {
        let Some(op_def) = by_name.get(def.op.as_str()) else {
            continue;
        };
        stats.total += 1;
        let constraints: Vec<(&str, Vec<i32>)> = def
            .constraint
            .iter()
            .map(|c| {
                let types = tf_constraint(def, &c.name).unwrap_or_default();
                (c.name.as_str(), types)
            })
            .collect();
        let describe = || {
            let parts: Vec<String> = constraints
                .iter()
                .map(|(attr, types)| {
                    let names: Vec<&str> = types.iter().map(|&t| type_name(t)).collect();
                    format!("{attr} in [{}]", names.join(", "))
                })
                .collect();
            let label = if def.label.is_empty() {
                String::new()
            } else {
                format!(" (label '{}')", def.label)
            };
            format!("{}: {}{label}", def.op, parts.join(", "))
        };
        let unsupported = constraints.iter().any(|(_, types)| {
            types
                .iter()
                .any(|&t| DataType::try_from(t).is_ok_and(|t| !is_supported(t)))
        });
        if unsupported {
            stats.no_tensor += 1;
            continue;
        }
        let op_allows = constraints.iter().all(|(attr, types)| {
            op_def
                .attr
                .iter()
                .find(|a| a.name == *attr)
                .is_some_and(|a| {
                    let allowed = allowed_types(a.allowed_values.as_ref());
                    types
                        .iter()
                        .all(|&t| allowed.iter().any(|&a| a as i32 == t))
                })
        });
        if !op_allows {
            stats.disallowed.push(describe());
            continue;
        }
        let matched = kernels.kernels_for_op(&def.op).iter().any(|r| {
            r.device == device
                && r.label == def.label
                && r.constraints.iter().all(|c| {
                    constraints
                        .iter()
                        .find(|(attr, _)| *attr == c.attr)
                        .is_some_and(|(_, types)| {
                            types
                                .iter()
                                .all(|&t| c.types.iter().any(|&ours| ours as i32 == t))
                        })
                })
        });
        if matched {
            stats.matched += 1;
        } else {
            stats.unmatched.push(describe());
        }
    }
    stats
}

//! The coverage model: the rows of every op, computed from the op and kernel
//! registries (and TF's kernels, with `--against`).

use std::collections::{BTreeSet, HashMap};

use opreg_proto::{DataType, KernelDef, KernelList, OpDef};
use registry_core::kernel::{KernelRegistration, KernelRegistry};
use registry_core::registry::OpRegistry;
use registry_core::tensor::is_supported;

use super::cell::{CellState, state};
use super::tf::{TfComparison, tf_accepts, tf_kernel_stats, tf_serves};
use super::types::{DTYPE_ORDER, allowed_types};

/// One device's side of a [`Row`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceCoverage {
    /// Our kernel registrations of the op for the device.
    pub kernels: usize,
    /// The allowed types some of our kernels accept for the attr (only types
    /// opreg has tensors of), in column order.
    pub covered: Vec<DataType>,
    /// TF's side, with `--against`.
    pub tf: Option<TfSide>,
}

/// TensorFlow's side of one device of a [`Row`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TfSide {
    /// TF's kernel registrations of the op for the device (or for
    /// `DEVICE_DEFAULT`).
    pub kernels: usize,
    /// The allowed types some of TF's kernels accept for the attr.
    pub types: Vec<DataType>,
}

/// One (op, type attr), or an op without type attrs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// The op.
    pub op: String,
    /// The type attr, or `None` for an op without one.
    pub attr: Option<String>,
    /// The types the attr allows, in column order (empty without an attr).
    pub allowed: Vec<DataType>,
    /// One entry per [`Coverage::devices`].
    pub devices: Vec<DeviceCoverage>,
}

impl Row {
    /// The cells of the row for device `index`: each allowed type and its
    /// state, or a single `(None, state)` for an op without a type attr
    /// (covered when the device has any kernel of the op).
    pub fn cells(&self, index: usize) -> Vec<(Option<DataType>, CellState)> {
        let device = &self.devices[index];
        if self.attr.is_none() {
            let tf = device.tf.as_ref().map(|t| t.kernels > 0);
            return vec![(None, state(device.kernels > 0, tf, true))];
        }
        self.allowed
            .iter()
            .map(|&t| {
                let ours = device.covered.contains(&t);
                let tf = device.tf.as_ref().map(|s| s.types.contains(&t));
                (Some(t), state(ours, tf, is_supported(t)))
            })
            .collect()
    }

    /// The allowed types opreg has no tensors of.
    pub fn no_tensor(&self) -> Vec<DataType> {
        self.allowed
            .iter()
            .copied()
            .filter(|&t| !is_supported(t))
            .collect()
    }

    /// The row's label: `Op` or `Op.attr`.
    pub fn label(&self) -> String {
        match &self.attr {
            Some(attr) => format!("{} {attr}", self.op),
            None => self.op.clone(),
        }
    }
}

/// The coverage of every registered op (see the [module docs](crate::coverage)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Coverage {
    /// The device types compared, in column order.
    pub devices: Vec<String>,
    /// Every type some row allows, in [`DTYPE_ORDER`].
    pub dtypes: Vec<DataType>,
    /// One row per (op, type attr), ops sorted by name.
    pub rows: Vec<Row>,
    /// The comparison with TF, with `--against`.
    pub against: Option<TfComparison>,
}

impl Coverage {
    /// Computes the coverage of every op of `ops` (internal `_` ops and the
    /// ops the runtime runs itself left out) by `kernels` on `devices`, and against `tf` when given
    /// (`source` names it).
    pub fn compute(
        ops: &OpRegistry,
        kernels: &KernelRegistry,
        devices: &[String],
        tf: Option<(&KernelList, &str)>,
    ) -> Coverage {
        // The ops the runtime runs itself (control flow, functional ops)
        // have no kernels to cover.
        let op_defs: Vec<_> = ops
            .export_op_list(false)
            .op
            .into_iter()
            .filter(|o| !opreg_runtime::is_runtime_op(&o.name))
            .collect();
        let mut tf_by_op: HashMap<&str, Vec<&KernelDef>> = HashMap::new();
        if let Some((list, _)) = tf {
            for def in &list.kernel {
                tf_by_op.entry(def.op.as_str()).or_default().push(def);
            }
        }
        let mut rows = Vec::new();
        for op_def in &op_defs {
            let regs = kernels.kernels_for_op(&op_def.name);
            let theirs = tf_by_op
                .get(op_def.name.as_str())
                .map(Vec::as_slice)
                .unwrap_or_default();
            rows.extend(op_rows(op_def, &regs, theirs, tf.is_some(), devices));
        }
        let mut used: BTreeSet<DataType> = BTreeSet::new();
        rows.iter().for_each(|r| used.extend(r.allowed.iter()));
        let dtypes = DTYPE_ORDER
            .iter()
            .copied()
            .filter(|t| used.contains(t))
            .collect();
        let against = tf.map(|(list, source)| TfComparison {
            source: source.to_owned(),
            kernels: devices
                .iter()
                .map(|d| tf_kernel_stats(&op_defs, kernels, list, d))
                .collect(),
        });
        Coverage {
            devices: devices.to_vec(),
            dtypes,
            rows,
            against,
        }
    }
}

/// The rows of one op.
fn op_rows(
    op_def: &OpDef,
    regs: &[&KernelRegistration],
    theirs: &[&KernelDef],
    against: bool,
    devices: &[String],
) -> Vec<Row> {
    let kernel_counts = |device: &str| {
        let ours = regs.iter().filter(|r| r.device == device).count();
        let tf = theirs.iter().filter(|k| tf_serves(k, device)).count();
        (ours, tf)
    };
    let type_attrs: Vec<_> = op_def
        .attr
        .iter()
        .filter(|a| is_type_attr(&a.r#type))
        .collect();
    if type_attrs.is_empty() {
        let devices = devices
            .iter()
            .map(|d| {
                let (ours, tf) = kernel_counts(d);
                DeviceCoverage {
                    kernels: ours,
                    covered: Vec::new(),
                    tf: against.then(|| TfSide {
                        kernels: tf,
                        types: Vec::new(),
                    }),
                }
            })
            .collect();
        return vec![Row {
            op: op_def.name.clone(),
            attr: None,
            allowed: Vec::new(),
            devices,
        }];
    }
    type_attrs
        .into_iter()
        .map(|attr| {
            let allowed = allowed_types(attr.allowed_values.as_ref());
            let devices = devices
                .iter()
                .map(|d| {
                    let (ours, tf) = kernel_counts(d);
                    let covered = allowed
                        .iter()
                        .copied()
                        .filter(|&t| {
                            is_supported(t)
                                && regs
                                    .iter()
                                    .any(|r| r.device == d && ours_accepts(r, &attr.name, t))
                        })
                        .collect();
                    let tf = against.then(|| TfSide {
                        kernels: tf,
                        types: allowed
                            .iter()
                            .copied()
                            .filter(|&t| {
                                theirs
                                    .iter()
                                    .any(|k| tf_serves(k, d) && tf_accepts(k, &attr.name, t))
                            })
                            .collect(),
                    });
                    DeviceCoverage {
                        kernels: ours,
                        covered,
                        tf,
                    }
                })
                .collect();
            Row {
                op: op_def.name.clone(),
                attr: Some(attr.name.clone()),
                allowed,
                devices,
            }
        })
        .collect()
}

/// Whether one of our kernels accepts `t` for `attr`: it constrains the
/// attr to a list with `t`, or does not constrain it.
fn ours_accepts(reg: &KernelRegistration, attr: &str, t: DataType) -> bool {
    reg.constraints
        .iter()
        .find(|c| c.attr == attr)
        .is_none_or(|c| c.types.contains(&t))
}

/// Whether an attr of this type is a type attr (`type` or `list(type)`).
fn is_type_attr(kind: &str) -> bool {
    kind == "type" || kind == "list(type)"
}

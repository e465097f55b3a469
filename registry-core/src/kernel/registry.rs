//! [`KernelRegistry`]: every kernel registration, indexed by op, with
//! TensorFlow's lookup rules and KernelList export.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{OnceLock, RwLock};

use opreg_proto::attr_value::Value;
use opreg_proto::{DataType, KernelList, NodeDef};
use rustc_hash::FxHashMap;

use super::lookup_error::KernelLookupError;
use super::op_index::{OpKernels, constraint_holds};
use super::registration::KernelRegistration;
use super::summarize_registration;
use crate::attr::summarize_node_attrs;
use crate::registry::OpRegistry;

/// The attr a node sets to ask for a kernel label (TF's `kKernelAttr`).
pub const KERNEL_LABEL_ATTR: &str = "_kernel";

/// Every registered kernel, indexed by op name.
///
/// The [global](Self::global) registry holds every `#[kernel]` linked into
/// the binary and is built on first use. Lookup follows TensorFlow's
/// `FindKernelRegistration`: a registration is a candidate when its op and
/// device match and its label equals the node's `_kernel` attr (or both are
/// empty); every type constraint must hold for the node's attrs; among the
/// matches the highest priority wins, and two matches at that (highest)
/// priority are an error, whatever the registration order.
///
/// ```
/// use registry_core::kernel::KernelRegistry;
/// let kernels = KernelRegistry::global();
/// let list = kernels.kernel_list();
/// assert_eq!(list.kernel.len(), kernels.len());
/// ```
#[derive(Debug, Default)]
pub struct KernelRegistry {
    by_op: FxHashMap<&'static str, OpKernels>,
    runtime: RwLock<FxHashMap<String, Vec<&'static KernelRegistration>>>,
    has_runtime: AtomicBool,
}

impl KernelRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// The process-wide registry of every `#[kernel]` in the binary.
    pub fn global() -> &'static KernelRegistry {
        static GLOBAL: OnceLock<KernelRegistry> = OnceLock::new();
        GLOBAL.get_or_init(KernelRegistry::from_inventory)
    }

    /// A registry of every inventory registration.
    pub fn from_inventory() -> Self {
        Self::from_registrations(inventory::iter::<KernelRegistration>)
    }

    /// A registry of the given registrations.
    pub fn from_registrations(
        registrations: impl IntoIterator<Item = &'static KernelRegistration>,
    ) -> Self {
        let mut by_op: FxHashMap<&'static str, Vec<&'static KernelRegistration>> =
            FxHashMap::default();
        for reg in registrations {
            by_op.entry(reg.op).or_default().push(reg);
        }
        let by_op = by_op
            .into_iter()
            .map(|(op, mut regs)| {
                regs.sort_by_key(|r| sort_key(r));
                (op, OpKernels::new(regs))
            })
            .collect();
        Self {
            by_op,
            ..Self::default()
        }
    }

    /// Adds a registration at run time (it is kept for the registry's life).
    pub fn register(&self, registration: KernelRegistration) {
        self.register_static(Box::leak(Box::new(registration)));
    }

    /// Adds a registration that lives for the rest of the process (one of
    /// a loaded op library).
    pub(crate) fn register_static(&self, registration: &'static KernelRegistration) {
        let mut runtime = self
            .runtime
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let regs = runtime.entry(registration.op.to_owned()).or_default();
        regs.push(registration);
        regs.sort_by_key(|r| sort_key(r));
        self.has_runtime.store(true, Ordering::Release);
    }

    /// A registered kernel that no lookup could tell apart from
    /// `registration`: the same op, device, label, priority and type
    /// constraints.
    pub fn duplicate_of(
        &self,
        registration: &KernelRegistration,
    ) -> Option<&'static KernelRegistration> {
        self.kernels_for_op(registration.op)
            .into_iter()
            .find(|existing| existing.same_key(registration))
    }

    /// The number of registrations.
    pub fn len(&self) -> usize {
        self.all().len()
    }

    /// True when nothing is registered.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every registration of `op`, any device, in a stable order.
    pub fn kernels_for_op(&self, op: &str) -> Vec<&'static KernelRegistration> {
        let mut out: Vec<&'static KernelRegistration> = self
            .by_op
            .get(op)
            .map(|k| k.all.clone())
            .unwrap_or_default();
        if self.has_runtime.load(Ordering::Acquire) {
            let runtime = self
                .runtime
                .read()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if let Some(regs) = runtime.get(op) {
                out.extend(regs.iter().copied());
            }
        }
        out
    }

    /// Every registration, sorted by op, device and constraints.
    pub fn all(&self) -> Vec<&'static KernelRegistration> {
        let mut out: Vec<&'static KernelRegistration> = self
            .by_op
            .values()
            .flat_map(|k| k.all.iter().copied())
            .collect();
        if self.has_runtime.load(Ordering::Acquire) {
            let runtime = self
                .runtime
                .read()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            out.extend(runtime.values().flatten().copied());
        }
        out.sort_by_key(|r| (r.op, sort_key(r)));
        out
    }

    /// Every registration as TensorFlow's `KernelList` (like
    /// `get_all_registered_kernels`), sorted by op, device and constraints.
    pub fn kernel_list(&self) -> KernelList {
        KernelList {
            kernel: self.all().iter().map(|r| r.kernel_def()).collect(),
        }
    }

    /// The registrations of ops `ops` does not know (a kernel for an op
    /// that is not linked in, or registered at run time for a missing op).
    pub fn kernels_without_op(&self, ops: &OpRegistry) -> Vec<&'static KernelRegistration> {
        self.all()
            .into_iter()
            .filter(|r| ops.look_up(r.op).is_err())
            .collect()
    }

    /// Chooses the kernel for `node` on `device` (TF's `FindKernelDef`).
    /// The node's attrs should include the OpDef's defaults
    /// ([`add_defaults_to_node_def`](crate::node_def::add_defaults_to_node_def)).
    pub fn find_kernel(
        &self,
        node: &NodeDef,
        device: &str,
    ) -> Result<&'static KernelRegistration, KernelLookupError> {
        let label = node_label(node);
        let mut best: Option<&'static KernelRegistration> = None;
        // A second match at `best`'s priority (an error unless a higher
        // priority match comes later).
        let mut tie: Option<&'static KernelRegistration> = None;
        let mut attr_mismatch = false;
        let mut label_mismatch = false;
        let mut consider = |reg: &'static KernelRegistration, constraints_hold: bool| {
            // Most labels are empty: skip the string comparison then.
            let same_label = if label.is_empty() {
                reg.label.is_empty()
            } else {
                reg.label == label
            };
            if !same_label {
                label_mismatch = true;
                return;
            }
            if !constraints_hold {
                attr_mismatch = true;
                return;
            }
            match best {
                Some(prev) if prev.priority > reg.priority => {}
                Some(prev) if prev.priority == reg.priority => {
                    tie.get_or_insert(reg);
                }
                _ => {
                    best = Some(reg);
                    tie = None;
                }
            }
        };
        if let Some(kernels) = self.by_op.get(node.op.as_str()) {
            let values = kernels.attr_values(node);
            kernels.for_device(device, node, &values, &mut consider)?;
        }
        if self.has_runtime.load(Ordering::Acquire) {
            let runtime = self
                .runtime
                .read()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            for &reg in runtime
                .get(node.op.as_str())
                .map(Vec::as_slice)
                .unwrap_or_default()
            {
                if reg.device == device {
                    consider(reg, constraints_match(reg, node)?);
                }
            }
        }
        match (best, tie) {
            (Some(first), Some(second)) => Err(KernelLookupError::Ambiguous {
                node: node.name.clone(),
                op: node.op.clone(),
                device: device.to_owned(),
                priority: first.priority,
                first: summarize_registration(first),
                first_kernel: first.kernel_name.to_owned(),
                second: summarize_registration(second),
                second_kernel: second.kernel_name.to_owned(),
            }),
            (Some(reg), None) => Ok(reg),
            (None, _) => Err(self.not_found(node, device, label, attr_mismatch, label_mismatch)),
        }
    }

    fn not_found(
        &self,
        node: &NodeDef,
        device: &str,
        label: &str,
        attr_mismatch: bool,
        label_mismatch: bool,
    ) -> KernelLookupError {
        let registered: Vec<String> = self
            .kernels_for_op(&node.op)
            .iter()
            .map(|r| summarize_registration(r))
            .collect();
        let op = &node.op;
        let mismatch_note = if attr_mismatch {
            "(OpKernel was found, but attributes didn't match) ".to_owned()
        } else if registered.is_empty() {
            format!("(no kernel of '{op}' is registered for any device) ")
        } else if label_mismatch && label.is_empty() {
            format!(
                "(every kernel of '{op}' for device '{device}' has a label; set the node's \
                 '{KERNEL_LABEL_ATTR}' attr to one of them) "
            )
        } else if label_mismatch {
            format!("(no kernel of '{op}' for device '{device}' has label '{label}') ")
        } else {
            format!("(no kernel of '{op}' is registered for device '{device}') ")
        };
        KernelLookupError::NotFound {
            node: node.name.clone(),
            op: node.op.clone(),
            device: device.to_owned(),
            requested: summarize_node_attrs(node),
            label_note: if label.is_empty() {
                String::new()
            } else {
                format!(" (label '{label}')")
            },
            attr_mismatch,
            mismatch_note,
            registered,
        }
    }
}

fn sort_key(r: &KernelRegistration) -> (&'static str, &'static str, Vec<i32>, i32) {
    let types = r
        .constraints
        .iter()
        .flat_map(|c| c.types.iter().map(|&t| t as i32))
        .collect();
    (r.device, r.label, types, -r.priority)
}

/// The kernel label a node asks for (its `_kernel` attr), or `""`.
pub fn node_label(node: &NodeDef) -> &str {
    match node
        .attr
        .get(KERNEL_LABEL_ATTR)
        .and_then(|v| v.value.as_ref())
    {
        Some(Value::S(s)) => std::str::from_utf8(s).unwrap_or(""),
        _ => "",
    }
}

fn constraints_match(reg: &KernelRegistration, node: &NodeDef) -> Result<bool, KernelLookupError> {
    for c in reg.constraints {
        if !constraint_holds(reg, c, node.attr.get(c.attr), node)? {
            return Ok(false);
        }
    }
    Ok(true)
}

/// The dtypes a kernel registration accepts for `attr`, if it constrains it.
pub fn constraint_types(reg: &KernelRegistration, attr: &str) -> Option<&'static [DataType]> {
    reg.constraints
        .iter()
        .find(|c| c.attr == attr)
        .map(|c| c.types)
}

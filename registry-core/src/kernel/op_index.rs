//! [`OpKernels`]: one op's registrations, indexed for lookup: grouped by
//! device, with the constrained attr names interned so a lookup reads each
//! of the node's constrained attrs once, whatever the number of candidates.

use opreg_proto::attr_value::Value;
use opreg_proto::{AttrValue, NodeDef};
use smallvec::SmallVec;

use super::lookup_error::KernelLookupError;
use super::registration::KernelRegistration;

/// One registration with the index (in [`OpKernels::attrs`]) of each of its
/// constraints' attrs.
#[derive(Debug)]
struct Entry {
    reg: &'static KernelRegistration,
    attr_index: SmallVec<[usize; 2]>,
}

/// The registrations of one op.
#[derive(Debug, Default)]
pub(super) struct OpKernels {
    /// Every registration, in the registry's sort order.
    pub(super) all: Vec<&'static KernelRegistration>,
    /// The distinct constrained attr names.
    attrs: SmallVec<[&'static str; 4]>,
    /// The registrations per device type, in sort order.
    devices: SmallVec<[(&'static str, Vec<Entry>); 2]>,
}

/// The node's value of each constrained attr (`None` when it lacks it).
pub(super) type AttrValues<'n> = SmallVec<[Option<&'n AttrValue>; 4]>;

impl OpKernels {
    /// Indexes `all` (already sorted).
    pub(super) fn new(all: Vec<&'static KernelRegistration>) -> Self {
        let mut attrs: SmallVec<[&'static str; 4]> = SmallVec::new();
        let mut devices: SmallVec<[(&'static str, Vec<Entry>); 2]> = SmallVec::new();
        for &reg in &all {
            let attr_index = reg
                .constraints
                .iter()
                .map(|c| match attrs.iter().position(|a| *a == c.attr) {
                    Some(i) => i,
                    None => {
                        attrs.push(c.attr);
                        attrs.len() - 1
                    }
                })
                .collect();
            let entry = Entry { reg, attr_index };
            match devices.iter_mut().find(|(d, _)| *d == reg.device) {
                Some((_, entries)) => entries.push(entry),
                None => devices.push((reg.device, vec![entry])),
            }
        }
        Self {
            all,
            attrs,
            devices,
        }
    }

    /// The node's values of the constrained attrs.
    pub(super) fn attr_values<'n>(&self, node: &'n NodeDef) -> AttrValues<'n> {
        self.attrs.iter().map(|a| node.attr.get(*a)).collect()
    }

    /// Calls `f` with each registration for `device` and whether its
    /// constraints hold for the node (`values` from [`Self::attr_values`]).
    /// Labels are not checked here.
    pub(super) fn for_device(
        &self,
        device: &str,
        node: &NodeDef,
        values: &AttrValues<'_>,
        mut f: impl FnMut(&'static KernelRegistration, bool),
    ) -> Result<(), KernelLookupError> {
        let Some((_, entries)) = self.devices.iter().find(|(d, _)| *d == device) else {
            return Ok(());
        };
        for e in entries {
            let mut ok = true;
            for (c, &i) in e.reg.constraints.iter().zip(&e.attr_index) {
                let value = values.get(i).copied().flatten();
                if !constraint_holds(e.reg, c, value, node)? {
                    ok = false;
                    break;
                }
            }
            f(e.reg, ok);
        }
        Ok(())
    }
}

/// Whether the node's `value` of `c.attr` is one of `c.types` (every element
/// of a list); errors when the node lacks the attr or it is not a type.
pub(super) fn constraint_holds(
    reg: &KernelRegistration,
    c: &super::TypeConstraint,
    value: Option<&AttrValue>,
    node: &NodeDef,
) -> Result<bool, KernelLookupError> {
    let Some(value) = value else {
        return Err(KernelLookupError::ConstraintAttrMissing {
            node: node.name.clone(),
            op: node.op.clone(),
            attr: c.attr.to_owned(),
            kernel: reg.kernel_name.to_owned(),
        });
    };
    let allowed = |raw: i32| c.types.iter().any(|&t| t as i32 == raw);
    match &value.value {
        Some(Value::Type(t)) => Ok(allowed(*t)),
        Some(Value::List(l)) if l.r#type.len() == list_len(l) => {
            Ok(l.r#type.iter().all(|&t| allowed(t)))
        }
        _ => Err(KernelLookupError::ConstraintAttrKind {
            node: node.name.clone(),
            op: node.op.clone(),
            attr: c.attr.to_owned(),
            kernel: reg.kernel_name.to_owned(),
            found: crate::attr::attr_value_kind(value).to_owned(),
        }),
    }
}

/// The number of values in a list attr, whatever their kind.
fn list_len(l: &opreg_proto::attr_value::ListValue) -> usize {
    l.s.len()
        + l.i.len()
        + l.f.len()
        + l.b.len()
        + l.r#type.len()
        + l.shape.len()
        + l.tensor.len()
        + l.func.len()
}

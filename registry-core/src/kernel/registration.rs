//! [`KernelRegistration`]: one kernel registration (what `#[kernel]` emits
//! for each type combination), and its [`KernelDef`].

use opreg_proto::attr_value::{ListValue, Value};
use opreg_proto::kernel_def::AttrConstraint;
use opreg_proto::{AttrValue, DataType, KernelDef};

use std::fmt::Write;

use super::{KernelFactory, KernelSource, KernelSourcesFn};
use crate::attr::summarize::dtype_name;
use crate::kernel::KernelError;
use crate::op::SourceLocation;

/// An attr's allowed types for one kernel (TF's `TypeConstraint`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TypeConstraint {
    /// The `type` or `list(type)` attr.
    pub attr: &'static str,
    /// The types the kernel accepts for it.
    pub types: &'static [DataType],
}

/// One kernel registration (TF's `REGISTER_KERNEL_BUILDER`), collected by
/// `inventory`.
#[derive(Debug, Clone, Copy)]
pub struct KernelRegistration {
    /// The op it implements.
    pub op: &'static str,
    /// The device type (`"CPU"`, `"GPU"` or another name).
    pub device: &'static str,
    /// Type constraints; the node's attrs must satisfy all of them.
    pub constraints: &'static [TypeConstraint],
    /// Args kept in host memory (for device kernels).
    pub host_memory: &'static [&'static str],
    /// The label a node must ask for (attr `_kernel`) to get this kernel; `""` for none.
    pub label: &'static str,
    /// Among matching kernels, the highest priority wins.
    pub priority: i32,
    /// Builds the kernel for a node.
    pub factory: KernelFactory,
    /// The Rust item that implements it, with type arguments (`abs::<f32>`).
    pub kernel_name: &'static str,
    /// The device code its kernel compiles when built, for device kernels
    /// (`#[kernel(sources = path)]`); `None` for kernels that compile none.
    pub sources: Option<KernelSourcesFn>,
    /// Where it was registered.
    pub location: SourceLocation,
}

inventory::collect!(KernelRegistration);

impl KernelRegistration {
    /// The device code this registration's kernel may compile when it is
    /// built (none for kernels without [`sources`](Self::sources)).
    pub fn kernel_sources(&self) -> Result<Vec<KernelSource>, KernelError> {
        match self.sources {
            Some(sources) => sources(self),
            None => Ok(Vec::new()),
        }
    }

    /// True when no lookup could tell `self` and `other` apart: the same
    /// op, device, label, priority and type constraints.
    pub fn same_key(&self, other: &KernelRegistration) -> bool {
        self.op == other.op
            && self.device == other.device
            && self.label == other.label
            && self.priority == other.priority
            && self.constraints == other.constraints
    }

    /// The registration as TensorFlow's `KernelDef`.
    ///
    /// ```
    /// use registry_core::kernel::{FnKernel, KernelRegistration, TypeConstraint};
    /// use registry_core::proto::DataType;
    /// # use registry_core::kernel::{KernelError, OpKernel, OpKernelConstruction};
    /// # fn factory(_: &OpKernelConstruction<'_>) -> Result<Box<dyn OpKernel>, KernelError> {
    /// #     Ok(Box::new(FnKernel(|_| Ok(()))))
    /// # }
    /// let reg = KernelRegistration {
    ///     op: "Abs",
    ///     device: "CPU",
    ///     constraints: &[TypeConstraint { attr: "T", types: &[DataType::DtFloat] }],
    ///     host_memory: &[],
    ///     label: "",
    ///     priority: 0,
    ///     factory,
    ///     kernel_name: "abs::<f32>",
    ///     sources: None,
    ///     location: registry_core::op::SourceLocation { file: file!(), line: line!(), module_path: module_path!() },
    /// };
    /// let def = reg.kernel_def();
    /// assert_eq!(def.op, "Abs");
    /// assert_eq!(def.constraint[0].name, "T");
    /// ```
    pub fn kernel_def(&self) -> KernelDef {
        KernelDef {
            op: self.op.to_owned(),
            device_type: self.device.to_owned(),
            constraint: self
                .constraints
                .iter()
                .map(|c| AttrConstraint {
                    name: c.attr.to_owned(),
                    allowed_values: Some(AttrValue {
                        value: Some(Value::List(ListValue {
                            r#type: c.types.iter().map(|&t| t as i32).collect(),
                            ..Default::default()
                        })),
                    }),
                })
                .collect(),
            host_memory_arg: self.host_memory.iter().map(|s| (*s).to_owned()).collect(),
            label: self.label.to_owned(),
            priority: self.priority,
        }
    }
}

/// A registration as TF lists it: `device='CPU'; T in [DT_FLOAT]`, with the
/// label and priority when set.
pub fn summarize_registration(reg: &KernelRegistration) -> String {
    let mut out = format!("device='{}'", reg.device);
    if !reg.label.is_empty() {
        let _ = write!(out, "; label='{}'", reg.label);
    }
    for c in reg.constraints {
        let types: Vec<String> = c.types.iter().map(|&t| dtype_name(t as i32)).collect();
        let _ = write!(out, "; {} in [{}]", c.attr, types.join(", "));
    }
    if reg.priority != 0 {
        let _ = write!(out, "; priority={}", reg.priority);
    }
    out
}

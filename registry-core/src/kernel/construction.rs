//! [`OpKernelConstruction`]: what a kernel sees when it is built for a node
//! (TF's `OpKernelConstruction`): the node's attrs, its dtypes, and the
//! device it will run on.

use opreg_proto::{AttrValue, DataType, NodeDef, OpDef};

use super::KernelError;
use crate::attr::{AttrError, FromAttrValue, NodeAttrs};
use crate::device::Device;

/// The node, op and device a kernel is being built for.
///
/// Kernels read their attrs here once, at construction, and keep them:
///
/// ```
/// use opreg_standard_ops::MatMul;
/// use registry_core::Op;
/// use registry_core::device::cpu_device;
/// use registry_core::kernel::OpKernelConstruction;
/// use registry_core::proto::{DataType, NodeDef};
///
/// let mut node = NodeDef { name: "mm".into(), op: "MatMul".into(), ..Default::default() };
/// node.attr.insert("transpose_a".into(), true.into());
/// let types = [DataType::DtFloat];
/// let op_def = MatMul::op_def();
/// let ctx = OpKernelConstruction::new(&node, &op_def, &**cpu_device(), &[DataType::DtFloat; 2], &types);
/// assert!(ctx.attr::<bool>("transpose_a").unwrap());
/// assert!(!ctx.attr::<bool>("transpose_b").unwrap()); // the OpDef's default
/// assert!(ctx.attr::<i64>("transpose_a").is_err());   // wrong kind
/// assert_eq!(ctx.device_type(), "CPU");
/// ```
#[derive(Debug, Clone, Copy)]
pub struct OpKernelConstruction<'a> {
    attrs: NodeAttrs<'a>,
    device: &'a dyn Device,
    input_types: &'a [DataType],
    output_types: &'a [DataType],
}

impl<'a> OpKernelConstruction<'a> {
    /// A construction context for `node` (an instance of `op_def`) on
    /// `device`, whose inputs and outputs have the given dtypes.
    pub fn new(
        node: &'a NodeDef,
        op_def: &'a OpDef,
        device: &'a dyn Device,
        input_types: &'a [DataType],
        output_types: &'a [DataType],
    ) -> Self {
        Self {
            attrs: NodeAttrs::new(node, op_def),
            device,
            input_types,
            output_types,
        }
    }

    /// The NodeDef.
    pub fn node_def(&self) -> &'a NodeDef {
        self.attrs.node()
    }

    /// The node's name.
    pub fn name(&self) -> &'a str {
        &self.attrs.node().name
    }

    /// The node's op name.
    pub fn op(&self) -> &'a str {
        &self.attrs.node().op
    }

    /// The op's OpDef.
    pub fn op_def(&self) -> &'a OpDef {
        self.attrs.op_def()
    }

    /// The device the kernel will run on (TF's `device()`): a backend's
    /// kernels downcast it to their own device type
    /// (`downcast` on `dyn Device`) to compile or look up what they
    /// launch.
    pub fn device(&self) -> &'a dyn Device {
        self.device
    }

    /// The device type the kernel runs on (`"CPU"`, `"GPU"`, ...).
    pub fn device_type(&self) -> &'static str {
        self.device.device_type()
    }

    /// The dtype of every input, in order.
    pub fn input_types(&self) -> &'a [DataType] {
        self.input_types
    }

    /// The dtype of every output, in order.
    pub fn output_types(&self) -> &'a [DataType] {
        self.output_types
    }

    /// The node's attrs, with the OpDef's defaults.
    pub fn attrs(&self) -> &NodeAttrs<'a> {
        &self.attrs
    }

    /// The attr's value: the node's, or else the OpDef's default.
    pub fn attr_value(&self, name: &str) -> Option<&'a AttrValue> {
        self.attrs.value(name)
    }

    /// Whether the node (or the OpDef's defaults) has the attr.
    pub fn has_attr(&self, name: &str) -> bool {
        self.attrs.has(name)
    }

    /// The attr converted to `T` (`i64`, `bool`, `String`, `&str`,
    /// `DataType`, `Vec<i32>`, [`Tensor`](crate::tensor::Tensor), ...); an
    /// error names the node, op and attr.
    pub fn attr<T: FromAttrValue<'a>>(&self, name: &str) -> Result<T, KernelError> {
        Ok(self.attrs.get(name)?)
    }

    /// A [`KernelError::Attr`] for this node: attr `attr` is invalid.
    pub fn attr_error(&self, attr: &str, message: String) -> KernelError {
        self.attrs.invalid(attr, message).into()
    }
}

impl From<AttrError> for KernelError {
    fn from(e: AttrError) -> Self {
        KernelError::Attr {
            node: e.node,
            op: e.op,
            attr: e.attr,
            message: e.problem.to_string(),
        }
    }
}

//! [`OpKernelConstruction`]: what a kernel sees when it is built for a node
//! (TF's `OpKernelConstruction`), with typed attr getters.

use opreg_proto::{
    AttrValue, DataType, NodeDef, OpDef, TensorProto, TensorShapeProto, attr_value::Value,
};

use super::KernelError;
use crate::tensor::Tensor;

/// The node, op and device a kernel is being built for.
///
/// Kernels read their attrs here once, at construction, and keep them:
///
/// ```
/// use registry_core::kernel::OpKernelConstruction;
/// use registry_core::proto::{AttrValue, DataType, NodeDef, attr_value::Value};
/// use registry_core::OpRegistry;
///
/// let op_def = OpRegistry::global().look_up_op_def("MatMul").unwrap();
/// let mut node = NodeDef { name: "mm".into(), op: "MatMul".into(), ..Default::default() };
/// node.attr.insert("transpose_a".into(), AttrValue { value: Some(Value::B(true)) });
/// let types = [DataType::DtFloat];
/// let ctx = OpKernelConstruction::new(&node, op_def, "CPU", &[DataType::DtFloat; 2], &types);
/// assert!(ctx.attr::<bool>("transpose_a").unwrap());
/// assert!(!ctx.attr::<bool>("transpose_b").unwrap()); // the OpDef's default
/// assert!(ctx.attr::<i64>("transpose_a").is_err());   // wrong kind
/// ```
#[derive(Debug, Clone, Copy)]
pub struct OpKernelConstruction<'a> {
    node: &'a NodeDef,
    op_def: &'a OpDef,
    device: &'a str,
    input_types: &'a [DataType],
    output_types: &'a [DataType],
}

impl<'a> OpKernelConstruction<'a> {
    /// A construction context for `node` (an instance of `op_def`) on
    /// `device`, whose inputs and outputs have the given dtypes.
    pub fn new(
        node: &'a NodeDef,
        op_def: &'a OpDef,
        device: &'a str,
        input_types: &'a [DataType],
        output_types: &'a [DataType],
    ) -> Self {
        Self {
            node,
            op_def,
            device,
            input_types,
            output_types,
        }
    }

    /// The NodeDef.
    pub fn node_def(&self) -> &'a NodeDef {
        self.node
    }

    /// The node's name.
    pub fn name(&self) -> &'a str {
        &self.node.name
    }

    /// The node's op name.
    pub fn op(&self) -> &'a str {
        &self.node.op
    }

    /// The op's OpDef.
    pub fn op_def(&self) -> &'a OpDef {
        self.op_def
    }

    /// The device type the kernel runs on (`"CPU"`, `"GPU"`, ...).
    pub fn device(&self) -> &'a str {
        self.device
    }

    /// The dtype of every input, in order.
    pub fn input_types(&self) -> &'a [DataType] {
        self.input_types
    }

    /// The dtype of every output, in order.
    pub fn output_types(&self) -> &'a [DataType] {
        self.output_types
    }

    /// The attr's value: the node's, or else the OpDef's default.
    pub fn attr_value(&self, name: &str) -> Option<&'a AttrValue> {
        self.node.attr.get(name).or_else(|| {
            self.op_def
                .attr
                .iter()
                .find(|a| a.name == name)
                .and_then(|a| a.default_value.as_ref())
        })
    }

    /// Whether the node (or the OpDef's defaults) has the attr.
    pub fn has_attr(&self, name: &str) -> bool {
        self.attr_value(name).is_some()
    }

    /// The attr converted to `T` (`i64`, `bool`, `String`, `DataType`,
    /// `Vec<i32>`, [`Tensor`], ...); an error names the node, op and attr.
    pub fn attr<T: FromAttrValue>(&self, name: &str) -> Result<T, KernelError> {
        let value = self
            .attr_value(name)
            .ok_or_else(|| self.attr_error(name, "the node has no such attr".into()))?;
        T::from_attr_value(value).map_err(|message| self.attr_error(name, message))
    }

    /// An [`KernelError::Attr`] for this node.
    pub fn attr_error(&self, attr: &str, message: String) -> KernelError {
        KernelError::Attr {
            node: self.node.name.clone(),
            op: self.node.op.clone(),
            attr: attr.to_owned(),
            message,
        }
    }
}

/// A Rust type an attr value converts to (TF's `GetNodeAttr` overloads).
pub trait FromAttrValue: Sized {
    /// Converts, or says what kind was expected and found.
    fn from_attr_value(value: &AttrValue) -> Result<Self, String>;
}

/// The kind of value an attr holds, for messages (`int`, `list(int)`, ...).
pub fn attr_value_kind(value: &AttrValue) -> &'static str {
    match &value.value {
        None => "no value",
        Some(Value::S(_)) => "string",
        Some(Value::I(_)) => "int",
        Some(Value::F(_)) => "float",
        Some(Value::B(_)) => "bool",
        Some(Value::Type(_)) => "type",
        Some(Value::Shape(_)) => "shape",
        Some(Value::Tensor(_)) => "tensor",
        Some(Value::List(_)) => "list",
        Some(Value::Func(_)) => "func",
        Some(Value::Placeholder(_)) => "placeholder",
    }
}

fn expected(kind: &str, value: &AttrValue) -> String {
    format!(
        "expected an attr of kind {kind}, found {}",
        attr_value_kind(value)
    )
}

fn to_dtype(raw: i32) -> Result<DataType, String> {
    DataType::try_from(raw).map_err(|_| format!("unknown dtype enum value {raw}"))
}

fn to_i32(v: i64) -> Result<i32, String> {
    i32::try_from(v).map_err(|_| format!("value {v} does not fit in a 32-bit integer"))
}

impl FromAttrValue for AttrValue {
    fn from_attr_value(value: &AttrValue) -> Result<Self, String> {
        Ok(value.clone())
    }
}

impl FromAttrValue for i64 {
    fn from_attr_value(value: &AttrValue) -> Result<Self, String> {
        match value.value {
            Some(Value::I(i)) => Ok(i),
            _ => Err(expected("int", value)),
        }
    }
}

impl FromAttrValue for i32 {
    fn from_attr_value(value: &AttrValue) -> Result<Self, String> {
        to_i32(i64::from_attr_value(value)?)
    }
}

impl FromAttrValue for f32 {
    fn from_attr_value(value: &AttrValue) -> Result<Self, String> {
        match value.value {
            Some(Value::F(f)) => Ok(f),
            _ => Err(expected("float", value)),
        }
    }
}

impl FromAttrValue for bool {
    fn from_attr_value(value: &AttrValue) -> Result<Self, String> {
        match value.value {
            Some(Value::B(b)) => Ok(b),
            _ => Err(expected("bool", value)),
        }
    }
}

impl FromAttrValue for String {
    fn from_attr_value(value: &AttrValue) -> Result<Self, String> {
        match &value.value {
            Some(Value::S(s)) => {
                String::from_utf8(s.clone()).map_err(|_| "the string is not valid UTF-8".into())
            }
            _ => Err(expected("string", value)),
        }
    }
}

impl FromAttrValue for Vec<u8> {
    fn from_attr_value(value: &AttrValue) -> Result<Self, String> {
        match &value.value {
            Some(Value::S(s)) => Ok(s.clone()),
            _ => Err(expected("string", value)),
        }
    }
}

impl FromAttrValue for DataType {
    fn from_attr_value(value: &AttrValue) -> Result<Self, String> {
        match value.value {
            Some(Value::Type(t)) => to_dtype(t),
            _ => Err(expected("type", value)),
        }
    }
}

impl FromAttrValue for TensorShapeProto {
    fn from_attr_value(value: &AttrValue) -> Result<Self, String> {
        match &value.value {
            Some(Value::Shape(s)) => Ok(s.clone()),
            _ => Err(expected("shape", value)),
        }
    }
}

impl FromAttrValue for TensorProto {
    fn from_attr_value(value: &AttrValue) -> Result<Self, String> {
        match &value.value {
            Some(Value::Tensor(t)) => Ok(t.clone()),
            _ => Err(expected("tensor", value)),
        }
    }
}

impl FromAttrValue for Tensor {
    fn from_attr_value(value: &AttrValue) -> Result<Self, String> {
        match &value.value {
            Some(Value::Tensor(t)) => Tensor::from_proto(t).map_err(|e| e.to_string()),
            _ => Err(expected("tensor", value)),
        }
    }
}

fn list(value: &AttrValue) -> Result<&opreg_proto::attr_value::ListValue, String> {
    match &value.value {
        Some(Value::List(l)) => Ok(l),
        _ => Err(expected("list", value)),
    }
}

impl FromAttrValue for Vec<i64> {
    fn from_attr_value(value: &AttrValue) -> Result<Self, String> {
        Ok(list(value)?.i.clone())
    }
}

impl FromAttrValue for Vec<i32> {
    fn from_attr_value(value: &AttrValue) -> Result<Self, String> {
        list(value)?.i.iter().map(|&v| to_i32(v)).collect()
    }
}

impl FromAttrValue for Vec<f32> {
    fn from_attr_value(value: &AttrValue) -> Result<Self, String> {
        Ok(list(value)?.f.clone())
    }
}

impl FromAttrValue for Vec<bool> {
    fn from_attr_value(value: &AttrValue) -> Result<Self, String> {
        Ok(list(value)?.b.clone())
    }
}

impl FromAttrValue for Vec<String> {
    fn from_attr_value(value: &AttrValue) -> Result<Self, String> {
        list(value)?
            .s
            .iter()
            .map(|s| String::from_utf8(s.clone()).map_err(|_| "a string is not valid UTF-8".into()))
            .collect()
    }
}

impl FromAttrValue for Vec<DataType> {
    fn from_attr_value(value: &AttrValue) -> Result<Self, String> {
        list(value)?.r#type.iter().map(|&t| to_dtype(t)).collect()
    }
}

impl FromAttrValue for Vec<TensorShapeProto> {
    fn from_attr_value(value: &AttrValue) -> Result<Self, String> {
        Ok(list(value)?.shape.clone())
    }
}

//! NodeDef semantics: TensorFlow's `node_def_util.cc`.
//!
//! A [`NodeDef`] is one node of a graph: a name, an op, input strings and
//! attr values. This module checks it against its op's [`OpDef`] and derives
//! what the OpDef implies for it:
//!
//! - [`add_defaults_to_node_def`] (TF's `AddDefaultsToNodeDef`) fills in the
//!   attrs the node leaves out and the op gives a default;
//! - [`validate_node_def`] (TF's `ValidateNodeDef`) checks the node's name,
//!   op, inputs and attrs;
//! - [`in_out_types_for_node`] (TF's `InOutTypesForNode`) resolves the dtype
//!   of every input and output;
//! - [`name_ranges_for_node`] (TF's `NameRangesForNode`) tells which input
//!   and output indices belong to which arg;
//! - [`NodeDefBuilder`] (TF's `NodeDefBuilder`) builds a valid NodeDef from
//!   its inputs, inferring the attrs they imply;
//! - [`parse_input`] parses an input string (`"node"`, `"node:2"`, `"^node"`).
//!
//! ```
//! # use opreg_standard_ops as _; // links the standard ops
//! use registry_core::OpRegistry;
//! use registry_core::node_def::{add_defaults_to_node_def, in_out_types_for_node, validate_node_def};
//! use registry_core::proto::{AttrValue, DataType, NodeDef, attr_value::Value};
//!
//! let op_def = OpRegistry::global().look_up_op_def("ConcatV2").unwrap();
//! let mut node = NodeDef {
//!     name: "concat".into(),
//!     op: "ConcatV2".into(),
//!     input: vec!["a".into(), "b:1".into(), "axis".into(), "^init".into()],
//!     ..Default::default()
//! };
//! node.attr.insert("N".into(), AttrValue { value: Some(Value::I(2)) });
//! node.attr.insert("T".into(), AttrValue { value: Some(Value::Type(DataType::DtFloat as i32)) });
//! add_defaults_to_node_def(op_def, &mut node); // Tidx = int32
//! validate_node_def(&node, op_def).unwrap();
//!
//! let (inputs, outputs) = in_out_types_for_node(&node, op_def).unwrap();
//! assert_eq!(inputs, [DataType::DtFloat, DataType::DtFloat, DataType::DtInt32]);
//! assert_eq!(outputs, [DataType::DtFloat]);
//! ```

mod builder;
mod error;
mod input;

use std::collections::BTreeMap;
use std::ops::Range;

use opreg_proto::attr_value::Value;
use opreg_proto::op_def::ArgDef;
use opreg_proto::{AttrValue, DataType, DataTypeExt, NodeDef, OpDef};

pub use builder::{BuildProblem, NodeDefBuildError, NodeDefBuilder, NodeOut};
pub use error::NodeDefError;
pub use input::{InputParseError, InputRef, is_valid_node_name, parse_input};

/// Arg name -> the range of input (or output) indices it covers, as
/// TensorFlow's `NameRangeMap`.
pub type NameRangeMap = BTreeMap<String, Range<usize>>;

/// Adds to `node` every attr of `op_def` that has a default value and that
/// the node does not set (TF's `AddDefaultsToNodeDef`). Attrs the node sets
/// are left as they are.
///
/// ```
/// # use opreg_standard_ops as _; // links the standard ops
/// use registry_core::OpRegistry;
/// use registry_core::node_def::add_defaults_to_node_def;
/// use registry_core::proto::{NodeDef, attr_value::Value};
///
/// let op_def = OpRegistry::global().look_up_op_def("MatMul").unwrap();
/// let mut node = NodeDef { name: "mm".into(), op: "MatMul".into(), ..Default::default() };
/// add_defaults_to_node_def(op_def, &mut node);
/// assert_eq!(node.attr["transpose_a"].value, Some(Value::B(false)));
/// assert!(!node.attr.contains_key("T")); // no default
/// ```
pub fn add_defaults_to_node_def(op_def: &OpDef, node: &mut NodeDef) {
    for attr in &op_def.attr {
        if let Some(default) = &attr.default_value {
            node.attr
                .entry(attr.name.clone())
                .or_insert_with(|| default.clone());
        }
    }
}

/// Checks `node` against `op_def` (TF's `ValidateNodeDef`, plus the node
/// name and input string syntax):
///
/// 1. the node's name follows `[A-Za-z0-9.][A-Za-z0-9_./>-]*`;
/// 2. the node's op is `op_def`'s name;
/// 3. every input string parses ([`parse_input`]) and control inputs
///    (`^node`) come after all data inputs;
/// 4. every attr of the node is defined by the op (names starting with `_`
///    are exempt, as in TF) and its value is valid for it (kind, minimum,
///    allowed values);
/// 5. every attr of the op is set on the node (call
///    [`add_defaults_to_node_def`] first to fill in defaults);
/// 6. the number of data inputs is what the op's input args imply
///    (`N * T`: N; a type list: its length; else 1 per arg).
///
/// The first problem found is returned.
///
/// ```
/// # use opreg_standard_ops as _; // links the standard ops
/// use registry_core::OpRegistry;
/// use registry_core::node_def::{NodeDefError, validate_node_def};
/// use registry_core::proto::{AttrValue, DataType, NodeDef, attr_value::Value};
///
/// let op_def = OpRegistry::global().look_up_op_def("Abs").unwrap();
/// let mut node = NodeDef {
///     name: "abs".into(),
///     op: "Abs".into(),
///     input: vec!["x".into()],
///     ..Default::default()
/// };
/// node.attr.insert("T".into(), AttrValue { value: Some(Value::Type(DataType::DtFloat as i32)) });
/// validate_node_def(&node, op_def).unwrap();
///
/// node.input.push("y".into());
/// let err = validate_node_def(&node, op_def).unwrap_err();
/// assert!(matches!(err, NodeDefError::InputCount { expected: 1, found: 2, .. }));
/// assert_eq!(
///     err.to_string(),
///     "NodeDef 'abs' (op 'Abs') has 2 data input(s) but the op expects 1: x: float"
/// );
/// ```
pub fn validate_node_def(node: &NodeDef, op_def: &OpDef) -> Result<(), NodeDefError> {
    let cx = Cx { node, op_def };
    if let Some(reason) = input::node_name_problem(&node.name) {
        return Err(NodeDefError::InvalidNodeName {
            node: node.name.clone(),
            reason,
        });
    }
    if node.op != op_def.name {
        return Err(NodeDefError::OpMismatch {
            node: node.name.clone(),
            node_op: node.op.clone(),
            op: op_def.name.clone(),
        });
    }

    // Inputs: syntax, and control inputs last.
    let mut num_data_inputs = 0;
    let mut first_control: Option<usize> = None;
    for (index, text) in node.input.iter().enumerate() {
        let parsed = parse_input(text).map_err(|source| NodeDefError::MalformedInput {
            node: node.name.clone(),
            op: node.op.clone(),
            index,
            source: Box::new(source),
        })?;
        if parsed.is_control {
            first_control.get_or_insert(index);
        } else if let Some(control_index) = first_control {
            return Err(NodeDefError::DataInputAfterControl {
                node: node.name.clone(),
                op: node.op.clone(),
                index,
                input: text.clone(),
                control_index,
                control: node.input[control_index].clone(),
            });
        } else {
            num_data_inputs += 1;
        }
    }

    // Attrs the node sets: known to the op and valid.
    for (name, value) in &node.attr {
        if name.starts_with('_') {
            continue;
        }
        let Some(attr_def) = op_def.attr.iter().find(|a| &a.name == name) else {
            return Err(NodeDefError::UnknownAttr {
                node: node.name.clone(),
                op: node.op.clone(),
                attr: name.clone(),
                suggestion: closest_attr(op_def, name),
            });
        };
        registry_spec::validate_attr_value(value, attr_def).map_err(|m| cx.invalid(name, m))?;
    }
    // Attrs the op defines: all set.
    if let Some(missing) = op_def
        .attr
        .iter()
        .find(|a| !node.attr.contains_key(&a.name))
    {
        return Err(NodeDefError::MissingAttr {
            node: node.name.clone(),
            op: node.op.clone(),
            attr: missing.name.clone(),
            has_default: missing.default_value.is_some(),
        });
    }

    // The number of data inputs.
    let mut input_types = Vec::new();
    let mut signature = Vec::new();
    for arg in &op_def.input_arg {
        let types = cx.arg_types(arg, "input")?;
        signature.push(format!("{}: {}", arg.name, describe_types(arg, &types)));
        input_types.extend(types);
    }
    if input_types.len() != num_data_inputs {
        return Err(NodeDefError::InputCount {
            node: node.name.clone(),
            op: node.op.clone(),
            expected: input_types.len(),
            found: num_data_inputs,
            signature: if signature.is_empty() {
                "no inputs".to_owned()
            } else {
                signature.join(", ")
            },
        });
    }
    Ok(())
}

/// The dtype of every input and every output of `node` (TF's
/// `InOutTypesForNode`), in order: a fixed arg type; a `type_attr`'s value;
/// `N` copies for an `N * T` arg; the list of a `type_list_attr`; and the
/// reference type (`float_ref`, ...) for `Ref(...)` args.
///
/// Attrs the node does not set are taken from the op's defaults, so this
/// also works before [`add_defaults_to_node_def`].
///
/// ```
/// # use opreg_standard_ops as _; // links the standard ops
/// use registry_core::OpRegistry;
/// use registry_core::node_def::in_out_types_for_node;
/// use registry_core::proto::{AttrValue, DataType, NodeDef, attr_value::Value};
///
/// let op_def = OpRegistry::global().look_up_op_def("AddN").unwrap();
/// let mut node = NodeDef { name: "sum".into(), op: "AddN".into(), ..Default::default() };
/// node.attr.insert("N".into(), AttrValue { value: Some(Value::I(3)) });
/// node.attr.insert("T".into(), AttrValue { value: Some(Value::Type(DataType::DtHalf as i32)) });
/// let (inputs, outputs) = in_out_types_for_node(&node, op_def).unwrap();
/// assert_eq!(inputs, [DataType::DtHalf; 3]);
/// assert_eq!(outputs, [DataType::DtHalf]);
/// ```
pub fn in_out_types_for_node(
    node: &NodeDef,
    op_def: &OpDef,
) -> Result<(Vec<DataType>, Vec<DataType>), NodeDefError> {
    let cx = Cx { node, op_def };
    let mut inputs = Vec::new();
    for arg in &op_def.input_arg {
        inputs.extend(cx.arg_types(arg, "input")?);
    }
    let mut outputs = Vec::new();
    for arg in &op_def.output_arg {
        outputs.extend(cx.arg_types(arg, "output")?);
    }
    Ok((inputs, outputs))
}

/// Which input and output indices of `node` belong to which arg of
/// `op_def` (TF's `NameRangesForNode`): `(inputs, outputs)`, each mapping an
/// arg name to a range of indices. Only counts matter here (`N` for `N * T`,
/// the list length for type lists, else 1), so type attrs need not be set.
///
/// ```
/// # use opreg_standard_ops as _; // links the standard ops
/// use registry_core::OpRegistry;
/// use registry_core::node_def::name_ranges_for_node;
/// use registry_core::proto::{AttrValue, NodeDef, attr_value::Value};
///
/// let op_def = OpRegistry::global().look_up_op_def("ConcatV2").unwrap();
/// let mut node = NodeDef { name: "concat".into(), op: "ConcatV2".into(), ..Default::default() };
/// node.attr.insert("N".into(), AttrValue { value: Some(Value::I(3)) });
/// let (inputs, outputs) = name_ranges_for_node(&node, op_def).unwrap();
/// assert_eq!(inputs["values"], 0..3);
/// assert_eq!(inputs["axis"], 3..4);
/// assert_eq!(outputs["output"], 0..1);
/// ```
pub fn name_ranges_for_node(
    node: &NodeDef,
    op_def: &OpDef,
) -> Result<(NameRangeMap, NameRangeMap), NodeDefError> {
    let cx = Cx { node, op_def };
    let ranges = |args: &[ArgDef]| -> Result<NameRangeMap, NodeDefError> {
        let mut map = NameRangeMap::new();
        let mut start = 0;
        for arg in args {
            let end = start + cx.arg_len(arg)?;
            map.insert(arg.name.clone(), start..end);
            start = end;
        }
        Ok(map)
    };
    Ok((ranges(&op_def.input_arg)?, ranges(&op_def.output_arg)?))
}

/// The input ranges of [`name_ranges_for_node`].
///
/// ```
/// # use opreg_standard_ops as _; // links the standard ops
/// use registry_core::OpRegistry;
/// use registry_core::node_def::input_ranges;
/// use registry_core::proto::NodeDef;
///
/// let op_def = OpRegistry::global().look_up_op_def("MatMul").unwrap();
/// let node = NodeDef { name: "mm".into(), op: "MatMul".into(), ..Default::default() };
/// let ranges = input_ranges(&node, op_def).unwrap();
/// assert_eq!((ranges["a"].clone(), ranges["b"].clone()), (0..1, 1..2));
/// ```
pub fn input_ranges(node: &NodeDef, op_def: &OpDef) -> Result<NameRangeMap, NodeDefError> {
    name_ranges_for_node(node, op_def).map(|(inputs, _)| inputs)
}

/// The output ranges of [`name_ranges_for_node`].
///
/// ```
/// # use opreg_standard_ops as _; // links the standard ops
/// use registry_core::OpRegistry;
/// use registry_core::node_def::output_ranges;
/// use registry_core::proto::NodeDef;
///
/// let op_def = OpRegistry::global().look_up_op_def("FusedBatchNormV3").unwrap();
/// let node = NodeDef { name: "bn".into(), op: "FusedBatchNormV3".into(), ..Default::default() };
/// let ranges = output_ranges(&node, op_def).unwrap();
/// assert_eq!(ranges["y"], 0..1);
/// assert_eq!(ranges.len(), 6);
/// ```
pub fn output_ranges(node: &NodeDef, op_def: &OpDef) -> Result<NameRangeMap, NodeDefError> {
    name_ranges_for_node(node, op_def).map(|(_, outputs)| outputs)
}

/// A node and its OpDef, for building errors and reading attrs.
struct Cx<'a> {
    node: &'a NodeDef,
    op_def: &'a OpDef,
}

impl<'a> Cx<'a> {
    fn invalid(&self, attr: &str, message: impl Into<String>) -> NodeDefError {
        NodeDefError::InvalidAttr {
            node: self.node.name.clone(),
            op: self.op_def.name.clone(),
            attr: attr.to_owned(),
            message: message.into(),
        }
    }

    /// The node's value of `name`, else the op's default.
    fn attr(&self, name: &str) -> Result<&'a AttrValue, NodeDefError> {
        let default = || {
            self.op_def
                .attr
                .iter()
                .find(|a| a.name == name)
                .and_then(|a| a.default_value.as_ref())
        };
        self.node
            .attr
            .get(name)
            .or_else(default)
            .ok_or_else(|| NodeDefError::MissingAttr {
                node: self.node.name.clone(),
                op: self.op_def.name.clone(),
                attr: name.to_owned(),
                has_default: false,
            })
    }

    fn data_type(&self, attr: &str, dt: i32) -> Result<DataType, NodeDefError> {
        match DataType::try_from(dt) {
            Ok(DataType::DtInvalid) => Err(self.invalid(attr, "the type is DT_INVALID")),
            Ok(t) => Ok(t),
            Err(_) => Err(self.invalid(attr, format!("{dt} is not a DataType enum value"))),
        }
    }

    fn type_attr(&self, name: &str) -> Result<DataType, NodeDefError> {
        match &self.attr(name)?.value {
            Some(Value::Type(dt)) => self.data_type(name, *dt),
            other => Err(self.invalid(name, format!("expected a type, got {}", kind(other)))),
        }
    }

    fn type_list_attr(&self, name: &str) -> Result<Vec<DataType>, NodeDefError> {
        match &self.attr(name)?.value {
            Some(Value::List(list)) => list
                .r#type
                .iter()
                .map(|dt| self.data_type(name, *dt))
                .collect(),
            other => Err(self.invalid(name, format!("expected a list(type), got {}", kind(other)))),
        }
    }

    fn number_attr(&self, name: &str) -> Result<usize, NodeDefError> {
        match &self.attr(name)?.value {
            Some(Value::I(n)) if *n > MAX_LIST_ARG_LEN as i64 => Err(self.invalid(
                name,
                format!(
                    "{n} inputs or outputs are more than the {MAX_LIST_ARG_LEN} one argument may have"
                ),
            )),
            Some(Value::I(n)) => usize::try_from(*n).map_err(|_| {
                self.invalid(
                    name,
                    format!("the number of inputs or outputs must not be negative, got {n}"),
                )
            }),
            other => Err(self.invalid(name, format!("expected an int, got {}", kind(other)))),
        }
    }

    /// How many tensors `arg` stands for.
    fn arg_len(&self, arg: &ArgDef) -> Result<usize, NodeDefError> {
        if !arg.number_attr.is_empty() {
            self.number_attr(&arg.number_attr)
        } else if !arg.type_list_attr.is_empty() {
            self.type_list_attr(&arg.type_list_attr).map(|l| l.len())
        } else {
            Ok(1)
        }
    }

    /// The dtypes of the tensors `arg` stands for.
    fn arg_types(
        &self,
        arg: &ArgDef,
        direction: &'static str,
    ) -> Result<Vec<DataType>, NodeDefError> {
        let mut types = if !arg.type_list_attr.is_empty() {
            self.type_list_attr(&arg.type_list_attr)?
        } else {
            let dtype = if !arg.type_attr.is_empty() {
                self.type_attr(&arg.type_attr)?
            } else if arg.r#type != DataType::DtInvalid as i32 {
                self.data_type(&arg.name, arg.r#type)?
            } else {
                return Err(NodeDefError::UntypedArg {
                    node: self.node.name.clone(),
                    op: self.op_def.name.clone(),
                    direction,
                    arg: arg.name.clone(),
                });
            };
            let count = if arg.number_attr.is_empty() {
                1
            } else {
                self.number_attr(&arg.number_attr)?
            };
            vec![dtype; count]
        };
        if arg.is_ref {
            for t in &mut types {
                *t = t.to_ref();
            }
        }
        Ok(types)
    }
}

/// The most tensors one `N * T` argument may stand for: a node asking for
/// more (an attr of 2^40, say) is refused before any per-tensor list is
/// allocated.
pub const MAX_LIST_ARG_LEN: usize = 1 << 20;

/// `float`, `3 x float`, `[float, int32]`.
fn describe_types(arg: &ArgDef, types: &[DataType]) -> String {
    let names = || types.iter().map(|t| t.type_name()).collect::<Vec<_>>();
    if !arg.type_list_attr.is_empty() {
        format!("[{}]", names().join(", "))
    } else if !arg.number_attr.is_empty() {
        match types.first() {
            Some(t) => format!("{} x {}", types.len(), t.type_name()),
            None => "0 tensors".to_owned(),
        }
    } else {
        names().join(", ")
    }
}

/// The kind of an attr value, for messages.
fn kind(value: &Option<Value>) -> &'static str {
    match value {
        None => "no value",
        Some(Value::S(_)) => "a string",
        Some(Value::I(_)) => "an int",
        Some(Value::F(_)) => "a float",
        Some(Value::B(_)) => "a bool",
        Some(Value::Type(_)) => "a type",
        Some(Value::Shape(_)) => "a shape",
        Some(Value::Tensor(_)) => "a tensor",
        Some(Value::List(_)) => "a list",
        Some(Value::Func(_)) => "a func",
        Some(Value::Placeholder(_)) => "a placeholder",
    }
}

/// The op attr whose name is closest to `name`, if close enough to suggest.
fn closest_attr(op_def: &OpDef, name: &str) -> Option<String> {
    registry_spec::suggest::nearest(name, op_def.attr.iter().map(|a| a.name.as_str()))
        .map(str::to_owned)
}

/// TF's `TypesCompatible`: equal, or a reference type feeding its base type.
pub fn types_compatible(expected: DataType, actual: DataType) -> bool {
    expected == actual || (actual.is_ref() && actual.base() == expected)
}

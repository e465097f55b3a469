//! [`NodeDefError`]: what is wrong with a NodeDef.

use super::input::InputParseError;

/// What is wrong with a NodeDef, as found by
/// [`validate_node_def`](super::validate_node_def),
/// [`in_out_types_for_node`](super::in_out_types_for_node) and
/// [`name_ranges_for_node`](super::name_ranges_for_node).
///
/// Every message names the node, and the op, attr or input as relevant:
///
/// ```
/// use registry_core::node_def::NodeDefError;
///
/// let err = NodeDefError::MissingAttr {
///     node: "sum".into(),
///     op: "AddN".into(),
///     attr: "N".into(),
///     has_default: false,
/// };
/// assert_eq!(err.to_string(), "NodeDef 'sum' (op 'AddN') is missing attr 'N'");
/// assert_eq!(err.node(), "sum");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NodeDefError {
    /// The node's name breaks TF's rule `[A-Za-z0-9.][A-Za-z0-9_./>-]*`.
    #[error("NodeDef '{node}' has an invalid name: {reason}")]
    InvalidNodeName {
        /// The node's name.
        node: String,
        /// Which rule it breaks.
        reason: String,
    },
    /// The node's `op` is not the OpDef it is checked against.
    #[error("NodeDef '{node}' has op '{node_op}' but was checked against OpDef '{op}'")]
    OpMismatch {
        /// The node's name.
        node: String,
        /// The node's `op` field.
        node_op: String,
        /// The OpDef's name.
        op: String,
    },
    /// An input string is malformed.
    #[error("NodeDef '{node}' (op '{op}'): input {index} is malformed: {source}")]
    MalformedInput {
        /// The node's name.
        node: String,
        /// The node's op.
        op: String,
        /// The index of the input in `NodeDef.input`.
        index: usize,
        /// Why it is malformed (boxed to keep the error small).
        #[source]
        source: Box<InputParseError>,
    },
    /// A data input follows a control input.
    #[error(
        "NodeDef '{node}' (op '{op}'): data input {index} '{input}' comes after control \
         input {control_index} '{control}'; control inputs must follow all data inputs"
    )]
    DataInputAfterControl {
        /// The node's name.
        node: String,
        /// The node's op.
        op: String,
        /// The index of the data input.
        index: usize,
        /// The data input string.
        input: String,
        /// The index of the first control input.
        control_index: usize,
        /// The control input string.
        control: String,
    },
    /// The node has an attr its op does not define (attrs whose name starts
    /// with `_` are exempt).
    #[error(
        "NodeDef '{node}' (op '{op}') has attr '{attr}', which op '{op}' does not define{}",
        suggestion.as_ref().map(|s| format!("; did you mean '{s}'?")).unwrap_or_default()
    )]
    UnknownAttr {
        /// The node's name.
        node: String,
        /// The node's op.
        op: String,
        /// The unknown attr.
        attr: String,
        /// The op's attr with the closest name, when one is close.
        suggestion: Option<String>,
    },
    /// An attr the op defines is missing from the node.
    #[error(
        "NodeDef '{node}' (op '{op}') is missing attr '{attr}'{}",
        if *has_default { " (the op gives it a default: call add_defaults_to_node_def first)" } else { "" }
    )]
    MissingAttr {
        /// The node's name.
        node: String,
        /// The node's op.
        op: String,
        /// The missing attr.
        attr: String,
        /// True if the op gives the attr a default value.
        has_default: bool,
    },
    /// An attr's value is of the wrong kind, or breaks the attr's minimum or
    /// allowed values.
    #[error("NodeDef '{node}' (op '{op}'): attr '{attr}': {message}")]
    InvalidAttr {
        /// The node's name.
        node: String,
        /// The node's op.
        op: String,
        /// The attr.
        attr: String,
        /// What is wrong with its value.
        message: String,
    },
    /// The number of data inputs is not what the op's input args imply.
    #[error(
        "NodeDef '{node}' (op '{op}') has {found} data input(s) but the op expects \
         {expected}: {signature}"
    )]
    InputCount {
        /// The node's name.
        node: String,
        /// The node's op.
        op: String,
        /// How many data inputs the op's args imply.
        expected: usize,
        /// How many data inputs the node has.
        found: usize,
        /// The expected inputs, e.g. `values: 3 x float, axis: int32`.
        signature: String,
    },
    /// An arg of the OpDef has no type source (a malformed OpDef).
    #[error(
        "NodeDef '{node}' (op '{op}'): {direction} arg '{arg}' has neither a type, \
         a type_attr nor a type_list_attr"
    )]
    UntypedArg {
        /// The node's name.
        node: String,
        /// The node's op.
        op: String,
        /// `input` or `output`.
        direction: &'static str,
        /// The arg's name.
        arg: String,
    },
}

impl NodeDefError {
    /// The name of the node the error is about.
    pub fn node(&self) -> &str {
        match self {
            NodeDefError::InvalidNodeName { node, .. }
            | NodeDefError::OpMismatch { node, .. }
            | NodeDefError::MalformedInput { node, .. }
            | NodeDefError::DataInputAfterControl { node, .. }
            | NodeDefError::UnknownAttr { node, .. }
            | NodeDefError::MissingAttr { node, .. }
            | NodeDefError::InvalidAttr { node, .. }
            | NodeDefError::InputCount { node, .. }
            | NodeDefError::UntypedArg { node, .. } => node,
        }
    }
}

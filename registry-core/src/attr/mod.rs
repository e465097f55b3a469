//! Reading a node's attrs: the one mechanism kernels (at construction),
//! shape functions, NodeDef checks and the executor use (TF's
//! `GetNodeAttr` and `AttrSlice`).
//!
//! [`NodeAttrs`] is a node and its OpDef: an attr the node leaves out takes
//! the OpDef's default. [`NodeAttrs::get`] converts a value to any
//! [`FromAttrValue`] type (`i64`, `bool`, `&str`, `&[i64]`, `DataType`,
//! `Vec<DataType>`, [`Tensor`](crate::tensor::Tensor), ...) and says, in an [`AttrError`], which
//! node, op and attr were wrong and how. Kernels see the same error as a
//! `KernelError::Attr` (through `OpKernelConstruction::attr`), shape
//! functions as a `ShapeError` placed in the node (through
//! `InferenceContext::attr`).
//!
//! ```
//! use opreg_standard_ops::MatMul;
//! use registry_core::Op;
//! use registry_core::attr::NodeAttrs;
//! use registry_core::proto::NodeDef;
//!
//! let node = NodeDef { name: "mm".into(), op: "MatMul".into(), attr: [("transpose_a".into(), true.into())].into(), ..Default::default() };
//! let op_def = MatMul::op_def();
//! let attrs = NodeAttrs::new(&node, &op_def);
//! assert!(attrs.get::<bool>("transpose_a").unwrap());
//! assert!(!attrs.get::<bool>("transpose_b").unwrap()); // the OpDef's default
//! let err = attrs.get::<i64>("transpose_a").unwrap_err();
//! assert_eq!(err.to_string(), "attr 'transpose_a' of node 'mm' (op 'MatMul'): expected an int, got a bool");
//! ```

pub(crate) mod summarize;
mod value;

use opreg_proto::{AttrValue, NodeDef, OpDef};

pub use summarize::{summarize_attr_value, summarize_node_attrs, summarize_shape};
pub use value::{AttrValueError, FromAttrValue, attr_value_kind};

/// A node's attrs, with its OpDef's defaults for those it leaves out.
#[derive(Debug, Clone, Copy)]
pub struct NodeAttrs<'a> {
    node: &'a NodeDef,
    op_def: &'a OpDef,
}

impl<'a> NodeAttrs<'a> {
    /// The attrs of `node`, an instance of `op_def`.
    pub fn new(node: &'a NodeDef, op_def: &'a OpDef) -> Self {
        Self { node, op_def }
    }

    /// The node.
    pub fn node(&self) -> &'a NodeDef {
        self.node
    }

    /// The OpDef.
    pub fn op_def(&self) -> &'a OpDef {
        self.op_def
    }

    /// Attr `name`'s value: the node's, else the OpDef's default.
    pub fn value(&self, name: &str) -> Option<&'a AttrValue> {
        self.node.attr.get(name).or_else(|| {
            self.op_def
                .attr
                .iter()
                .find(|a| a.name == name)
                .and_then(|a| a.default_value.as_ref())
        })
    }

    /// Whether attr `name` has a value (the node's or a default).
    pub fn has(&self, name: &str) -> bool {
        self.value(name).is_some()
    }

    /// Attr `name` converted to `T`; an error names the node, op and attr
    /// and says what was missing, of the wrong kind or invalid.
    pub fn get<T: FromAttrValue<'a>>(&self, name: &str) -> Result<T, AttrError> {
        let value = self
            .value(name)
            .ok_or_else(|| self.error(name, AttrProblem::Missing))?;
        T::from_attr_value(value).map_err(|e| self.error(name, AttrProblem::Value(e)))
    }

    /// Like [`get`](Self::get), but `default` when the attr has no value
    /// at all (for attrs that older OpDefs lack).
    pub fn get_or<T: FromAttrValue<'a>>(&self, name: &str, default: T) -> Result<T, AttrError> {
        match self.value(name) {
            None => Ok(default),
            Some(_) => self.get(name),
        }
    }

    /// An [`AttrError`] for attr `name` of this node.
    pub fn error(&self, name: &str, problem: AttrProblem) -> AttrError {
        AttrError {
            node: self.node.name.clone(),
            op: self.node.op.clone(),
            attr: name.to_owned(),
            problem,
        }
    }

    /// An [`AttrError`] saying attr `name`'s value is invalid: `message`.
    pub fn invalid(&self, name: &str, message: impl Into<String>) -> AttrError {
        self.error(
            name,
            AttrProblem::Value(AttrValueError::Invalid(message.into())),
        )
    }
}

/// What is wrong with an attr.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AttrProblem {
    /// The node does not set it and the OpDef has no default.
    #[error("the node does not set it and the op has no default")]
    Missing,
    /// Its value is of the wrong kind or invalid.
    #[error(transparent)]
    Value(#[from] AttrValueError),
}

/// An attr of a node that could not be read as asked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("attr '{attr}' of node '{node}' (op '{op}'): {problem}")]
pub struct AttrError {
    /// The node's name.
    pub node: String,
    /// The node's op.
    pub op: String,
    /// The attr.
    pub attr: String,
    /// What is wrong.
    pub problem: AttrProblem,
}

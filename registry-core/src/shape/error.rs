//! [`ShapeError`]: why shape inference failed, with TensorFlow's wording.

use std::fmt;

use super::Shape;
use crate::node_def::NodeDefError;

/// Why shape inference failed.
///
/// The shape algebra ([`Shape`], [`Dim`](super::Dim)) and shape functions
/// return the plain variants (`Rank`, `DimMismatch`, ...). The
/// [`InferenceContext`](super::InferenceContext) wraps them in
/// [`ShapeError::InNode`], which names the node, its op, attrs and inputs,
/// the input concerned if one is, and every input shape, as TensorFlow's
/// shape refiner does:
///
/// ```text
/// Shape must be rank 2 but is rank 3 for input 0 ('a') of '{{node mm}} = MatMul[T=DT_FLOAT,
/// transpose_a=false, transpose_b=false](x, w)' with input shapes: [2,3,4], [3,4].
/// ```
///
/// [`kind`](Self::kind) gives the underlying plain error either way.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ShapeError {
    /// A shape does not have the rank required (TF's `WithRank`).
    #[error("Shape must be rank {expected} but is rank {found}")]
    Rank {
        /// The rank required.
        expected: usize,
        /// The shape's rank.
        found: usize,
    },
    /// A rank read from a value is above [`Shape::MAX_RANK`].
    #[error("Shape must have rank at most {max} to be inferred, but a rank of {rank} is required", max = Shape::MAX_RANK)]
    RankTooLarge {
        /// The rank asked for.
        rank: usize,
    },
    /// A shape's rank is below the minimum (TF's `WithRankAtLeast`).
    #[error("Shape must be at least rank {min} but is rank {found}")]
    RankAtLeast {
        /// The minimum rank.
        min: usize,
        /// The shape's rank.
        found: usize,
    },
    /// A shape's rank is above the maximum (TF's `WithRankAtMost`).
    #[error("Shape must be at most rank {max} but is rank {found}")]
    RankAtMost {
        /// The maximum rank.
        max: usize,
        /// The shape's rank.
        found: usize,
    },
    /// Two shapes that must be equal have different ranks (TF's `Merge`).
    #[error("Shapes must be equal rank, but are {a} and {b}")]
    RankMismatch {
        /// The first shape's rank.
        a: usize,
        /// The second shape's rank.
        b: usize,
    },
    /// Two dimensions that must be equal are not (TF's `Merge` of dims).
    #[error("Dimensions must be equal, but are {a} and {b}")]
    DimMismatch {
        /// The first size.
        a: i64,
        /// The second size.
        b: i64,
    },
    /// Two shapes that must be equal differ in a dimension.
    #[error(
        "Dimension {index} in both shapes must be equal, but are {a} and {b}. \
         Shapes are {shape_a} and {shape_b}."
    )]
    ShapeMismatch {
        /// The dimension index.
        index: usize,
        /// Its size in the first shape.
        a: i64,
        /// Its size in the second shape.
        b: i64,
        /// The first shape.
        shape_a: Shape,
        /// The second shape.
        shape_b: Shape,
    },
    /// Two shapes cannot be broadcast against each other.
    #[error(
        "Dimensions must be equal, but are {a} and {b}: shapes {shape_a} and {shape_b} \
         cannot be broadcast (dimension {index} of the result)"
    )]
    Broadcast {
        /// The index of the dimension in the broadcast result.
        index: usize,
        /// The size in the first shape.
        a: i64,
        /// The size in the second shape.
        b: i64,
        /// The first shape.
        shape_a: Shape,
        /// The second shape.
        shape_b: Shape,
    },
    /// A dimension does not have the size required (TF's `WithValue`).
    #[error("Dimension must be {expected} but is {found}")]
    DimValue {
        /// The size required.
        expected: i64,
        /// The dimension's size.
        found: i64,
    },
    /// Dimension arithmetic overflowed `i64`.
    #[error("Dimension size overflow computing {a} {op} {b}")]
    DimOverflow {
        /// The first operand.
        a: i64,
        /// The operation (`+` or `*`).
        op: char,
        /// The second operand.
        b: i64,
    },
    /// A subtraction of dimensions went below zero (TF's `Subtract`).
    #[error("Negative dimension size caused by subtracting {b} from {a}")]
    NegativeDim {
        /// The minuend.
        a: i64,
        /// The subtrahend.
        b: i64,
    },
    /// A division of dimensions by a size that is not positive.
    #[error("Divisor must be positive but is {divisor}")]
    NonPositiveDivisor {
        /// The divisor.
        divisor: i64,
    },
    /// A division of dimensions that must be exact has a remainder.
    #[error("Dimension size must be evenly divisible by {divisor} but is {dividend}")]
    NotEvenlyDivisible {
        /// The dividend.
        dividend: i64,
        /// The divisor.
        divisor: i64,
    },
    /// A dimension index is out of range for a shape's rank.
    #[error("Dimension index {index} is out of range for a shape of rank {rank}")]
    DimIndex {
        /// The index (negative: from the end).
        index: i64,
        /// The shape's rank.
        rank: usize,
    },
    /// The bounds of a subshape are out of range (TF's `Subshape`).
    #[error("Subshape [{start}, {end}) is out of bounds for a shape of rank {rank}")]
    Subshape {
        /// The start given (negative: from the end).
        start: i64,
        /// The end given (negative: from the end).
        end: i64,
        /// The shape's rank.
        rank: usize,
    },
    /// A size given for a shape is below -1 (a shape proto, or a tensor
    /// used as a shape).
    #[error("Dimension {index} must be >= -1, but is {value}")]
    InvalidDim {
        /// The position of the size.
        index: usize,
        /// The size.
        value: i64,
    },
    /// An axis (or dimension index given as a value) is out of range.
    #[error("Invalid {what} {value}: it must be in the range [{min}, {max})")]
    AxisOutOfRange {
        /// What the value is (`reduction dimension`, `axis`, ...).
        what: &'static str,
        /// The value.
        value: i64,
        /// The smallest valid value.
        min: i64,
        /// One past the largest valid value.
        max: i64,
    },
    /// A value that must not be negative is (a padding, a depth, ...).
    #[error("{what} must be non-negative, but is {value}")]
    Negative {
        /// What the value is.
        what: &'static str,
        /// The value.
        value: i64,
    },
    /// Reshape: the element counts of the input and the new shape differ.
    #[error(
        "Cannot reshape a tensor with {elements} elements to shape {shape} \
         ({shape_elements} elements)"
    )]
    Reshape {
        /// The input's element count.
        elements: i64,
        /// The shape asked for.
        shape: Shape,
        /// Its element count.
        shape_elements: i64,
    },
    /// Reshape: the dimension to infer (-1) cannot be, because the known
    /// dimensions of the new shape do not divide the element count.
    #[error(
        "Cannot reshape a tensor with {elements} elements to shape {shape}: \
         the known dimensions hold {known} elements, which does not divide {elements}"
    )]
    ReshapeNotDivisible {
        /// The input's element count.
        elements: i64,
        /// The shape asked for (with the dimension to infer unknown).
        shape: Shape,
        /// The product of its known dimensions.
        known: i64,
    },
    /// Squeeze: a dimension asked to be squeezed is not 1.
    #[error("Can not squeeze dim[{index}], expected a dimension of 1, got {size}")]
    Squeeze {
        /// The dimension index.
        index: usize,
        /// Its size.
        size: i64,
    },
    /// A strided slice spec (begin, end, strides and masks) is invalid
    /// (TF's `ValidateStridedSliceOp`).
    #[error("{message}")]
    StridedSlice {
        /// TF's message.
        message: String,
    },
    /// Any other invalid argument (TF's `errors::InvalidArgument`).
    #[error("{message}")]
    InvalidArgument {
        /// The message.
        message: String,
    },
    /// An attr is neither set on the node nor has a default in the OpDef.
    #[error("Attr '{attr}' is missing: the node does not set it and the op has no default")]
    MissingAttr {
        /// The attr's name.
        attr: String,
    },
    /// An attr holds another kind of value than the one asked for.
    #[error("Attr '{attr}' has the wrong kind: expected {expected}, found {found}")]
    AttrKind {
        /// The attr's name.
        attr: String,
        /// The kind asked for (`int`, `list(int)`, `type`, ...).
        expected: &'static str,
        /// The kind it holds.
        found: &'static str,
    },
    /// An attr's value is not valid for the shape function.
    #[error("Attr '{attr}' is invalid: {message}")]
    InvalidAttr {
        /// The attr's name.
        attr: String,
        /// Why.
        message: String,
    },
    /// The constant value given for an input cannot be used (wrong dtype or
    /// shape).
    #[error("The value of input {input} is invalid: {message}")]
    InvalidConstant {
        /// The input index.
        input: usize,
        /// Why.
        message: String,
    },
    /// A shape function asked for an input the node does not have.
    #[error("Input index {index} is out of range: the node has {count} inputs")]
    InputIndex {
        /// The index asked for.
        index: usize,
        /// The number of inputs.
        count: usize,
    },
    /// A shape function set an output the node does not have.
    #[error("Output index {index} is out of range: the node has {count} outputs")]
    OutputIndex {
        /// The index given.
        index: usize,
        /// The number of outputs.
        count: usize,
    },
    /// A plain error, placed in its node (see the type's docs).
    #[error("{0}")]
    InNode(Box<NodeShapeError>),
    /// The op has no shape function.
    #[error("No shape inference function exists for op '{op}' (node '{node}')")]
    NoShapeFn {
        /// The node's name.
        node: String,
        /// The op's name.
        op: String,
    },
    /// The NodeDef does not fit its OpDef (wrong op, or attrs that make
    /// the number of inputs or outputs unknowable).
    #[error(transparent)]
    NodeDef(#[from] NodeDefError),
    /// The number of input shapes (or input constants) given is not the
    /// node's number of inputs.
    #[error("Node '{node}' (op '{op}') has {expected} inputs, but {found} input {what} were given")]
    InputCount {
        /// The node's name.
        node: String,
        /// The op's name.
        op: String,
        /// `shapes` or `constants`.
        what: &'static str,
        /// The node's number of inputs.
        expected: usize,
        /// The number given.
        found: usize,
    },
    /// The shape function did not set one of the node's outputs.
    #[error(
        "The shape function of op '{op}' did not set output {index} ('{arg}') of node '{node}'"
    )]
    OutputNotSet {
        /// The node's name.
        node: String,
        /// The op's name.
        op: String,
        /// The output index.
        index: usize,
        /// The name of the output arg it belongs to.
        arg: String,
    },
}

impl ShapeError {
    /// The plain error: for [`ShapeError::InNode`] the error it wraps,
    /// otherwise `self`.
    ///
    /// ```
    /// use registry_core::shape::ShapeError;
    ///
    /// let err = ShapeError::Rank { expected: 2, found: 3 };
    /// assert!(matches!(err.kind(), ShapeError::Rank { expected: 2, found: 3 }));
    /// ```
    pub fn kind(&self) -> &ShapeError {
        match self {
            ShapeError::InNode(inner) => inner.error.kind(),
            other => other,
        }
    }

    /// The node the error is placed in, if it is.
    pub fn node(&self) -> Option<&str> {
        match self {
            ShapeError::InNode(inner) => Some(&inner.node),
            ShapeError::NoShapeFn { node, .. }
            | ShapeError::InputCount { node, .. }
            | ShapeError::OutputNotSet { node, .. } => Some(node),
            ShapeError::NodeDef(e) => Some(e.node()),
            _ => None,
        }
    }

    /// The input the error is about, if the shape function said.
    pub fn input(&self) -> Option<&InputLabel> {
        match self {
            ShapeError::InNode(inner) => inner.input.as_ref(),
            _ => None,
        }
    }

    /// An [`ShapeError::InvalidArgument`] with this message.
    pub fn invalid_argument(message: impl Into<String>) -> ShapeError {
        ShapeError::InvalidArgument {
            message: message.into(),
        }
    }
}

/// An input of a node, for messages: its index and the input arg it
/// belongs to (`values`, or `values[1]` for the second of a list).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputLabel {
    /// The input index.
    pub index: usize,
    /// The arg name, with the position in the arg for list args.
    pub arg: String,
}

impl fmt::Display for InputLabel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "input {} ('{}')", self.index, self.arg)
    }
}

/// A shape error placed in its node: what [`ShapeError::InNode`] holds.
///
/// Displayed as TensorFlow's shape refiner does: the error, the input
/// concerned (if any), the node's summary (`{{node name}} =
/// Op[attrs](inputs)`) and its input shapes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeShapeError {
    /// The node's name.
    pub node: String,
    /// The op's name.
    pub op: String,
    /// TF's `SummarizeNodeDef` of the node, defaults included.
    pub summary: String,
    /// The input concerned, if any.
    pub input: Option<InputLabel>,
    /// The shapes of all inputs.
    pub input_shapes: Vec<Shape>,
    /// The plain error.
    pub error: ShapeError,
}

impl fmt::Display for NodeShapeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.error)?;
        match &self.input {
            Some(input) => write!(f, " for {input} of '{}'", self.summary)?,
            None => write!(f, " for '{}'", self.summary)?,
        }
        if !self.input_shapes.is_empty() {
            f.write_str(" with input shapes: ")?;
            for (i, s) in self.input_shapes.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                write!(f, "{s}")?;
            }
        }
        f.write_str(".")
    }
}

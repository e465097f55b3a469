//! [`InferenceContext`]: what a shape function reads (the node, its attrs,
//! input shapes and constant inputs) and writes (output shapes).

use std::ops::Range;

use opreg_proto::op_def::ArgDef;
use opreg_proto::{AttrValue, NodeDef, OpDef};

use super::error::{InputLabel, NodeShapeError};
use super::summary::summarize_node;
use super::{Dim, Shape, ShapeError, ShapeFn};
use crate::attr::{AttrProblem, AttrValueError, FromAttrValue, NodeAttrs};
use crate::node_def::{NodeDefError, name_ranges_for_node};
use crate::tensor::Tensor;

/// One input or output arg of the op and the indices it covers.
#[derive(Debug, Clone)]
struct ArgRange<'a> {
    arg: &'a ArgDef,
    range: Range<usize>,
}

/// The state of shape inference for one node (TF's
/// `shape_inference::InferenceContext`).
///
/// A shape function reads the node's attrs (the op's defaults fill in those
/// the node leaves out), the shapes of its inputs and, where known, the
/// values of constant inputs, and sets the shape of every output.
///
/// Helpers named after TF's (`input_with_rank`, `make_shape_from_shape_tensor`,
/// ...) return errors already placed in the node ([`ShapeError::InNode`]);
/// plain errors returned by a shape function are placed there by
/// [`run`](Self::run).
///
/// ```
/// # use opreg_standard_ops as _; // links the standard ops
/// use registry_core::OpRegistry;
/// use registry_core::proto::NodeDef;
/// use registry_core::shape::{InferenceContext, Shape};
///
/// let op = OpRegistry::global().look_up("MatMul").unwrap();
/// let node = NodeDef { name: "mm".into(), op: "MatMul".into(), ..Default::default() };
/// let inputs = [Shape::from([8, 16]), Shape::from([16, -1])];
/// let mut ctx = InferenceContext::new(&node, op.op_def(), &inputs, &[]).unwrap();
/// ctx.run(op.shape_fn().unwrap()).unwrap();
/// assert_eq!(ctx.output(0).unwrap().to_string(), "[8,?]");
/// ```
#[derive(Debug, Clone)]
pub struct InferenceContext<'a> {
    node: &'a NodeDef,
    op_def: &'a OpDef,
    inputs: &'a [Shape],
    constants: &'a [Option<&'a Tensor>],
    input_args: Vec<ArgRange<'a>>,
    output_args: Vec<ArgRange<'a>>,
    outputs: Vec<Option<Shape>>,
}

impl<'a> InferenceContext<'a> {
    /// A context for `node`, an instance of `op_def`, whose inputs have
    /// `input_shapes` (one per input) and, where known, the values
    /// `input_constants` (one per input, or none at all).
    ///
    /// Fails if the node's op is not `op_def`, if its attrs do not tell the
    /// number of inputs and outputs (`N`, type lists), or if the number of
    /// shapes or constants is not the number of inputs.
    pub fn new(
        node: &'a NodeDef,
        op_def: &'a OpDef,
        input_shapes: &'a [Shape],
        input_constants: &'a [Option<&'a Tensor>],
    ) -> Result<Self, ShapeError> {
        if node.op != op_def.name {
            return Err(NodeDefError::OpMismatch {
                node: node.name.clone(),
                node_op: node.op.clone(),
                op: op_def.name.clone(),
            }
            .into());
        }
        let (input_ranges, output_ranges) = name_ranges_for_node(node, op_def)?;
        let args = |defs: &'a [ArgDef], ranges: &crate::node_def::NameRangeMap| {
            defs.iter()
                .filter_map(|arg| {
                    ranges.get(&arg.name).map(|range| ArgRange {
                        arg,
                        range: range.clone(),
                    })
                })
                .collect::<Vec<_>>()
        };
        let input_args = args(&op_def.input_arg, &input_ranges);
        let output_args = args(&op_def.output_arg, &output_ranges);
        let num_inputs = input_args.last().map_or(0, |a| a.range.end);
        let num_outputs = output_args.last().map_or(0, |a| a.range.end);
        let count_error = |what, found| ShapeError::InputCount {
            node: node.name.clone(),
            op: op_def.name.clone(),
            what,
            expected: num_inputs,
            found,
        };
        if input_shapes.len() != num_inputs {
            return Err(count_error("shapes", input_shapes.len()));
        }
        if !input_constants.is_empty() && input_constants.len() != num_inputs {
            return Err(count_error("constants", input_constants.len()));
        }
        Ok(InferenceContext {
            node,
            op_def,
            inputs: input_shapes,
            constants: input_constants,
            input_args,
            output_args,
            outputs: vec![None; num_outputs],
        })
    }

    /// Runs `shape_fn` on this context. A plain error it returns is placed
    /// in the node ([`ShapeError::InNode`]).
    pub fn run(&mut self, shape_fn: ShapeFn) -> Result<(), ShapeError> {
        shape_fn(self).map_err(|e| self.error(e))
    }

    /// The output shapes, once every output is set; otherwise a
    /// [`ShapeError::OutputNotSet`] for the first unset one.
    pub fn into_outputs(self) -> Result<Vec<Shape>, ShapeError> {
        let mut shapes = Vec::with_capacity(self.outputs.len());
        for (index, shape) in self.outputs.into_iter().enumerate() {
            match shape {
                Some(s) => shapes.push(s),
                None => {
                    let arg = self
                        .output_args
                        .iter()
                        .find(|a| a.range.contains(&index))
                        .map_or_else(String::new, |a| a.arg.name.clone());
                    return Err(ShapeError::OutputNotSet {
                        node: self.node.name.clone(),
                        op: self.op_def.name.clone(),
                        index,
                        arg,
                    });
                }
            }
        }
        Ok(shapes)
    }

    // ---- the node ----

    /// The node.
    pub fn node(&self) -> &'a NodeDef {
        self.node
    }

    /// The node's OpDef.
    pub fn op_def(&self) -> &'a OpDef {
        self.op_def
    }

    /// The node's name.
    pub fn node_name(&self) -> &'a str {
        &self.node.name
    }

    /// The op's name.
    pub fn op_name(&self) -> &'a str {
        &self.op_def.name
    }

    /// Places a plain error in this node: [`ShapeError::InNode`] with the
    /// node's summary and input shapes. An error already placed is returned
    /// as it is.
    pub fn error(&self, error: ShapeError) -> ShapeError {
        self.place(error, None)
    }

    /// Like [`error`](Self::error), naming input `index` as the one
    /// concerned.
    pub fn input_error(&self, index: usize, error: ShapeError) -> ShapeError {
        let label = self.input_label(index);
        self.place(error, Some(label))
    }

    fn place(&self, error: ShapeError, input: Option<InputLabel>) -> ShapeError {
        if matches!(error, ShapeError::InNode(_)) {
            return error;
        }
        ShapeError::InNode(Box::new(NodeShapeError {
            node: self.node.name.clone(),
            op: self.op_def.name.clone(),
            summary: summarize_node(self.node, self.op_def),
            input,
            input_shapes: self.inputs.to_vec(),
            error,
        }))
    }

    fn input_label(&self, index: usize) -> InputLabel {
        let arg = match self.input_args.iter().find(|a| a.range.contains(&index)) {
            Some(a) if a.arg.number_attr.is_empty() && a.arg.type_list_attr.is_empty() => {
                a.arg.name.clone()
            }
            Some(a) => format!("{}[{}]", a.arg.name, index - a.range.start),
            None => "?".to_owned(),
        };
        InputLabel { index, arg }
    }

    // ---- attrs ----

    /// The node's attrs, with the op's defaults.
    pub fn attrs(&self) -> NodeAttrs<'a> {
        NodeAttrs::new(self.node, self.op_def)
    }

    /// The value of attr `name`: the node's, else the op's default.
    pub fn attr_value(&self, name: &str) -> Option<&'a AttrValue> {
        self.attrs().value(name)
    }

    /// Attr `name` converted to `T` (`i64`, `&[i64]`, `&str`, `bool`,
    /// `DataType`, [`Shape`], ...), as kernels read attrs; an error is
    /// placed in the node ([`ShapeError::MissingAttr`],
    /// [`ShapeError::AttrKind`] or [`ShapeError::InvalidAttr`]).
    pub fn attr<T: FromAttrValue<'a>>(&self, name: &str) -> Result<T, ShapeError> {
        self.attrs().get(name).map_err(|e| {
            let attr = e.attr;
            self.error(match e.problem {
                AttrProblem::Missing => ShapeError::MissingAttr { attr },
                AttrProblem::Value(AttrValueError::WrongKind { expected, found }) => {
                    ShapeError::AttrKind {
                        attr,
                        expected,
                        found,
                    }
                }
                AttrProblem::Value(AttrValueError::Invalid(message)) => {
                    ShapeError::InvalidAttr { attr, message }
                }
            })
        })
    }

    /// Like [`attr`](Self::attr), but `default` when the attr has no value
    /// at all.
    pub fn attr_or<T: FromAttrValue<'a>>(&self, name: &str, default: T) -> Result<T, ShapeError> {
        match self.attr_value(name) {
            None => Ok(default),
            Some(_) => self.attr(name),
        }
    }

    /// An [`ShapeError::InvalidAttr`] for attr `name`, placed in the node.
    pub fn invalid_attr(&self, name: &str, message: impl Into<String>) -> ShapeError {
        self.error(ShapeError::InvalidAttr {
            attr: name.to_owned(),
            message: message.into(),
        })
    }

    // ---- inputs ----

    /// The number of inputs.
    pub fn num_inputs(&self) -> usize {
        self.inputs.len()
    }

    /// The shapes of all inputs.
    pub fn inputs(&self) -> &'a [Shape] {
        self.inputs
    }

    /// The shape of input `index`.
    pub fn input(&self, index: usize) -> Result<&'a Shape, ShapeError> {
        self.inputs.get(index).ok_or_else(|| {
            self.error(ShapeError::InputIndex {
                index,
                count: self.inputs.len(),
            })
        })
    }

    /// The input indices of input arg `name` (several for `N * T` and type
    /// list args), if the op has such an arg.
    pub fn input_range(&self, name: &str) -> Option<Range<usize>> {
        self.input_args
            .iter()
            .find(|a| a.arg.name == name)
            .map(|a| a.range.clone())
    }

    /// The value of input `index`, if it is known (a constant).
    pub fn input_tensor(&self, index: usize) -> Result<Option<&'a Tensor>, ShapeError> {
        self.input(index)?;
        Ok(self.constants.get(index).copied().flatten())
    }

    /// Input `index`'s shape, constrained to rank `rank` (see
    /// [`Shape::with_rank`]); an error names the input.
    pub fn input_with_rank(&self, index: usize, rank: usize) -> Result<Shape, ShapeError> {
        self.input(index)?
            .with_rank(rank)
            .map_err(|e| self.input_error(index, e))
    }

    /// Input `index`'s shape, checked to have rank `>= min`.
    pub fn input_with_rank_at_least(&self, index: usize, min: usize) -> Result<Shape, ShapeError> {
        self.input(index)?
            .with_rank_at_least(min)
            .map_err(|e| self.input_error(index, e))
    }

    /// Input `index`'s shape, checked to have rank `<= max`.
    pub fn input_with_rank_at_most(&self, index: usize, max: usize) -> Result<Shape, ShapeError> {
        self.input(index)?
            .with_rank_at_most(max)
            .map_err(|e| self.input_error(index, e))
    }

    /// The value of input `index` as integers, if it is known: an int16,
    /// int32 or int64 tensor, flattened. Other dtypes are an error.
    pub fn input_ints(&self, index: usize) -> Result<Option<Vec<i64>>, ShapeError> {
        let Some(t) = self.input_tensor(index)? else {
            return Ok(None);
        };
        t.int_values().map(Some).map_err(|e| {
            let message = e.to_string();
            self.input_error(
                index,
                ShapeError::InvalidConstant {
                    input: index,
                    message,
                },
            )
        })
    }

    /// The value of input `index` as one integer, if it is known: the
    /// tensor must hold exactly one int16, int32 or int64 element.
    pub fn input_scalar_int(&self, index: usize) -> Result<Option<i64>, ShapeError> {
        let Some(values) = self.input_ints(index)? else {
            return Ok(None);
        };
        match values.as_slice() {
            [v] => Ok(Some(*v)),
            _ => Err(self.input_error(
                index,
                ShapeError::InvalidConstant {
                    input: index,
                    message: format!("expected a single value, got {} values", values.len()),
                },
            )),
        }
    }

    /// The shape described by the value of input `index`, a vector of sizes
    /// (TF's `MakeShapeFromShapeTensor`): -1 is an unknown dimension. When
    /// the value is unknown, the result has as many unknown dimensions as
    /// the vector's length, or an unknown rank if that is unknown too.
    pub fn make_shape_from_shape_tensor(&self, index: usize) -> Result<Shape, ShapeError> {
        let vector = self.input_with_rank(index, 1)?;
        let Some(values) = self.input_ints(index)? else {
            return match vector.dim(0)?.value() {
                Some(n) => Shape::unknown()
                    .with_rank(usize::try_from(n).unwrap_or(usize::MAX))
                    .map_err(|e| self.input_error(index, e)),
                None => Ok(Shape::unknown()),
            };
        };
        let invalid = |message: String| {
            self.input_error(
                index,
                ShapeError::InvalidConstant {
                    input: index,
                    message,
                },
            )
        };
        if let Some(t) = self.input_tensor(index)?
            && t.dims().len() != 1
        {
            return Err(invalid(format!(
                "a shape tensor must be rank 1, but has shape {}",
                Shape::from(t.shape())
            )));
        }
        let mut dims = Vec::with_capacity(values.len());
        for (i, &v) in values.iter().enumerate() {
            if v < -1 {
                return Err(self.input_error(index, ShapeError::InvalidDim { index: i, value: v }));
            }
            dims.push(Dim::new(v));
        }
        Ok(Shape::new(dims))
    }

    /// The dimension given by the scalar input `index` (TF's
    /// `MakeDimForScalarInput`): its value if known (negative is an
    /// error), else unknown.
    pub fn make_dim_for_scalar_input(&self, index: usize) -> Result<Dim, ShapeError> {
        self.input_with_rank(index, 0)?;
        match self.input_scalar_int(index)? {
            None => Ok(Dim::UNKNOWN),
            Some(v) if v < 0 => Err(self.input_error(
                index,
                ShapeError::Negative {
                    what: "Dimension size, given by a scalar input,",
                    value: v,
                },
            )),
            Some(v) => Ok(Dim::new(v)),
        }
    }

    // ---- outputs ----

    /// The number of outputs.
    pub fn num_outputs(&self) -> usize {
        self.outputs.len()
    }

    /// Sets the shape of output `index`.
    pub fn set_output(&mut self, index: usize, shape: Shape) -> Result<(), ShapeError> {
        let count = self.outputs.len();
        match self.outputs.get_mut(index) {
            Some(slot) => {
                *slot = Some(shape);
                Ok(())
            }
            None => Err(self.error(ShapeError::OutputIndex { index, count })),
        }
    }

    /// The shape of output `index`, if set.
    pub fn output(&self, index: usize) -> Option<&Shape> {
        self.outputs.get(index).and_then(Option::as_ref)
    }
}

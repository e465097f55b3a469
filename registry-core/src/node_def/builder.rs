//! [`NodeDefBuilder`]: builds a valid [`NodeDef`] from its inputs and attrs,
//! inferring the attrs its inputs imply (TensorFlow's `NodeDefBuilder`).

use opreg_proto::op_def::ArgDef;
use opreg_proto::{AttrValue, DataType, DataTypeExt, NodeDef, OpDef};

use super::{NodeDefError, add_defaults_to_node_def, types_compatible, validate_node_def};
use crate::attr::summarize_attr_value;
use crate::registry::{OpRegistry, RegistryError};

/// One output of a node, feeding an input of the node being built: the
/// producing node's name, its output index and the tensor's dtype (TF's
/// `NodeDefBuilder::NodeOut`).
///
/// ```
/// use registry_core::node_def::NodeOut;
/// use registry_core::proto::DataType;
///
/// let a = NodeOut::new("split", 1, DataType::DtFloat);
/// assert_eq!(a.input_string(), "split:1");
/// let b = NodeOut::from(("x", DataType::DtFloat)); // output 0
/// assert_eq!(b.input_string(), "x");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeOut {
    /// The producing node's name.
    pub node: String,
    /// Which of its outputs.
    pub index: usize,
    /// The dtype of that output.
    pub dtype: DataType,
}

impl NodeOut {
    /// Output `index` of node `node`, of type `dtype`.
    pub fn new(node: impl Into<String>, index: usize, dtype: DataType) -> Self {
        NodeOut {
            node: node.into(),
            index,
            dtype,
        }
    }

    /// The input string a NodeDef names this output with: `node` for output
    /// 0, `node:index` otherwise.
    pub fn input_string(&self) -> String {
        if self.index == 0 {
            self.node.clone()
        } else {
            format!("{}:{}", self.node, self.index)
        }
    }
}

impl From<(&str, DataType)> for NodeOut {
    fn from((node, dtype): (&str, DataType)) -> Self {
        NodeOut::new(node, 0, dtype)
    }
}

impl From<(&str, usize, DataType)> for NodeOut {
    fn from((node, index, dtype): (&str, usize, DataType)) -> Self {
        NodeOut::new(node, index, dtype)
    }
}

/// One thing wrong with the calls made on a [`NodeDefBuilder`]; every one
/// found is reported by [`NodeDefBuilder::finalize`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BuildProblem {
    /// More inputs were given than the op has input args.
    #[error("input {given} given, but the op has only {args} input arg(s)")]
    TooManyInputs {
        /// How many inputs (single or list) had been given, this one included.
        given: usize,
        /// The op's number of input args.
        args: usize,
    },
    /// Fewer inputs were given than the op has input args.
    #[error("{given} of the op's {args} input args given; missing: {}", missing.join(", "))]
    TooFewInputs {
        /// How many were given.
        given: usize,
        /// The op's number of input args.
        args: usize,
        /// The names of the args not given.
        missing: Vec<String>,
    },
    /// One tensor was given for a list arg.
    #[error("input arg '{arg}' is a list ({signature}): give it with input_list")]
    SingleTensorForList {
        /// The arg.
        arg: String,
        /// Its type, as the spec wrote it (`N * T`, `list(type)`).
        signature: String,
    },
    /// A list was given for an arg of one tensor.
    #[error("input arg '{arg}' is a single tensor: give it with input, not input_list")]
    ListForSingleTensor {
        /// The arg.
        arg: String,
    },
    /// A tensor of the wrong dtype was given for an arg of a fixed type.
    #[error("input arg '{arg}' is {expected}, but was given {actual} (from '{input}')")]
    WrongType {
        /// The arg.
        arg: String,
        /// The dtype the arg takes.
        expected: &'static str,
        /// The dtype given.
        actual: &'static str,
        /// The input string of the tensor given.
        input: String,
    },
    /// A non-reference tensor was given for a `Ref(...)` arg.
    #[error("input arg '{arg}' takes a reference, but was given {actual} (from '{input}')")]
    NotARef {
        /// The arg.
        arg: String,
        /// The dtype given.
        actual: &'static str,
        /// The input string of the tensor given.
        input: String,
    },
    /// An input names no node, or names a control input (`^x`).
    #[error("input arg '{arg}' was given a bad node name '{node}': {reason}")]
    BadInputNode {
        /// The arg.
        arg: String,
        /// The node name given.
        node: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// Two calls gave one attr different values (an input's dtype inferred
    /// `T`, and an explicit `attr("T", ...)` or another input disagreed).
    #[error("attr '{attr}' was set to {first}, then to {second}")]
    InconsistentAttr {
        /// The attr.
        attr: String,
        /// Its first value, summarized (`DT_FLOAT`, `[1, 2]`).
        first: String,
        /// The conflicting value.
        second: String,
    },
    /// [`NodeDefBuilder::fake_inputs`] cannot tell how to split its dtypes
    /// over the op's input args.
    #[error("cannot split {given} fake input dtype(s) over the input args: {reason}")]
    FakeInputs {
        /// How many dtypes were given.
        given: usize,
        /// Why they cannot be split.
        reason: String,
    },
}

/// Why [`NodeDefBuilder::finalize`] failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum NodeDefBuildError {
    /// The op is not registered.
    #[error("cannot build NodeDef '{node}': {source}")]
    UnknownOp {
        /// The node's name.
        node: String,
        /// The registry's lookup error (it suggests close op names; boxed
        /// to keep the error small).
        #[source]
        source: Box<RegistryError>,
    },
    /// The builder's calls were inconsistent with the op.
    #[error(
        "cannot build NodeDef '{node}' (op '{op}'): {}",
        describe_problems(problems)
    )]
    Problems {
        /// The node's name.
        node: String,
        /// The op.
        op: String,
        /// Everything found wrong, in call order.
        problems: Vec<BuildProblem>,
    },
    /// The NodeDef built is not valid for its op (a required attr was not
    /// set, a value is not allowed, ...).
    #[error(transparent)]
    Invalid(#[from] NodeDefError),
}

fn describe_problems(problems: &[BuildProblem]) -> String {
    match problems {
        [one] => one.to_string(),
        many => {
            let lines: Vec<String> = many.iter().map(|p| format!("\n  {p}")).collect();
            format!("{} problems:{}", many.len(), lines.concat())
        }
    }
}

/// Builds a [`NodeDef`] the way TensorFlow's `NodeDefBuilder` does: inputs
/// are given in the order of the op's input args, and the attrs they imply
/// are set from them: a `T` from the dtype of a `x: T` input, `N` and `T`
/// from an `N * T` list, a `list(type)` attr from a type list. Attrs given
/// with [`attr`](Self::attr) must agree with those. [`finalize`](Self::finalize)
/// adds the op's defaults for the attrs not set and, unlike TensorFlow's,
/// also validates the node, so a NodeDef it returns is one the registry and
/// the executor accept.
///
/// Every problem is collected and reported at once by `finalize`, with the
/// node and op it concerns.
///
/// ```
/// # use opreg_standard_ops as _; // links the standard ops
/// use registry_core::node_def::NodeDefBuilder;
/// use registry_core::proto::DataType::{DtFloat, DtInt32};
///
/// // ConcatV2: values: N * T, axis: Tidx.
/// let node = NodeDefBuilder::new("concat", "ConcatV2")
///     .input_list([("a", DtFloat), ("b", DtFloat)])
///     .input(("axis", DtInt32))
///     .control_input("init")
///     .device("/device:CPU:0")
///     .finalize()
///     .unwrap();
/// assert_eq!(node.input, ["a", "b", "axis", "^init"]);
/// assert_eq!(node.attr["N"], 2.into());
/// assert_eq!(node.attr["T"], DtFloat.into());
/// assert_eq!(node.attr["Tidx"], DtInt32.into());
///
/// // An input of another type than the one an attr was given:
/// let err = NodeDefBuilder::new("mm", "MatMul")
///     .attr("T", DtFloat)
///     .input(("a", DtInt32))
///     .input(("b", DtInt32))
///     .finalize()
///     .unwrap_err();
/// assert_eq!(
///     err.to_string(),
///     "cannot build NodeDef 'mm' (op 'MatMul'): attr 'T' was set to DT_FLOAT, then to DT_INT32"
/// );
/// ```
#[derive(Debug, Clone)]
pub struct NodeDefBuilder<'a> {
    op_def: Result<&'a OpDef, RegistryError>,
    node: NodeDef,
    next_arg: usize,
    inputs_given: usize,
    controls: Vec<String>,
    problems: Vec<BuildProblem>,
}

impl NodeDefBuilder<'static> {
    /// A node named `name` of op `op`, looked up in the global
    /// [`OpRegistry`]. An unknown op is reported by
    /// [`finalize`](Self::finalize).
    pub fn new(name: impl Into<String>, op: &str) -> Self {
        let op_def = OpRegistry::global().look_up_op_def(op);
        let mut builder = Self::start(name.into(), op_def);
        builder.node.op = op.to_owned();
        builder
    }
}

impl<'a> NodeDefBuilder<'a> {
    /// A node named `name` of the op `op_def` describes (an op that need not
    /// be registered).
    pub fn with_op_def(name: impl Into<String>, op_def: &'a OpDef) -> Self {
        Self::start(name.into(), Ok(op_def))
    }

    fn start(name: String, op_def: Result<&'a OpDef, RegistryError>) -> Self {
        let node = NodeDef {
            name,
            op: op_def.as_ref().map(|d| d.name.clone()).unwrap_or_default(),
            ..Default::default()
        };
        NodeDefBuilder {
            op_def,
            node,
            next_arg: 0,
            inputs_given: 0,
            controls: Vec::new(),
            problems: Vec::new(),
        }
    }

    /// Feeds the next input arg, one that takes a single tensor, with `src`:
    /// `("x", DtFloat)`, `("split", 1, DtFloat)` or a [`NodeOut`]. An arg
    /// `x: T` sets `T` to the dtype; an arg of a fixed type checks it.
    pub fn input(mut self, src: impl Into<NodeOut>) -> Self {
        let src = src.into();
        if let Some(arg) = self.next_arg_def() {
            self.single_input(arg, &src);
        }
        self
    }

    /// Feeds the next input arg, a list (`N * T`, `N * int32` or
    /// `list(type)`), with `srcs`: `N` is set to their count and `T` (or the
    /// type list) to their dtypes.
    pub fn input_list<S: Into<NodeOut>>(mut self, srcs: impl IntoIterator<Item = S>) -> Self {
        let srcs: Vec<NodeOut> = srcs.into_iter().map(Into::into).collect();
        if let Some(arg) = self.next_arg_def() {
            self.list_input(arg, &srcs);
        }
        self
    }

    /// Feeds every remaining input arg from placeholder nodes of the given
    /// dtypes, named `x0`, `x1`, ... in order (the way TensorFlow's kernel
    /// tests use `FakeInput`). Args of one tensor take one dtype each; list
    /// args share the rest equally (their count must split evenly, as for
    /// `DynamicStitch`'s two `N * ...` lists).
    ///
    /// ```
    /// # use opreg_standard_ops as _; // links the standard ops
    /// use registry_core::node_def::NodeDefBuilder;
    /// use registry_core::proto::DataType::DtHalf;
    ///
    /// let node = NodeDefBuilder::new("sum", "AddN").fake_inputs(&[DtHalf; 3]).finalize().unwrap();
    /// assert_eq!(node.input, ["x0", "x1", "x2"]);
    /// assert_eq!(node.attr["N"], 3.into());
    /// ```
    pub fn fake_inputs(mut self, dtypes: &[DataType]) -> Self {
        let Ok(op_def) = self.op_def else {
            return self;
        };
        let remaining = &op_def.input_arg[self.next_arg.min(op_def.input_arg.len())..];
        let lists = remaining.iter().filter(|a| is_list(a)).count();
        let singles = remaining.len() - lists;
        let per_list = match (dtypes.len().checked_sub(singles), lists) {
            (None, _) => Err(format!("the remaining input args take at least {singles}")),
            (Some(0), 0) => Ok(0),
            (Some(extra), 0) => Err(format!(
                "the remaining input args take exactly {singles}, {extra} too many"
            )),
            (Some(extra), lists) if extra % lists == 0 => Ok(extra / lists),
            (Some(extra), lists) => Err(format!(
                "{extra} left for {lists} list args does not split evenly"
            )),
        };
        let per_list = match per_list {
            Ok(n) => n,
            Err(reason) => {
                self.note(BuildProblem::FakeInputs {
                    given: dtypes.len(),
                    reason,
                });
                // The args are accounted for by this problem.
                self.next_arg = op_def.input_arg.len();
                return self;
            }
        };
        let mut next = 0usize;
        let mut take = |n: usize| {
            let srcs: Vec<NodeOut> = dtypes[next..next + n]
                .iter()
                .enumerate()
                .map(|(i, &t)| NodeOut::new(format!("x{}", next + i), 0, t))
                .collect();
            next += n;
            srcs
        };
        for arg in remaining {
            self = if is_list(arg) {
                let srcs = take(per_list);
                self.input_list(srcs)
            } else {
                let src = take(1).remove(0);
                self.input(src)
            };
        }
        self
    }

    /// Adds a control input (`^node`); control inputs follow the data
    /// inputs in the NodeDef, whatever the order of the calls.
    pub fn control_input(mut self, node: impl Into<String>) -> Self {
        self.controls.push(node.into());
        self
    }

    /// Sets the node's requested device (`/device:GPU:0`, `/cpu:0`, ...).
    pub fn device(mut self, spec: impl Into<String>) -> Self {
        self.node.device = spec.into();
        self
    }

    /// Sets attr `name`; the value converts from what the attr holds
    /// (`DataType`, `i64`, `f32`, `bool`, `&str`, `[i64; N]`, `Vec<DataType>`,
    /// a `TensorShapeProto`, ...; see [`AttrValue`]'s `From` impls). Setting
    /// an attr to a value other than one it already has is a problem that
    /// [`finalize`](Self::finalize) reports.
    pub fn attr(mut self, name: impl Into<String>, value: impl Into<AttrValue>) -> Self {
        self.set_attr(name.into(), value.into());
        self
    }

    /// The NodeDef: inputs, then control inputs, the attrs set and the op's
    /// defaults for the others; validated against the op
    /// ([`validate_node_def`]).
    pub fn finalize(self) -> Result<NodeDef, NodeDefBuildError> {
        let op_def = match self.op_def {
            Ok(op_def) => op_def,
            Err(source) => {
                return Err(NodeDefBuildError::UnknownOp {
                    node: self.node.name,
                    source: Box::new(source),
                });
            }
        };
        let mut problems = self.problems;
        if self.next_arg < op_def.input_arg.len() {
            problems.push(BuildProblem::TooFewInputs {
                given: self.next_arg,
                args: op_def.input_arg.len(),
                missing: op_def.input_arg[self.next_arg..]
                    .iter()
                    .map(|a| a.name.clone())
                    .collect(),
            });
        }
        if !problems.is_empty() {
            return Err(NodeDefBuildError::Problems {
                node: self.node.name,
                op: op_def.name.clone(),
                problems,
            });
        }
        let mut node = self.node;
        node.input
            .extend(self.controls.iter().map(|c| format!("^{c}")));
        add_defaults_to_node_def(op_def, &mut node);
        validate_node_def(&node, op_def)?;
        Ok(node)
    }

    /// The next input arg, or `None` (with a problem noted) past the last.
    fn next_arg_def(&mut self) -> Option<&'a ArgDef> {
        self.inputs_given += 1;
        let op_def = *self.op_def.as_ref().ok()?;
        match op_def.input_arg.get(self.next_arg) {
            Some(arg) => {
                self.next_arg += 1;
                Some(arg)
            }
            None => {
                self.note(BuildProblem::TooManyInputs {
                    given: self.inputs_given,
                    args: op_def.input_arg.len(),
                });
                None
            }
        }
    }

    fn single_input(&mut self, arg: &ArgDef, src: &NodeOut) {
        self.add_input(arg, src);
        if is_list(arg) {
            self.note(BuildProblem::SingleTensorForList {
                arg: arg.name.clone(),
                signature: list_signature(arg),
            });
            return;
        }
        if let Some(fixed) = fixed_type(arg) {
            self.check_type(arg, expected_type(arg, fixed), src);
        } else {
            self.check_ref(arg, src);
            self.set_attr(arg.type_attr.clone(), src.dtype.base().into());
        }
    }

    fn list_input(&mut self, arg: &ArgDef, srcs: &[NodeOut]) {
        for src in srcs {
            self.add_input(arg, src);
        }
        if !arg.number_attr.is_empty() {
            self.set_attr(arg.number_attr.clone(), (srcs.len() as i64).into());
            let expected = match (fixed_type(arg), srcs.first()) {
                (Some(fixed), _) => Some(fixed),
                (None, Some(first)) => {
                    let base = first.dtype.base();
                    self.set_attr(arg.type_attr.clone(), base.into());
                    Some(base)
                }
                (None, None) => None,
            };
            if let Some(expected) = expected {
                for src in srcs {
                    self.check_type(arg, expected_type(arg, expected), src);
                }
            }
        } else if !arg.type_list_attr.is_empty() {
            for src in srcs {
                self.check_ref(arg, src);
            }
            let types: Vec<DataType> = srcs.iter().map(|s| s.dtype.base()).collect();
            self.set_attr(arg.type_list_attr.clone(), types.into());
        } else {
            self.note(BuildProblem::ListForSingleTensor {
                arg: arg.name.clone(),
            });
        }
    }

    fn add_input(&mut self, arg: &ArgDef, src: &NodeOut) {
        let reason = if src.node.is_empty() {
            Some("empty")
        } else if src.node.starts_with('^') {
            Some("a control input; use control_input")
        } else {
            None
        };
        match reason {
            Some(reason) => self.note(BuildProblem::BadInputNode {
                arg: arg.name.clone(),
                node: src.node.clone(),
                reason,
            }),
            None => self.node.input.push(src.input_string()),
        }
    }

    fn check_type(&mut self, arg: &ArgDef, expected: DataType, src: &NodeOut) {
        if !types_compatible(expected, src.dtype) {
            self.note(BuildProblem::WrongType {
                arg: arg.name.clone(),
                expected: expected.type_name(),
                actual: src.dtype.type_name(),
                input: src.input_string(),
            });
        }
    }

    fn check_ref(&mut self, arg: &ArgDef, src: &NodeOut) {
        if arg.is_ref && !src.dtype.is_ref() {
            self.note(BuildProblem::NotARef {
                arg: arg.name.clone(),
                actual: src.dtype.type_name(),
                input: src.input_string(),
            });
        }
    }

    /// Records a problem, once: two inputs in conflict with one attr value
    /// in the same way make one problem.
    fn note(&mut self, problem: BuildProblem) {
        if !self.problems.contains(&problem) {
            self.problems.push(problem);
        }
    }

    fn set_attr(&mut self, name: String, value: AttrValue) {
        match self.node.attr.get(&name) {
            Some(found) if *found != value => {
                self.note(BuildProblem::InconsistentAttr {
                    first: summarize_attr_value(found),
                    second: summarize_attr_value(&value),
                    attr: name,
                });
            }
            Some(_) => {}
            None => {
                self.node.attr.insert(name, value);
            }
        }
    }
}

fn is_list(arg: &ArgDef) -> bool {
    !arg.number_attr.is_empty() || !arg.type_list_attr.is_empty()
}

/// The arg's fixed type (`x: int32`), if it has one.
fn fixed_type(arg: &ArgDef) -> Option<DataType> {
    DataType::try_from(arg.r#type)
        .ok()
        .filter(|&t| t != DataType::DtInvalid)
}

/// `dtype`, as a reference type when the arg is `Ref(...)`.
fn expected_type(arg: &ArgDef, dtype: DataType) -> DataType {
    if arg.is_ref { dtype.to_ref() } else { dtype }
}

fn list_signature(arg: &ArgDef) -> String {
    if !arg.type_list_attr.is_empty() {
        return format!("types {}", arg.type_list_attr);
    }
    let element = if arg.type_attr.is_empty() {
        fixed_type(arg).map_or("?", DataType::type_name).to_owned()
    } else {
        arg.type_attr.clone()
    };
    format!("{} * {element}", arg.number_attr)
}

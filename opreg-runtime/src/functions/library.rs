//! [`FunctionLibrary`]: a GraphDef's `library` of `FunctionDef`s, checked,
//! and the instantiation of one function with its attrs as a graph of its
//! own (TF's `InstantiateFunction`).

use std::collections::BTreeMap;
use std::sync::Arc;

use opreg_proto::attr_value::{ListValue, Value};
use opreg_proto::{AttrValue, FunctionDef, FunctionDefLibrary, NameAttrList, NodeDef, OpDef};
use rustc_hash::FxHashMap;

use registry_core::node_def::{add_defaults_to_node_def, input_ranges, output_ranges, parse_input};
use registry_core::registry::OpRegistry;

/// Why a function library or an instantiation is not valid.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FunctionError {
    /// Two functions share a name.
    #[error("the function library defines '{0}' twice")]
    Duplicate(String),
    /// A function has the name of a registered op (TF's message).
    #[error("Cannot add function '{0}' because an op with the same name already exists.")]
    ShadowsOp(String),
    /// A function has no signature or no name.
    #[error("a function of the library has no signature name")]
    Unnamed,
    /// No function has that name.
    #[error("no function '{0}' in the graph's library")]
    Unknown(String),
    /// The function's body does not fit its signature or its ops.
    #[error("function '{function}': {message}")]
    Invalid {
        /// The function.
        function: String,
        /// What is wrong.
        message: String,
    },
}

impl FunctionError {
    fn invalid(function: &str, message: impl Into<String>) -> Self {
        FunctionError::Invalid {
            function: function.to_owned(),
            message: message.into(),
        }
    }
}

/// The functions of a GraphDef's `library`, by name (TF's
/// `FunctionLibraryDefinition`). Cheap to clone (shared).
///
/// ```
/// use opreg_runtime::FunctionLibrary;
/// use registry_core::proto::{FunctionDefLibrary, TextFormat};
/// use registry_core::registry::OpRegistry;
/// # use opreg_standard_ops as _;
///
/// let library = FunctionDefLibrary::from_pbtxt(r#"
///   function {
///     signature { name: "Twice" input_arg { name: "x" type: DT_FLOAT }
///                 output_arg { name: "y" type: DT_FLOAT } }
///     node_def { name: "sum" op: "AddV2" input: "x" input: "x"
///                attr { key: "T" value { type: DT_FLOAT } } }
///     ret { key: "y" value: "sum:z:0" }
///   }"#).unwrap();
/// let functions = FunctionLibrary::new(OpRegistry::global(), library).unwrap();
/// assert_eq!(functions.signature("Twice").unwrap().input_arg[0].name, "x");
/// assert!(functions.signature("Thrice").is_none());
/// ```
#[derive(Debug, Clone, Default)]
pub struct FunctionLibrary {
    functions: Arc<FxHashMap<String, FunctionDef>>,
}

impl FunctionLibrary {
    /// Checks and indexes `library`: every function named once, none named
    /// like an op of `ops`.
    pub fn new(ops: &OpRegistry, library: FunctionDefLibrary) -> Result<Self, FunctionError> {
        let mut functions = FxHashMap::default();
        for function in library.function {
            let name = match &function.signature {
                Some(signature) if !signature.name.is_empty() => signature.name.clone(),
                _ => return Err(FunctionError::Unnamed),
            };
            if ops.contains(&name) {
                return Err(FunctionError::ShadowsOp(name));
            }
            if functions.insert(name.clone(), function).is_some() {
                return Err(FunctionError::Duplicate(name));
            }
        }
        Ok(Self {
            functions: Arc::new(functions),
        })
    }

    /// True when the library has no functions.
    pub fn is_empty(&self) -> bool {
        self.functions.is_empty()
    }

    /// The number of functions.
    pub fn len(&self) -> usize {
        self.functions.len()
    }

    /// The functions as a `FunctionDefLibrary`, sorted by name.
    pub fn to_proto(&self) -> FunctionDefLibrary {
        FunctionDefLibrary {
            function: self
                .names()
                .into_iter()
                .filter_map(|name| self.function(name).cloned())
                .collect(),
            ..FunctionDefLibrary::default()
        }
    }

    /// The names of the functions, sorted.
    pub fn names(&self) -> Vec<&str> {
        let mut names: Vec<&str> = self.functions.keys().map(String::as_str).collect();
        names.sort_unstable();
        names
    }

    /// The function called `name`.
    pub fn function(&self, name: &str) -> Option<&FunctionDef> {
        self.functions.get(name)
    }

    /// The signature (an OpDef) of the function called `name`: what a node
    /// calling it must fit.
    pub fn signature(&self, name: &str) -> Option<&OpDef> {
        self.function(name).and_then(|f| f.signature.as_ref())
    }

    /// Instantiates `name` with `attrs` (its type attrs and others, from
    /// the calling node or a `func` attr): the body as a GraphDef of its
    /// own, with a `Placeholder` per argument element.
    pub(crate) fn instantiate(
        &self,
        ops: &OpRegistry,
        name: &str,
        attrs: &BTreeMap<String, AttrValue>,
    ) -> Result<Instantiation, FunctionError> {
        let function = self
            .function(name)
            .ok_or_else(|| FunctionError::Unknown(name.to_owned()))?;
        Instantiator::new(self, ops, name, function, attrs)?.run()
    }
}

/// A function instantiated with attrs: its body as a graph whose arguments
/// are `Placeholder`s (fed by a call) and whose results are endpoints
/// (fetched).
#[derive(Debug, Clone)]
pub(crate) struct Instantiation {
    /// The body.
    pub(crate) nodes: Vec<NodeDef>,
    /// The `Placeholder` of each argument element, in order.
    pub(crate) args: Vec<String>,
    /// The endpoint (`node:port`) of each result element, in order.
    pub(crate) rets: Vec<String>,
    /// Nodes that must run although no result needs them (`control_ret`).
    pub(crate) control_rets: Vec<String>,
}

/// The attrs of a call: a `func` attr's own attrs.
pub(crate) fn func_attr(value: &AttrValue) -> Option<&NameAttrList> {
    match &value.value {
        Some(Value::Func(f)) => Some(f),
        _ => None,
    }
}

struct Instantiator<'a> {
    library: &'a FunctionLibrary,
    ops: &'a OpRegistry,
    name: &'a str,
    function: &'a FunctionDef,
    signature: &'a OpDef,
    /// The instantiation's attrs: given, else the signature's defaults.
    attrs: BTreeMap<String, AttrValue>,
}

impl<'a> Instantiator<'a> {
    fn new(
        library: &'a FunctionLibrary,
        ops: &'a OpRegistry,
        name: &'a str,
        function: &'a FunctionDef,
        given: &BTreeMap<String, AttrValue>,
    ) -> Result<Self, FunctionError> {
        let signature = function.signature.as_ref().ok_or(FunctionError::Unnamed)?;
        let mut attrs = BTreeMap::new();
        for attr in &signature.attr {
            let value = given
                .get(&attr.name)
                .or(attr.default_value.as_ref())
                .ok_or_else(|| {
                    FunctionError::invalid(
                        name,
                        format!("attr '{}' has no value and no default", attr.name),
                    )
                })?;
            attrs.insert(attr.name.clone(), value.clone());
        }
        Ok(Self {
            library,
            ops,
            name,
            function,
            signature,
            attrs,
        })
    }

    fn invalid(&self, message: impl Into<String>) -> FunctionError {
        FunctionError::invalid(self.name, message)
    }

    /// The signature as a node with the instantiation's attrs: what
    /// `input_ranges`/`output_ranges` read arg sizes and dtypes from.
    fn signature_node(&self) -> NodeDef {
        NodeDef {
            name: self.name.to_owned(),
            op: self.name.to_owned(),
            attr: self.attrs.clone().into_iter().collect(),
            ..Default::default()
        }
    }

    fn run(self) -> Result<Instantiation, FunctionError> {
        let signature_node = self.signature_node();
        let (input_types, output_types) =
            registry_core::node_def::in_out_types_for_node(&signature_node, self.signature)
                .map_err(|e| self.invalid(e.to_string()))?;
        let arg_ranges = input_ranges(&signature_node, self.signature)
            .map_err(|e| self.invalid(e.to_string()))?;
        let mut nodes = Vec::with_capacity(self.function.node_def.len() + input_types.len());
        // Each argument element is a Placeholder; `refs` maps the names the
        // body uses ("x", "x:1", "node:out:0") to endpoints.
        let mut refs: FxHashMap<String, Vec<String>> = FxHashMap::default();
        let mut args = Vec::with_capacity(input_types.len());
        for arg in &self.signature.input_arg {
            let range = arg_ranges.get(&arg.name).cloned().unwrap_or(0..0);
            let single = arg.number_attr.is_empty() && arg.type_list_attr.is_empty();
            let mut elements = Vec::with_capacity(range.len());
            for (k, index) in range.enumerate() {
                let node_name = if single {
                    arg.name.clone()
                } else {
                    format!("{}/_{k}", arg.name)
                };
                nodes.push(placeholder(&node_name, input_types[index]));
                refs.insert(format!("{}:{k}", arg.name), vec![node_name.clone()]);
                elements.push(node_name.clone());
                args.push(node_name);
            }
            refs.insert(arg.name.clone(), elements);
        }
        // The body's nodes with their attrs substituted; each output arg
        // element gets a name.
        let mut body = Vec::with_capacity(self.function.node_def.len());
        for node in &self.function.node_def {
            let mut node = node.clone();
            for value in node.attr.values_mut() {
                self.substitute(value)?;
            }
            let op_def = self
                .ops
                .look_up_op_def(&node.op)
                .ok()
                .or_else(|| self.library.signature(&node.op))
                .ok_or_else(|| {
                    self.invalid(format!(
                        "node '{}' uses op '{}', which is neither registered nor a function of the library",
                        node.name, node.op
                    ))
                })?;
            let mut with_defaults = node.clone();
            add_defaults_to_node_def(op_def, &mut with_defaults);
            let ranges = output_ranges(&with_defaults, op_def).map_err(|e| {
                self.invalid(format!("node '{}' (op '{}'): {e}", node.name, node.op))
            })?;
            for (out, range) in ranges {
                let endpoints: Vec<String> = range.map(|port| endpoint(&node.name, port)).collect();
                for (k, e) in endpoints.iter().enumerate() {
                    refs.insert(format!("{}:{out}:{k}", node.name), vec![e.clone()]);
                }
                refs.insert(format!("{}:{out}", node.name), endpoints);
            }
            // A node's own name (TF 1 style "node:port" or "node") also
            // resolves, as in a GraphDef.
            body.push(node);
        }
        for mut node in body {
            let mut inputs = Vec::with_capacity(node.input.len());
            for input in &node.input {
                if input.starts_with('^') {
                    inputs.push(input.clone());
                    continue;
                }
                match refs.get(input.as_str()) {
                    Some(endpoints) => inputs.extend(endpoints.iter().cloned()),
                    // GraphDef-style references ("node", "node:1") pass
                    // through; the graph check reports dangling ones.
                    None if is_graph_style(input) => inputs.push(input.clone()),
                    None => {
                        return Err(self.invalid(format!(
                            "node '{}' (op '{}') reads '{input}', which is no argument and no node output of the function",
                            node.name, node.op
                        )));
                    }
                }
            }
            node.input = inputs;
            nodes.push(node);
        }
        let mut rets = Vec::with_capacity(output_types.len());
        for out in &self.signature.output_arg {
            let source = self.function.ret.get(&out.name).ok_or_else(|| {
                self.invalid(format!("output '{}' has no entry in 'ret'", out.name))
            })?;
            let endpoints = refs
                .get(source.as_str())
                .cloned()
                .or_else(|| is_graph_style(source).then(|| vec![source.clone()]))
                .ok_or_else(|| {
                    self.invalid(format!(
                        "output '{}' is '{source}', which is no argument and no node output",
                        out.name
                    ))
                })?;
            rets.extend(endpoints);
        }
        if rets.len() != output_types.len() {
            return Err(self.invalid(format!(
                "the signature has {} result elements but 'ret' gives {}",
                output_types.len(),
                rets.len()
            )));
        }
        let mut control_rets = Vec::new();
        for name in &self.signature.control_output {
            let node = self.function.control_ret.get(name).ok_or_else(|| {
                self.invalid(format!(
                    "control output '{name}' has no entry in 'control_ret'"
                ))
            })?;
            control_rets.push(node.clone());
        }
        Ok(Instantiation {
            nodes,
            args,
            rets,
            control_rets,
        })
    }

    /// Replaces `$attr` placeholders (also inside lists and `func` attrs)
    /// by the instantiation's values.
    fn substitute(&self, value: &mut AttrValue) -> Result<(), FunctionError> {
        match &mut value.value {
            Some(Value::Placeholder(name)) => {
                let name = name.clone();
                *value = self.attrs.get(&name).cloned().ok_or_else(|| {
                    self.invalid(format!("attr placeholder '${name}' has no value"))
                })?;
            }
            Some(Value::Func(f)) => {
                for inner in f.attr.values_mut() {
                    self.substitute(inner)?;
                }
            }
            Some(Value::List(ListValue { func, .. })) => {
                for f in func {
                    for inner in f.attr.values_mut() {
                        self.substitute(inner)?;
                    }
                }
            }
            _ => {}
        }
        Ok(())
    }
}

fn placeholder(name: &str, dtype: opreg_proto::DataType) -> NodeDef {
    let mut node = NodeDef {
        name: name.to_owned(),
        op: "Placeholder".to_owned(),
        ..Default::default()
    };
    node.attr.insert("dtype".to_owned(), dtype.into());
    node
}

fn endpoint(node: &str, port: usize) -> String {
    if port == 0 {
        node.to_owned()
    } else {
        format!("{node}:{port}")
    }
}

/// A GraphDef-style input (`node` or `node:port`), as some function bodies
/// use.
fn is_graph_style(input: &str) -> bool {
    parse_input(input).is_ok() && input.matches(':').count() <= 1
}

//! Functions: a GraphDef's `library` ([`FunctionLibrary`]), instantiated
//! per attr set into graphs of their own that run through the same
//! executor (`FunctionRuntime`), and the kernels of the nodes that call
//! them (a node whose op is a function's name, and the functional ops
//! `While`, `If`, `Case`, `PartitionedCall` and their stateless and
//! stateful forms; see [`ops`]).

mod library;
pub mod ops;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError, Weak};

use opreg_proto::{AttrValue, GraphDef};
use prost::Message;
use rustc_hash::FxHashMap;

pub(crate) use library::func_attr;
pub use library::{FunctionError, FunctionLibrary};

use crate::{Graph, GraphError, RunError, Session, SessionOptions};
use registry_core::kernel::KernelRegistry;
use registry_core::registry::OpRegistry;
use registry_core::tensor::Tensor;

impl FunctionLibrary {
    /// The body of function `name` instantiated with `attrs`, checked as a
    /// graph (ops, NodeDefs, edges, shapes) with a `Placeholder` per
    /// argument element; what a call runs.
    ///
    /// ```
    /// use opreg_runtime::Graph;
    /// use registry_core::proto::{GraphDef, TextFormat};
    /// # use opreg_standard_ops as _;
    ///
    /// let graph = Graph::new(GraphDef::from_pbtxt(r#"
    ///   node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
    ///   library { function {
    ///     signature { name: "Neg2" input_arg { name: "a" type: DT_FLOAT }
    ///                 output_arg { name: "b" type: DT_FLOAT } }
    ///     node_def { name: "n" op: "Neg" input: "a" attr { key: "T" value { type: DT_FLOAT } } }
    ///     ret { key: "b" value: "n:y:0" } } }
    /// "#).unwrap()).unwrap();
    /// let body = graph.library().body("Neg2", &Default::default()).unwrap();
    /// assert_eq!(body.nodes().len(), 2); // the argument and the Neg
    /// ```
    pub fn body(
        &self,
        name: &str,
        attrs: &BTreeMap<String, AttrValue>,
    ) -> Result<Graph, GraphError> {
        self.body_graph(OpRegistry::global(), name, attrs, None)
            .map(|(graph, _)| graph)
    }

    /// [`body`](Self::body) checked against `ops`, with the calling graph's
    /// `versions`; also the instantiation's arguments and results (its
    /// nodes are in the graph).
    pub(crate) fn body_graph(
        &self,
        ops: &OpRegistry,
        name: &str,
        attrs: &BTreeMap<String, AttrValue>,
        versions: Option<opreg_proto::VersionDef>,
    ) -> Result<(Graph, library::Instantiation), GraphError> {
        let mut instantiation = self.instantiate(ops, name, attrs)?;
        Graph::checked_with_library(
            ops,
            GraphDef {
                node: std::mem::take(&mut instantiation.nodes),
                versions,
                ..Default::default()
            },
            self.clone(),
        )
        .map(|graph| (graph, instantiation))
        .map_err(|source| GraphError::InFunction {
            function: name.to_owned(),
            source: Box::new(source),
        })
    }
}

/// Instantiates and caches the functions of one graph's library: each
/// (function, attrs) pair once, as a [`Session`] of its own whose kernels
/// are created once and whose plan is cached, shared by every node that
/// calls it (TF's `FunctionLibraryRuntime`).
pub(crate) struct FunctionRuntime {
    library: FunctionLibrary,
    ops: &'static OpRegistry,
    kernels: &'static KernelRegistry,
    options: SessionOptions,
    versions: Option<opreg_proto::VersionDef>,
    /// Instances by function name and encoded attrs.
    instances: Mutex<FxHashMap<Vec<u8>, Arc<FunctionInstance>>>,
    /// This runtime, for the sessions of its instances (which must not
    /// keep it alive: it owns them).
    this: Weak<FunctionRuntime>,
}

impl std::fmt::Debug for FunctionRuntime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FunctionRuntime")
            .field("functions", &self.library.len())
            .finish()
    }
}

impl FunctionRuntime {
    pub(crate) fn new(
        library: FunctionLibrary,
        ops: &'static OpRegistry,
        kernels: &'static KernelRegistry,
        options: SessionOptions,
        versions: Option<opreg_proto::VersionDef>,
    ) -> Arc<Self> {
        Arc::new_cyclic(|this| Self {
            library,
            ops,
            kernels,
            options,
            versions,
            instances: Mutex::new(FxHashMap::default()),
            this: this.clone(),
        })
    }

    /// The library.
    pub(crate) fn library(&self) -> &FunctionLibrary {
        &self.library
    }

    /// The session options the instances run with.
    pub(crate) fn options(&self) -> &SessionOptions {
        &self.options
    }

    /// The instance of `name` with `attrs`, instantiated and checked as a
    /// graph on first use.
    pub(crate) fn instance(
        &self,
        name: &str,
        attrs: &BTreeMap<String, AttrValue>,
    ) -> Result<Arc<FunctionInstance>, GraphError> {
        let key = instance_key(name, attrs);
        if let Some(found) = self
            .instances
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&key)
        {
            return Ok(Arc::clone(found));
        }
        let (graph, instantiation) =
            self.library
                .body_graph(self.ops, name, attrs, self.versions.clone())?;
        let session = Session::for_function(graph, self.this.clone());
        let instance = Arc::new(FunctionInstance {
            name: name.to_owned(),
            session,
            args: instantiation.args,
            rets: instantiation.rets,
            control_rets: instantiation.control_rets,
        });
        Ok(Arc::clone(
            self.instances
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .entry(key)
                .or_insert(instance),
        ))
    }

    pub(crate) fn ops(&self) -> &'static OpRegistry {
        self.ops
    }

    pub(crate) fn kernels(&self) -> &'static KernelRegistry {
        self.kernels
    }
}

/// The cache key of an instantiation: the name and every attr, encoded.
fn instance_key(name: &str, attrs: &BTreeMap<String, AttrValue>) -> Vec<u8> {
    let mut key = name.as_bytes().to_vec();
    for (attr, value) in attrs {
        key.push(0);
        key.extend_from_slice(attr.as_bytes());
        key.push(0);
        value.encode_length_delimited(&mut key).ok();
    }
    key
}

/// One function instantiated with its attrs, ready to call.
pub(crate) struct FunctionInstance {
    name: String,
    session: Session,
    args: Vec<String>,
    rets: Vec<String>,
    control_rets: Vec<String>,
}

impl std::fmt::Debug for FunctionInstance {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FunctionInstance")
            .field("name", &self.name)
            .finish()
    }
}

impl FunctionInstance {
    /// The function's name.
    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    /// The number of argument elements.
    pub(crate) fn num_args(&self) -> usize {
        self.args.len()
    }

    /// Runs the body on `args` and returns its results.
    pub(crate) fn call(&self, args: Vec<Tensor>) -> Result<Vec<Tensor>, RunError> {
        let feeds: Vec<&str> = self.args.iter().map(String::as_str).collect();
        let fetches: Vec<&str> = self.rets.iter().map(String::as_str).collect();
        let targets: Vec<&str> = self.control_rets.iter().map(String::as_str).collect();
        let prepared = self
            .session
            .prepare_with_targets(&feeds, &fetches, &targets)?;
        prepared.run_on_this_thread(args)
    }
}

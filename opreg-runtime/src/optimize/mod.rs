//! Graph rewrites run when a [`Session`](crate::Session) plans a
//! feeds/fetches signature (TensorFlow's Grappler runs at the same point):
//! each pass rewrites the graph into one that computes the same fetched
//! values with less work, leaving the fed, fetched and target nodes in
//! place.
//!
//! - [`constant folding`](constants): every node whose inputs are all
//!   constants is computed once, with the CPU kernels, and replaced by a
//!   `Const` (bounded: a result over
//!   [`max_constant_bytes`](GraphOptimizations::max_constant_bytes) stays
//!   a computation);
//! - [`weight folding`](weights): a `Mul` by a constant per-channel scale
//!   after a `Conv2D`, `DepthwiseConv2dNative` or `MatMul` with constant
//!   weights is folded into the weights (the batch-norm arithmetic a
//!   frozen Keras model keeps), and an `Add`/`AddV2`/`Sub` of a constant
//!   per-channel vector after one of them becomes a `BiasAdd`;
//! - [`pad folding`](pads): a zero `Pad` of an image's rows and columns
//!   read only by a `Conv2D` or `DepthwiseConv2dNative` becomes that
//!   convolution's explicit padding (CPU only);
//! - [`fusion`]: a `Conv2D`, `DepthwiseConv2dNative` or `MatMul` with its
//!   `BiasAdd` and activation becomes one `_FusedConv2D`,
//!   `_FusedDepthwiseConv2dNative` or `_FusedMatMul` node (CPU only).
//!
//! Each pass has a switch in [`GraphOptimizations`]; the result of every
//! pass is checked like any graph (op definitions, dtypes, shapes).
//! [`optimize_graph`] runs them on their own (`opreg optimize`).

mod constants;
mod edit;
mod fusion;
mod pads;
mod weights;

use registry_core::kernel::KernelRegistry;
use registry_core::registry::OpRegistry;

use crate::{Graph, GraphError, SessionOptions};
pub(crate) use edit::Preserve;

/// Which rewrites a session runs on each feeds/fetches signature before
/// planning it. All are on by default; [`none`](Self::none) runs the graph
/// as written.
///
/// ```
/// use opreg_runtime::{GraphOptimizations, SessionOptions};
/// let options = SessionOptions {
///     optimizations: GraphOptimizations { weight_folding: false, ..Default::default() },
///     ..Default::default()
/// };
/// assert!(options.optimizations.constant_folding);
/// assert!(!GraphOptimizations::none().is_enabled());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GraphOptimizations {
    /// Compute the nodes whose inputs are all constants once, replacing
    /// them by `Const` nodes.
    pub constant_folding: bool,
    /// Fold per-channel scales into the constant weights of the
    /// convolution or MatMul before them, and turn per-channel constant
    /// additions after them into `BiasAdd`.
    pub weight_folding: bool,
    /// Make a zero `Pad` of an image's rows and columns read only by a
    /// `Conv2D` or `DepthwiseConv2dNative` that runs on the CPU that
    /// convolution's explicit padding (no padded copy is made).
    pub pad_folding: bool,
    /// Fuse each `Conv2D`, `DepthwiseConv2dNative` or `MatMul` that runs on
    /// the CPU with the `BiasAdd` after it and the activation after that
    /// (`Relu`, `Relu6`, `Elu`, `LeakyRelu`, `Tanh`, `Sigmoid`).
    pub fusion: bool,
    /// The largest constant folding may create, in bytes (TensorFlow's
    /// limit, 10 MiB, by default): a bigger result stays a computation.
    pub max_constant_bytes: u64,
}

impl Default for GraphOptimizations {
    fn default() -> Self {
        Self {
            constant_folding: true,
            weight_folding: true,
            pad_folding: true,
            fusion: true,
            max_constant_bytes: 10 << 20,
        }
    }
}

impl GraphOptimizations {
    /// No rewrites: the graph runs as written.
    pub fn none() -> Self {
        Self {
            constant_folding: false,
            weight_folding: false,
            pad_folding: false,
            fusion: false,
            ..Self::default()
        }
    }

    /// True when at least one rewrite is on.
    pub fn is_enabled(&self) -> bool {
        self.constant_folding || self.weight_folding || self.pad_folding || self.fusion
    }
}

/// What [`optimize_graph`] changed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OptimizeReport {
    /// Nodes in the graph before (after pruning to what the fetches need).
    pub nodes_before: usize,
    /// Nodes in the rewritten graph.
    pub nodes_after: usize,
    /// Nodes computed once and replaced by a `Const`.
    pub folded_constants: usize,
    /// Per-channel scales folded into convolution or MatMul weights.
    pub folded_scales: usize,
    /// Constant per-channel additions turned into `BiasAdd`.
    pub bias_adds: usize,
    /// `Pad` nodes folded into the convolution after them.
    pub folded_pads: usize,
    /// Contractions fused with their bias (and residual Add and activation).
    pub fused: usize,
}

/// Rewrites `graph` for the given feeds, fetches and targets (named as in
/// [`Session::run`](crate::Session::run)) as a session with `options`
/// would: the nodes they need, with the passes
/// [`options.optimizations`](SessionOptions::optimizations) turns on
/// (constants are computed in the options'
/// [`denormals`](SessionOptions::denormals) mode). Fed, fetched and target nodes keep
/// their names, and every fetch its value (up to float rounding where
/// weights are folded).
///
/// ```
/// use opreg_runtime::{Graph, SessionOptions, optimize_graph};
/// use registry_core::proto::{GraphDef, TextFormat};
/// use registry_core::kernel::KernelRegistry;
/// use registry_core::registry::OpRegistry;
/// # kernels_cpu::link();
/// let graph = Graph::new(GraphDef::from_pbtxt(r#"
///   node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
///   node { name: "two" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
///          attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape {} float_val: 2 } } } }
///   node { name: "four" op: "Mul" input: "two" input: "two" attr { key: "T" value { type: DT_FLOAT } } }
///   node { name: "y" op: "Mul" input: "x" input: "four" attr { key: "T" value { type: DT_FLOAT } } }
/// "#)?)?;
/// let (optimized, report) = optimize_graph(
///     &graph, &["x"], &["y"], &[], &SessionOptions::default(),
///     OpRegistry::global(), KernelRegistry::global(),
/// )?;
/// assert_eq!(optimized.node("four").unwrap().op(), "Const");
/// assert_eq!(report.folded_constants, 1);
/// assert_eq!(report.nodes_after, 3); // "two" is no longer needed
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn optimize_graph(
    graph: &Graph,
    feeds: &[&str],
    fetches: &[&str],
    targets: &[&str],
    options: &SessionOptions,
    ops: &'static OpRegistry,
    kernels: &'static KernelRegistry,
) -> Result<(Graph, OptimizeReport), GraphError> {
    let preserve = Preserve::new(graph, feeds, fetches, targets)?;
    optimize_preserving(graph, &preserve, options, ops, kernels)
}

/// [`optimize_graph`] with the preserved nodes resolved.
pub(crate) fn optimize_preserving(
    graph: &Graph,
    preserve: &Preserve,
    options: &SessionOptions,
    ops: &'static OpRegistry,
    kernels: &'static KernelRegistry,
) -> Result<(Graph, OptimizeReport), GraphError> {
    let optimizations = &options.optimizations;
    let mut current = edit::pruned(graph, preserve, ops)?;
    let mut report = OptimizeReport {
        nodes_before: current.nodes().len(),
        ..OptimizeReport::default()
    };
    if optimizations.constant_folding
        && let Some((folded, count)) = constants::fold(&current, preserve, options, ops, kernels)?
    {
        current = edit::pruned(&folded, preserve, ops)?;
        report.folded_constants = count;
    }
    if optimizations.weight_folding
        && let Some(folded) = weights::fold(&current, preserve, ops)?
    {
        current = edit::pruned(&folded.graph, preserve, ops)?;
        report.folded_scales = folded.scales;
        report.bias_adds = folded.biases;
    }
    if optimizations.pad_folding
        && let Some((folded, count)) = pads::fold(&current, preserve, options, ops, kernels)?
    {
        current = edit::pruned(&folded, preserve, ops)?;
        report.folded_pads = count;
    }
    if optimizations.fusion
        && let Some((fused, count)) = fusion::fuse(&current, preserve, options, ops, kernels)?
    {
        current = edit::pruned(&fused, preserve, ops)?;
        report.fused = count;
    }
    report.nodes_after = current.nodes().len();
    Ok((current, report))
}

//! [`Session`]: build once from a [`Graph`], run many times with new feeds
//! (TF's `DirectSession`, single-threaded, CPU-first).

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::{Duration, Instant};

use rayon::prelude::*;
use rustc_hash::FxHashMap;
use smallvec::SmallVec;

use crate::batch_split::{Decision, Dims, Part, SlotShapes, SplitDecisions};
use crate::budget::MemoryBudget;
use crate::control_flow::CONTROL_FLOW_OPS;
use crate::dataflow::{FlowPlan, FlowRequest};
use crate::functions::FunctionRuntime;
use crate::functions::ops::{CALL_REGISTRATION, build_call, is_call};
use crate::optimize::{GraphOptimizations, Preserve, optimize_preserving};
use crate::placement::{candidates, requested_device_type};
use crate::plan::{InputDevices, Plan, RunScratch, Slots, Step, needed_nodes};
use crate::{Endpoint, Graph, GraphError, RunError, threads};
use registry_core::denormal::DenormalMode;
use registry_core::device::{DEVICE_CPU, Device, DeviceError, open_device};
use registry_core::kernel::{
    CreateKernelError, KernelError, KernelInstance, KernelRegistry, NodeInfo, create_op_kernel_in,
};
use registry_core::registry::OpRegistry;
use registry_core::tensor::Tensor;

/// How a [`Session`] places nodes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionOptions {
    /// Device types in order of preference, for nodes whose requested
    /// device has no kernel (or that request none). Default: `["CPU"]`.
    /// `["GPU", "CPU"]` runs every node that has a GPU kernel on the GPU and
    /// the others on the CPU, moving tensors between them where needed; a
    /// device listed here that cannot be opened fails every run with
    /// [`RunError::Device`] (`"no GPU device: ..."`). A device a NodeDef
    /// asks for but that is not available is skipped (TF's soft placement).
    pub devices: Vec<String>,
    /// The most bytes of tensors a run may hold at once (feeds and every
    /// intermediate still needed, in graphs with TF 1 loops those of every
    /// live iteration; a buffer several values share counted once), checked
    /// after each node: a run that goes over fails with
    /// [`RunError::MemoryLimit`] naming the node. A function body (of a
    /// `While`, `If`, `PartitionedCall`...) is checked against the same
    /// limit on its own, per call.
    /// Default: `None`, no limit beyond the per-allocation cap of
    /// [`limits`](registry_core::limits).
    pub max_memory_bytes: Option<u64>,
    /// How the CPU kernels treat denormal floats. Default:
    /// [`DenormalMode::FlushToZero`], TensorFlow's behaviour (inputs and
    /// results flushed to zero on every thread that runs a kernel: the
    /// calling thread during a run, and rayon's global pool, where kernels
    /// run their parallel work, from the first such run on; see
    /// [`registry_core::denormal`]); [`DenormalMode::Ieee`] keeps them.
    pub denormals: DenormalMode,
    /// The most iterations one execution of a loop may run (a TF 1 loop
    /// frame, or a `While` op's call), after which the run fails with
    /// [`RunError::LoopLimit`] (TF 1 loops) or a `ResourceExhausted`
    /// kernel error (`While`) instead of running on. Default:
    /// [`DEFAULT_MAX_LOOP_ITERATIONS`]; `None` for no limit.
    pub max_loop_iterations: Option<u64>,
    /// The longest one execution of a loop may run, checked as each
    /// iteration starts. Default: `None`, no limit.
    pub loop_timeout: Option<Duration>,
    /// The graph rewrites run on each feeds/fetches signature before it is
    /// planned (constant folding, weights folding; see [`optimize`](crate::optimize_graph)).
    /// Default: all on; [`GraphOptimizations::none`] runs the graph as
    /// written. Graphs with TF 1 control flow (`Switch`, `Merge`, loop
    /// frames) run as written either way.
    pub optimizations: GraphOptimizations,
    /// Whether runs split their batch over rayon's threads: when every
    /// step computes each sample (dimension 0 of the feeds) on its own, as
    /// a feed-forward network's layers do, the samples run in parts, one
    /// part per thread, and the fetches are put back together (see
    /// [`PreparedRun::run`]). Each part computes what a run of its
    /// samples alone computes: the same operations, though a kernel may
    /// block fewer rows otherwise, so the low bits of a float can differ
    /// from the whole batch's (a few ulps; runs split alike give the same
    /// bits; [`BatchSplit::Off`] where the whole batch's bits matter).
    /// Default: [`BatchSplit::Auto`]; never with a
    /// [`max_memory_bytes`](Self::max_memory_bytes) limit (which counts
    /// one run's tensors), with [`DenormalMode::Ieee`] or on one thread.
    pub batch_split: BatchSplit,
}

/// How runs that can split their batch do ([`PreparedRun::batch_parts`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchParts {
    /// Each part's samples.
    pub rows: Vec<usize>,
    /// Whether runs split now: always with [`BatchSplit::Always`]; with
    /// [`BatchSplit::Auto`], while split runs are the faster (each way is
    /// timed in turn, as the placement of runs is).
    pub splitting: bool,
}

/// When runs split their batch over threads ([`SessionOptions::batch_split`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum BatchSplit {
    /// Never: the kernels split their own work.
    Off,
    /// While split runs are faster than whole ones: once whole runs take
    /// 125 us or more, both are timed in turn, as the placement of runs
    /// is (see [`PreparedRun::run`]), and the faster kept. Splitting
    /// copies the feeds and the fetches, more than it gains where a few
    /// large kernels already use every thread.
    #[default]
    Auto,
    /// Every run whose feed shapes were found separable, wherever it
    /// starts (from a thread outside the pool, the parts are handed to
    /// the pool and the caller waits).
    Always,
}

/// The default of [`SessionOptions::max_loop_iterations`]: far more than
/// any model's loops run, and reached by a loop that never ends within
/// seconds, not hours.
pub const DEFAULT_MAX_LOOP_ITERATIONS: u64 = 10_000_000;

impl Default for SessionOptions {
    fn default() -> Self {
        Self {
            devices: vec![DEVICE_CPU.to_owned()],
            max_memory_bytes: None,
            denormals: DenormalMode::default(),
            max_loop_iterations: Some(DEFAULT_MAX_LOOP_ITERATIONS),
            loop_timeout: None,
            optimizations: GraphOptimizations::default(),
            batch_split: BatchSplit::Auto,
        }
    }
}

type PlanKey = (Vec<String>, Vec<String>, Vec<String>);

/// The value of `key` in `cache`, built (outside the lock) and kept on
/// first use; a failed build is not kept.
fn cached<V: Clone, E>(
    cache: &Mutex<FxHashMap<PlanKey, V>>,
    key: &PlanKey,
    build: impl FnOnce() -> Result<V, E>,
) -> Result<V, E> {
    let lock = || cache.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(value) = lock().get(key) {
        return Ok(value.clone());
    }
    let value = build()?;
    lock().insert(key.clone(), value.clone());
    Ok(value)
}

fn plan_key(feeds: &[&str], fetches: &[&str], targets: &[&str]) -> PlanKey {
    let owned = |names: &[&str]| names.iter().map(|s| (*s).to_owned()).collect();
    (owned(feeds), owned(fetches), owned(targets))
}

/// How a plan runs: a straight sequence, or dataflow with frames when its
/// nodes include TF 1 control flow.
pub(crate) enum Planned {
    Straight(Plan),
    Flow(FlowPlan),
}

/// A cached plan and where its runs start.
pub(crate) struct PlanEntry {
    planned: Planned,
    start: threads::RunStart,
    /// Whether its runs split their batch, by feed shapes.
    batch: SplitDecisions,
}

/// The session's function runtime: its own (a session on a graph), or
/// the one of the graph whose function it runs (which owns it).
#[derive(Debug)]
enum Functions {
    Owner(Arc<FunctionRuntime>),
    Nested(Weak<FunctionRuntime>),
}

impl Functions {
    fn get(&self) -> Option<Arc<FunctionRuntime>> {
        match self {
            Functions::Owner(runtime) => Some(Arc::clone(runtime)),
            Functions::Nested(runtime) => runtime.upgrade(),
        }
    }
}

/// Devices other than the CPU by type: opened, or why they could not be.
type OpenedDevices = FxHashMap<String, Result<Arc<dyn Device>, DeviceError>>;

/// A graph ready to run: kernels are created once per node (TF's
/// `OpSegment`) the first time a run needs them, and the pruned plan of
/// each feeds/fetches signature is cached.
///
/// ```
/// use opreg_runtime::{Graph, Session};
/// use registry_core::proto::{GraphDef, TextFormat};
/// # use opreg_standard_ops as _; // the ops used below
///
/// let graph = Graph::new(GraphDef::from_pbtxt(r#"
///   node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
///   node { name: "nothing" op: "NoOp" input: "^x" }
/// "#).unwrap()).unwrap();
/// let session = Session::new(graph);
/// // Fetching a fed tensor runs nothing.
/// let x = registry_core::tensor::Tensor::from_vec([2], vec![1.0f32, -2.0]).unwrap();
/// let out = session.run(&[("x", x.clone())], &["x:0"]).unwrap();
/// assert_eq!(out[0], x);
/// assert!(session.run(&[], &["y"]).unwrap_err().to_string().contains("no node 'y'"));
/// ```
pub struct Session {
    graph: Graph,
    options: SessionOptions,
    ops: &'static OpRegistry,
    kernels: &'static KernelRegistry,
    instances: Mutex<Vec<Option<Arc<KernelInstance>>>>,
    plans: Mutex<FxHashMap<PlanKey, Arc<PlanEntry>>>,
    /// The session of each signature's rewritten graph, when
    /// [`SessionOptions::optimizations`] are on.
    optimized: Mutex<FxHashMap<PlanKey, Option<Arc<Session>>>>,
    /// Devices other than the CPU, opened on first use (or the error).
    devices: Mutex<OpenedDevices>,
    /// The graph's functions, instantiated on first call.
    functions: Functions,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("nodes", &self.graph.nodes().len())
            .field("options", &self.options)
            .finish()
    }
}

impl Session {
    /// A session on the global op and kernel registries, CPU only.
    pub fn new(graph: Graph) -> Self {
        Self::with_options(graph, SessionOptions::default())
    }

    /// A session with placement options.
    pub fn with_options(graph: Graph, options: SessionOptions) -> Self {
        Self::with_registries(
            graph,
            options,
            OpRegistry::global(),
            KernelRegistry::global(),
        )
    }

    /// A session on explicit registries.
    pub fn with_registries(
        graph: Graph,
        options: SessionOptions,
        ops: &'static OpRegistry,
        kernels: &'static KernelRegistry,
    ) -> Self {
        let functions = FunctionRuntime::new(
            graph.library().clone(),
            ops,
            kernels,
            options.clone(),
            graph.versions().cloned(),
        );
        Self::assemble(graph, options, ops, kernels, Functions::Owner(functions))
    }

    /// The session of a function's instantiated body, on its owner's
    /// runtime.
    pub(crate) fn for_function(graph: Graph, runtime: Weak<FunctionRuntime>) -> Self {
        let owner = runtime.upgrade();
        let (options, ops, kernels) = match &owner {
            Some(r) => (r.options().clone(), r.ops(), r.kernels()),
            None => (
                SessionOptions::default(),
                OpRegistry::global(),
                KernelRegistry::global(),
            ),
        };
        Self::assemble(graph, options, ops, kernels, Functions::Nested(runtime))
    }

    fn assemble(
        graph: Graph,
        options: SessionOptions,
        ops: &'static OpRegistry,
        kernels: &'static KernelRegistry,
        functions: Functions,
    ) -> Self {
        let n = graph.nodes().len();
        Self {
            graph,
            options,
            ops,
            kernels,
            instances: Mutex::new(vec![None; n]),
            plans: Mutex::new(FxHashMap::default()),
            optimized: Mutex::new(FxHashMap::default()),
            devices: Mutex::new(FxHashMap::default()),
            functions,
        }
    }

    /// The opened device of type `device_type`, cached.
    fn device(&self, device_type: &str) -> Result<Arc<dyn Device>, DeviceError> {
        let mut devices = self.devices.lock().unwrap_or_else(PoisonError::into_inner);
        devices
            .entry(device_type.to_owned())
            .or_insert_with(|| open_device(device_type))
            .clone()
    }

    /// The graph.
    pub fn graph(&self) -> &Graph {
        &self.graph
    }

    /// The device type node `name` was placed on, once a run needed it (in
    /// the graph as written, or as a signature's rewrites left it).
    pub fn placement(&self, name: &str) -> Option<String> {
        let here = self.graph.index_of(name).and_then(|index| {
            let instances = self
                .instances
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            instances[index]
                .as_ref()
                .map(|k| k.info().device_type().to_owned())
        });
        here.or_else(|| {
            let optimized = self
                .optimized
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            optimized
                .values()
                .flatten()
                .find_map(|session| session.placement(name))
        })
    }

    /// Runs the graph: `feeds` replace tensors (`"node:port"` or `"node"`),
    /// `fetches` are returned in order.
    pub fn run(&self, feeds: &[(&str, Tensor)], fetches: &[&str]) -> Result<Vec<Tensor>, RunError> {
        let names: Vec<&str> = feeds.iter().map(|(n, _)| *n).collect();
        let prepared = self.prepare(&names, fetches)?;
        prepared.run(feeds.iter().map(|(_, t)| t.clone()))
    }

    /// Plans a feeds/fetches signature once (pruning, placement, kernels)
    /// for repeated runs.
    pub fn prepare(&self, feeds: &[&str], fetches: &[&str]) -> Result<PreparedRun<'_>, RunError> {
        self.prepare_with_targets(feeds, fetches, &[])
    }

    /// [`prepare`](Self::prepare) that also runs the `targets` nodes (TF's
    /// target nodes: run for their effects, nothing fetched).
    pub fn prepare_with_targets(
        &self,
        feeds: &[&str],
        fetches: &[&str],
        targets: &[&str],
    ) -> Result<PreparedRun<'_>, RunError> {
        let key = plan_key(feeds, fetches, targets);
        if self.options.optimizations.is_enabled()
            && self.graph.control_flow().is_none()
            && let Some(optimized) = self.optimized_session(&key, feeds, fetches, targets)
        {
            let plan = optimized.plan(&key, feeds, fetches, targets)?;
            return Ok(PreparedRun {
                session: SessionRef::Shared(optimized),
                plan,
            });
        }
        Ok(PreparedRun {
            session: SessionRef::Borrowed(self),
            plan: self.plan(&key, feeds, fetches, targets)?,
        })
    }

    /// The session of the signature's rewritten graph, built once; `None`
    /// (also remembered) when the rewrites fail: the graph then runs as
    /// written, and reports a bad feed or fetch itself.
    fn optimized_session(
        &self,
        key: &PlanKey,
        feeds: &[&str],
        fetches: &[&str],
        targets: &[&str],
    ) -> Option<Arc<Session>> {
        let Ok(session) = cached(&self.optimized, key, || {
            Ok::<_, std::convert::Infallible>(self.build_optimized(feeds, fetches, targets))
        });
        session
    }

    fn build_optimized(
        &self,
        feeds: &[&str],
        fetches: &[&str],
        targets: &[&str],
    ) -> Option<Arc<Session>> {
        let preserve = Preserve::new(&self.graph, feeds, fetches, targets).ok()?;
        let (graph, _) = optimize_preserving(
            &self.graph,
            &preserve,
            &self.options,
            self.ops,
            self.kernels,
        )
        .ok()?;
        let options = SessionOptions {
            optimizations: GraphOptimizations::none(),
            ..self.options.clone()
        };
        let runtime = match &self.functions {
            Functions::Owner(runtime) => Arc::downgrade(runtime),
            Functions::Nested(runtime) => runtime.clone(),
        };
        Some(Arc::new(Self::assemble(
            graph,
            options,
            self.ops,
            self.kernels,
            Functions::Nested(runtime),
        )))
    }

    /// The plan of a signature of this session's graph, cached.
    fn plan(
        &self,
        key: &PlanKey,
        feeds: &[&str],
        fetches: &[&str],
        targets: &[&str],
    ) -> Result<Arc<PlanEntry>, RunError> {
        cached(&self.plans, key, || {
            let planned = self.build_plan(feeds, fetches, targets)?;
            // Dataflow runs (loops) are many small kernels, one at a time:
            // measured slower when started on the pool (lstm_while).
            let start = match planned {
                Planned::Straight(_) => threads::RunStart::default(),
                Planned::Flow(_) => threads::RunStart::caller_only(),
            };
            Ok(Arc::new(PlanEntry {
                planned,
                start,
                batch: SplitDecisions::default(),
            }))
        })
    }

    fn build_plan(
        &self,
        feeds: &[&str],
        fetches: &[&str],
        targets: &[&str],
    ) -> Result<Planned, RunError> {
        // The devices the session was asked for must exist.
        for device in &self.options.devices {
            if !device.eq_ignore_ascii_case(DEVICE_CPU) {
                self.device(device)?;
            }
        }
        let feeds_named = feeds;
        let mut feed_endpoints = Vec::with_capacity(feeds.len());
        for name in feeds {
            let e = self.graph.endpoint(name, "feed")?;
            if feed_endpoints.contains(&e) {
                return Err(RunError::DuplicateFeed((*name).to_owned()));
            }
            feed_endpoints.push(e);
        }
        let fetch_endpoints = fetches
            .iter()
            .map(|name| self.graph.endpoint(name, "fetch"))
            .collect::<Result<Vec<_>, _>>()?;
        let target_nodes = targets
            .iter()
            .map(|name| {
                self.graph
                    .index_of(name)
                    .ok_or_else(|| GraphError::UnknownEndpoint {
                        kind: "target",
                        name: (*name).to_owned(),
                        reason: format!("the graph has no node '{name}'"),
                    })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let order = needed_nodes(
            &self.graph,
            &feed_endpoints,
            &fetch_endpoints,
            &target_nodes,
        );
        if let Some(flow) = self.graph.control_flow()
            && order
                .iter()
                .any(|&i| CONTROL_FLOW_OPS.contains(&self.graph.nodes()[i].def.op.as_str()))
        {
            let request = FlowRequest {
                graph: &self.graph,
                flow,
                order: &order,
                feeds: &feed_endpoints,
                feed_names: feeds,
                fetches: &fetch_endpoints,
                fetch_names: fetches,
                max_iterations: self.options.max_loop_iterations,
                timeout: self.options.loop_timeout,
                max_memory_bytes: self.options.max_memory_bytes,
            };
            return Ok(Planned::Flow(FlowPlan::build(
                request,
                |i| self.kernel_for(i),
                |k| self.input_devices(k),
            )?));
        }
        let mut slots = Slots::default();
        let feeds: Vec<(usize, opreg_proto::DataType)> = feed_endpoints
            .iter()
            .map(|&e| (slots.slot(e), self.graph.dtype(e)))
            .collect();
        let mut steps = Vec::with_capacity(order.len());
        // Outputs of elided forwarding nodes: the endpoint holding their value.
        let mut aliases: FxHashMap<Endpoint, Endpoint> = FxHashMap::default();
        // Whether each planned node's value lives in host memory.
        let mut on_host = vec![true; self.graph.nodes().len()];
        for &i in &order {
            let node = &self.graph.nodes()[i];
            // Every node gets its kernel, elided or not: a node no kernel
            // accepts fails the plan either way.
            let kernel = self.kernel_for(i)?;
            on_host[i] = kernel.info().on_cpu();
            let resolve = |e: &Endpoint| aliases.get(e).copied().unwrap_or(*e);
            if is_forwarding(&node.def.op, &kernel)
                && node.inputs.iter().all(|e| on_host[resolve(e).node])
            {
                let targets: SmallVec<[Endpoint; 4]> = node.inputs.iter().map(resolve).collect();
                for (port, target) in targets.into_iter().enumerate() {
                    let out = Endpoint { node: i, port };
                    if !feed_endpoints.contains(&out) {
                        aliases.insert(out, target);
                    }
                }
                continue;
            }
            let inputs: SmallVec<[usize; 4]> = node
                .inputs
                .iter()
                .map(|e| {
                    let slot = slots.slot(resolve(e));
                    slots.consumers[slot] += 1;
                    slot
                })
                .collect();
            steps.push(Step {
                node: i,
                kernel,
                inputs,
                outputs: SmallVec::new(),
                input_devices: SmallVec::new(),
            });
        }
        let uses_devices = steps.iter().any(|step| !step.kernel.info().on_cpu());
        if uses_devices {
            for step in &mut steps {
                step.input_devices = self.input_devices(&step.kernel)?;
            }
        }
        let fetches: Vec<usize> = fetch_endpoints
            .iter()
            .map(|&e| {
                let slot = slots.slot(aliases.get(&e).copied().unwrap_or(e));
                slots.consumers[slot] += 1;
                slot
            })
            .collect();
        for step in &mut steps {
            let n = self.graph.nodes()[step.node].output_types.len();
            step.outputs = (0..n)
                .map(|port| {
                    let e = Endpoint {
                        node: step.node,
                        port,
                    };
                    // A fed output is never overwritten by its node.
                    slots.get(&e).filter(|_| !feed_endpoints.contains(&e))
                })
                .collect();
        }
        // Constants are made once, here: a run starts with their values in
        // their slots instead of running their kernels.
        let mut constants = Vec::new();
        steps.retain(|step| {
            let node = &self.graph.nodes()[step.node];
            if !(CONSTANT_OPS.contains(&node.def.op.as_str())
                && node.inputs.is_empty()
                && step.kernel.info().on_cpu())
            {
                return true;
            }
            let mut values: SmallVec<[Option<Tensor>; 2]> = SmallVec::new();
            values.resize_with(step.outputs.len(), || None);
            if run_kernel_step(
                &self.graph,
                step.node,
                &step.kernel,
                &step.input_devices,
                &mut [],
                &mut values,
            )
            .is_err()
            {
                // It fails again when run, where the error belongs.
                return true;
            }
            for (value, slot) in values.into_iter().zip(&step.outputs) {
                if let (Some(value), Some(slot)) = (value, *slot) {
                    constants.push((slot, value));
                }
            }
            false
        });
        offer_constants(&steps, &constants);
        Ok(Planned::Straight(Plan {
            feed_names: feeds_named.iter().map(|s| (*s).to_owned()).collect(),
            steps,
            constants,
            consumers: slots.consumers,
            feeds,
            fetches,
            scratch: Mutex::default(),
        }))
    }

    /// Where each input of `kernel` must be: `None` for host memory (CPU
    /// kernels, host-memory args, strings), else the kernel's device.
    fn input_devices(&self, kernel: &KernelInstance) -> Result<InputDevices, RunError> {
        let info = kernel.info();
        let device = if info.on_cpu() {
            None
        } else {
            Some(Arc::clone(kernel.device()))
        };
        Ok(info
            .input_types()
            .iter()
            .enumerate()
            .map(|(index, &dtype)| {
                let on_host =
                    info.input_in_host_memory(index) || dtype == opreg_proto::DataType::DtString;
                if on_host { None } else { device.clone() }
            })
            .collect())
    }

    /// The node's kernel, created on first use on the first device (the
    /// requested one, then the preference list) that has one.
    fn kernel_for(&self, index: usize) -> Result<Arc<KernelInstance>, GraphError> {
        let mut instances = self
            .instances
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(k) = &instances[index] {
            return Ok(Arc::clone(k));
        }
        let node = &self.graph.nodes()[index];
        if let Some(runtime) = self.functions.get()
            && is_call(&runtime, &node.def.op)
        {
            let call = build_call(&runtime, node)?;
            let info = NodeInfo::new(
                node.def.name.clone(),
                node.def.op.clone(),
                DEVICE_CPU,
                node.input_types.clone(),
                node.output_types.clone(),
            );
            let device = self.device(DEVICE_CPU).map_err(|e| GraphError::Placement {
                node: node.def.name.clone(),
                op: node.def.op.clone(),
                source: Box::new(CreateKernelError::Device {
                    node: node.def.name.clone(),
                    source: e,
                }),
            })?;
            let k = Arc::new(KernelInstance::new(
                Box::new(call),
                info,
                device,
                &CALL_REGISTRATION,
            ));
            instances[index] = Some(Arc::clone(&k));
            return Ok(k);
        }
        let devices = candidates(
            requested_device_type(&node.def.device),
            &self.options.devices,
        );
        let mut first_error: Option<CreateKernelError> = None;
        for device_type in &devices {
            // A device that is not available is skipped (soft placement);
            // devices the session was asked for were checked before.
            let Ok(device) = self.device(device_type) else {
                continue;
            };
            // A panicking kernel constructor fails the placement, not the
            // caller (the lock is held, but nothing is left half-written).
            let created = catch_unwind(AssertUnwindSafe(|| {
                create_op_kernel_in(self.ops, self.kernels, &device, &node.def).map_err(Box::new)
            }))
            .unwrap_or_else(|payload| {
                Err(Box::new(CreateKernelError::Construction {
                    node: node.def.name.clone(),
                    op: node.def.op.clone(),
                    kernel: "",
                    source: KernelError::from_panic(&*payload),
                }))
            });
            match created.map_err(|e| *e) {
                Ok(k) => {
                    let k = Arc::new(k);
                    instances[index] = Some(Arc::clone(&k));
                    return Ok(k);
                }
                // No kernel here: try the next device.
                Err(e @ CreateKernelError::Lookup(_)) => {
                    first_error.get_or_insert(e);
                }
                Err(e) => {
                    first_error = Some(e);
                    break;
                }
            }
        }
        Err(GraphError::Placement {
            node: node.def.name.clone(),
            op: node.def.op.clone(),
            source: Box::new(
                first_error.unwrap_or_else(|| CreateKernelError::Construction {
                    node: node.def.name.clone(),
                    op: node.def.op.clone(),
                    kernel: "",
                    source: KernelError::internal("no device to try"),
                }),
            ),
        })
    }
}

/// Offers each step's kernel the inputs that are constants of the plan
/// (made once when it was planned), so that it can prepare them before the
/// first run (see `OpKernel::prepare_constant_input`).
fn offer_constants(steps: &[Step], constants: &[(usize, Tensor)]) {
    if constants.is_empty() {
        return;
    }
    let by_slot: FxHashMap<usize, &Tensor> = constants.iter().map(|(s, t)| (*s, t)).collect();
    for step in steps {
        for (index, slot) in step.inputs.iter().enumerate() {
            if let Some(value) = by_slot.get(slot) {
                step.kernel.prepare_constant_input(index, value);
            }
        }
    }
}

/// Ops whose kernels pass their inputs through unchanged (TF's identity
/// family). A plan runs none of them on the host: their outputs are
/// aliases of their inputs, so chains of them cost nothing at run time
/// (tensors are immutable while shared, so `Snapshot`'s copy is not
/// needed either).
pub(crate) const FORWARDING_OPS: &[&str] = &[
    "Identity",
    "IdentityN",
    "StopGradient",
    "PreventGradient",
    "Snapshot",
];

/// Ops whose (input-less, host) nodes a straight plan runs once, when
/// planned, rather than in every run.
const CONSTANT_OPS: &[&str] = &["Const", "HostConst"];

/// Whether a plan may elide this node: a forwarding op whose kernel runs
/// on the host (one on a device moves its inputs there, which the plan
/// keeps) and passes input `i` to output `i`.
fn is_forwarding(op: &str, kernel: &KernelInstance) -> bool {
    let info = kernel.info();
    FORWARDING_OPS.contains(&op) && info.on_cpu() && info.input_types() == info.output_types()
}

/// A planned feeds/fetches signature of a [`Session`]: run it with feed
/// values in the order the feeds were named.
pub struct PreparedRun<'s> {
    session: SessionRef<'s>,
    plan: Arc<PlanEntry>,
}

/// The session a [`PreparedRun`] runs in: the one it was prepared on, or
/// the session of its signature's rewritten graph.
enum SessionRef<'s> {
    Borrowed(&'s Session),
    Shared(Arc<Session>),
}

impl std::ops::Deref for SessionRef<'_> {
    type Target = Session;

    fn deref(&self) -> &Session {
        match self {
            SessionRef::Borrowed(session) => session,
            SessionRef::Shared(session) => session,
        }
    }
}

impl PreparedRun<'_> {
    /// The nodes whose kernels a run executes, in order: the ancestors of
    /// the fetches not cut off by a feed, less the forwarding nodes
    /// (`Identity`, `IdentityN`, `StopGradient`, `PreventGradient`,
    /// `Snapshot` on the host), whose outputs are their inputs, and less
    /// the host constants, made once when the run is planned (outside
    /// loops and conditionals).
    /// (`tests/tests/executor.rs` of `opreg-tests` shows a chain of them
    /// elided.)
    pub fn executed_nodes(&self) -> Vec<&str> {
        let nodes = self.session.graph.nodes();
        match &self.plan.planned {
            Planned::Straight(plan) => plan
                .steps
                .iter()
                .map(|step| nodes[step.node].def.name.as_str())
                .collect(),
            Planned::Flow(plan) => plan
                .steps
                .iter()
                .filter(|step| matches!(step.kind, crate::dataflow::Kind::Kernel(_)))
                .map(|step| nodes[step.node].def.name.as_str())
                .collect(),
        }
    }

    /// Runs the plan. Each intermediate tensor is dropped after its last
    /// consumer, and moved (not shared) into that consumer, so kernels can
    /// reuse its buffer.
    ///
    /// A kernel that panics fails the run with [`KernelError::Panicked`]
    /// (when panics unwind, the default); the session stays usable.
    ///
    /// The run executes in the session's
    /// [`denormals`](SessionOptions::denormals) mode: with the default
    /// (flush to zero) on the calling thread, put in the mode for the run,
    /// or, when this signature's last run took long, on a thread of rayon's
    /// global pool (where kernels run their parallel work, in the mode too);
    /// with IEEE denormals on a thread of a pool of its own.
    ///
    /// A run may split its batch over the pool's threads
    /// ([`SessionOptions::batch_split`]): the first run with given feed
    /// shapes runs whole and records every tensor's shape, from which the
    /// session decides whether each step computes each sample on its own
    /// (convolutions, element-wise ops, reductions and reshapes that keep
    /// the batch first, ...); if so, later runs with those shapes may run
    /// parts of the batch at once, one per thread, each part's kernels on
    /// one thread, and join the fetches along dimension 0 (with
    /// [`BatchSplit::Auto`], while that is faster than whole runs). A part
    /// that fails makes the run go again whole, so that errors are those of
    /// the whole batch.
    pub fn run(&self, feeds: impl IntoIterator<Item = Tensor>) -> Result<Vec<Tensor>, RunError> {
        let feeds: SmallVec<[Tensor; 4]> = feeds.into_iter().collect();
        let plan = match &self.plan.planned {
            Planned::Straight(plan) if self.may_split() => plan,
            _ => {
                return threads::run_in_mode(
                    self.session.options.denormals,
                    &self.plan.start,
                    false,
                    |_| self.run_here(feeds, None),
                );
            }
        };
        let dims: Vec<Dims> = feeds.iter().map(|t| Dims::from_slice(t.dims())).collect();
        let decision = self.plan.batch.decision(&dims);
        let split = match decision.as_deref() {
            Some(Decision::Split(split)) => Some(split),
            _ => None,
        };
        let always = self.session.options.batch_split == BatchSplit::Always;
        let split_now = split.is_some_and(|split| split.splits_now(always));
        let started = Instant::now();
        // A split run goes to the pool, whatever the placement says of
        // whole runs: its parts need the pool's threads.
        let out = threads::run_in_mode(
            self.session.options.denormals,
            &self.plan.start,
            split_now,
            |on_pool| match (split, &decision) {
                (Some(split), _) if split_now && on_pool => {
                    (self.run_split(plan, &split.parts, feeds, dims), true)
                }
                (None, None) => (self.run_and_decide(plan, feeds, dims), false),
                _ => (self.run_plan(plan, feeds, None, None), false),
            },
        );
        let (out, did_split) = out;
        if let (Some(split), Ok(_)) = (split, &out) {
            split.record(did_split, started.elapsed());
        }
        out
    }

    /// How runs with feeds of shapes `feed_dims` use the batch, once one
    /// such run decided it ([`run`](Self::run)): `None` before (or when
    /// runs never split: [`SessionOptions::batch_split`] off, one thread, a
    /// memory limit, loops), `Some(Ok(parts))` when they can run
    /// in parts, `Some(Err(why))` when they run whole, with the step that
    /// keeps them so.
    pub fn batch_parts(&self, feed_dims: &[&[usize]]) -> Option<Result<BatchParts, String>> {
        let dims: Vec<Dims> = feed_dims.iter().map(|d| Dims::from_slice(d)).collect();
        let decision = self.plan.batch.decision(&dims)?;
        Some(match &*decision {
            Decision::Whole(why) => Err(why.clone()),
            Decision::Split(split) => Ok(BatchParts {
                rows: split.parts.iter().map(|part| part.rows).collect(),
                splitting: split.splits_now(self.session.options.batch_split == BatchSplit::Always),
            }),
        })
    }

    /// Whether runs may split their batch at all (the session's options,
    /// the pool's threads: rayon's global pool, so not with IEEE
    /// denormals, whose runs have a pool of their own).
    fn may_split(&self) -> bool {
        let options = &self.session.options;
        options.batch_split != BatchSplit::Off
            && options.denormals == DenormalMode::FlushToZero
            && options.max_memory_bytes.is_none()
            && rayon::current_num_threads() > 1
    }

    /// A whole run of `plan` that records every tensor's shape, from which
    /// it decides whether runs with feeds of shapes `dims` split.
    fn run_and_decide(
        &self,
        plan: &Plan,
        feeds: SmallVec<[Tensor; 4]>,
        dims: Vec<Dims>,
    ) -> Result<Vec<Tensor>, RunError> {
        let mut shapes = SlotShapes::new();
        let out = self.run_plan(plan, feeds, None, Some(&mut shapes))?;
        let threads = rayon::current_num_threads();
        self.plan
            .batch
            .decide(&self.session.graph, plan, dims, &shapes, threads);
        Ok(out)
    }

    /// A run of `plan` as `parts` of its batch at once, one per thread of
    /// the pool, the fetches joined; whole when the feeds do not split or a
    /// part fails (so that its error is the whole batch's; if the whole
    /// batch runs, runs with feeds of shapes `dims` stay whole from then
    /// on).
    fn run_split(
        &self,
        plan: &Plan,
        parts: &[Part],
        feeds: SmallVec<[Tensor; 4]>,
        dims: Vec<Dims>,
    ) -> Result<Vec<Tensor>, RunError> {
        // Each part takes its rows of the feeds on its own thread.
        let results: Option<Vec<Result<Vec<Tensor>, RunError>>> = parts
            .par_iter()
            .enumerate()
            .with_max_len(1)
            .map(|(index, part): (usize, &Part)| {
                let rows = crate::batch_split::part_feeds(&feeds, parts, index)?;
                Some(self.run_plan(&part.plan, rows, None, None))
            })
            .collect();
        let Some(results) = results else {
            return self.run_plan(plan, feeds, None, None);
        };
        match crate::batch_split::join_fetches(results, parts) {
            Ok(out) => Ok(out),
            Err(why) => {
                let out = self.run_plan(plan, feeds, None, None)?;
                self.plan.batch.refuse(
                    dims,
                    format!("a split run failed where the whole batch ran ({why})"),
                );
                Ok(out)
            }
        }
    }

    /// [`run`](Self::run), also measuring where the time and memory went:
    /// each kernel step's time, and the most bytes of tensors the run held
    /// at once. Timing every step costs a little, so time runs with
    /// [`run`](Self::run) and use this for the breakdown.
    ///
    /// In graphs with loops, a step appears once per iteration it ran.
    ///
    /// ```
    /// use opreg_runtime::{Graph, Session};
    /// use registry_core::proto::{AttrValue, DataType, GraphDef, NodeDef};
    /// use registry_core::tensor::Tensor;
    /// # kernels_cpu::link();
    /// let node = |name: &str, op: &str, input: &[&str]| NodeDef {
    ///     name: name.into(),
    ///     op: op.into(),
    ///     input: input.iter().map(|s| s.to_string()).collect(),
    ///     attr: [(if input.is_empty() { "dtype" } else { "T" }.to_owned(), AttrValue::from(DataType::DtFloat))].into(),
    ///     ..Default::default()
    /// };
    /// let graph = Graph::new(GraphDef {
    ///     node: vec![node("x", "Placeholder", &[]), node("y", "Abs", &["x"]), node("z", "Neg", &["y"])],
    ///     ..Default::default()
    /// })?;
    /// let session = Session::new(graph);
    /// let run = session.prepare(&["x"], &["z"])?;
    /// let (out, profile) = run.run_profiled([Tensor::from_vec([256], vec![-1.0f32; 256])?])?;
    /// assert_eq!(out[0].as_slice::<f32>()?[0], -1.0);
    /// let ops: Vec<&str> = profile.steps.iter().map(|s| s.op.as_str()).collect();
    /// assert_eq!(ops, ["Abs", "Neg"]);
    /// // Abs and Neg compute in place: one buffer of 1 KiB all along.
    /// assert_eq!(profile.peak_bytes, Some(1024));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn run_profiled(
        &self,
        feeds: impl IntoIterator<Item = Tensor>,
    ) -> Result<(Vec<Tensor>, RunProfile), RunError> {
        let feeds: SmallVec<[Tensor; 4]> = feeds.into_iter().collect();
        threads::run_in_mode(
            self.session.options.denormals,
            &self.plan.start,
            false,
            |_| {
                let mut profile = RunProfile::default();
                let outputs = self.run_here(feeds, Some(&mut profile))?;
                Ok((outputs, profile))
            },
        )
    }

    /// Runs a function's body from within a kernel of the calling graph
    /// (already in the run's thread and denormal mode).
    pub(crate) fn run_on_this_thread(&self, feeds: Vec<Tensor>) -> Result<Vec<Tensor>, RunError> {
        self.run_here(feeds.into_iter().collect(), None)
    }

    /// [`run`](Self::run) on the calling thread, recording into `profile`
    /// when given.
    fn run_here(
        &self,
        feeds: SmallVec<[Tensor; 4]>,
        profile: Option<&mut RunProfile>,
    ) -> Result<Vec<Tensor>, RunError> {
        match &self.plan.planned {
            Planned::Straight(plan) => self.run_plan(plan, feeds, profile, None),
            Planned::Flow(plan) => plan.run(&self.session.graph, feeds, profile),
        }
    }

    /// Runs a straight `plan` (the signature's, or a part's of a split
    /// run) on the calling thread, recording into `profile` when given and
    /// every slot's shape into `shapes` when given.
    fn run_plan(
        &self,
        plan: &Plan,
        feeds: SmallVec<[Tensor; 4]>,
        mut profile: Option<&mut RunProfile>,
        mut shapes: Option<&mut SlotShapes>,
    ) -> Result<Vec<Tensor>, RunError> {
        let graph = &self.session.graph;
        if let Some(shapes) = shapes.as_deref_mut() {
            shapes.clear();
            shapes.resize(plan.consumers.len(), None);
        }
        let mut scratch = plan.scratch();
        let RunScratch {
            values,
            remaining,
            inputs,
            outputs,
        } = &mut scratch;
        // A profiled run counts the bytes it holds (against no limit when
        // the session sets none).
        let limit = match profile {
            Some(_) => Some(self.session.options.max_memory_bytes.unwrap_or(u64::MAX)),
            None => self.session.options.max_memory_bytes,
        };
        let mut budget = MemoryBudget::new(limit, plan.consumers.len());
        let mut fed = 0;
        for tensor in feeds {
            let Some(&(slot, dtype)) = plan.feeds.get(fed) else {
                return Err(RunError::FeedCount {
                    expected: plan.feed_names.clone(),
                    given: fed + 1,
                });
            };
            if tensor.dtype() != dtype {
                return Err(RunError::FeedType {
                    name: plan.feed_names[fed].clone(),
                    expected: dtype,
                    actual: tensor.dtype(),
                });
            }
            budget
                .charge(slot, &tensor, false)
                .map_err(|(bytes, limit)| RunError::MemoryLimit {
                    node: plan.feed_names[fed].clone(),
                    op: "feed".to_owned(),
                    bytes,
                    limit,
                })?;
            if let Some(shapes) = shapes.as_deref_mut() {
                shapes[slot] = Some(Dims::from_slice(tensor.dims()));
            }
            values[slot] = Some(tensor);
            fed += 1;
        }
        if fed != plan.feeds.len() {
            return Err(RunError::FeedCount {
                expected: plan.feed_names.clone(),
                given: fed,
            });
        }
        // The graph's constants (not counted against the run's memory: the
        // session holds them).
        for (slot, value) in &plan.constants {
            if let Some(shapes) = shapes.as_deref_mut() {
                shapes[*slot] = Some(Dims::from_slice(value.dims()));
            }
            values[*slot] = Some(value.clone());
        }
        for step in &plan.steps {
            // Inputs are moved out of their slots at their last consumer (so
            // the kernel may reuse the buffer), shared otherwise.
            let inputs = &mut inputs[..step.inputs.len()];
            for (input, &slot) in inputs.iter_mut().zip(&step.inputs) {
                *input = consume(values, remaining, &mut budget, slot);
            }
            if inputs.iter().any(Option::is_none) {
                return Err(missing_value(graph, step));
            }
            let outputs = &mut outputs[..step.outputs.len()];
            let started = profile.is_some().then(Instant::now);
            // Empty unless some step runs on a device.
            run_kernel_step(
                graph,
                step.node,
                &step.kernel,
                &step.input_devices,
                inputs,
                outputs,
            )?;
            // What the kernel did not take of its inputs is released now.
            for input in inputs {
                *input = None;
            }
            if let (Some(profile), Some(started)) = (profile.as_deref_mut(), started) {
                let node = &graph.nodes()[step.node].def;
                profile.steps.push(StepTime {
                    node: node.name.clone(),
                    op: node.op.clone(),
                    device: step.kernel.info().device_type().to_owned(),
                    time: started.elapsed(),
                });
            }
            for (tensor, slot) in outputs.iter_mut().zip(&step.outputs) {
                if let Some(slot) = *slot {
                    if budget.is_limited()
                        && let Some(tensor) = tensor
                    {
                        // An output sharing a buffer with a still-held input
                        // (Identity, Reshape) costs nothing more.
                        let shared = step.inputs.iter().any(|&i| {
                            values[i]
                                .as_ref()
                                .is_some_and(|held| held.shares_buffer_with(tensor))
                        });
                        budget
                            .charge(slot, tensor, shared)
                            .map_err(|(bytes, limit)| {
                                let node = &graph.nodes()[step.node];
                                RunError::MemoryLimit {
                                    node: node.def.name.clone(),
                                    op: node.def.op.clone(),
                                    bytes,
                                    limit,
                                }
                            })?;
                    }
                    if let (Some(shapes), Some(tensor)) = (shapes.as_deref_mut(), tensor.as_ref()) {
                        shapes[slot] = Some(Dims::from_slice(tensor.dims()));
                    }
                    values[slot] = tensor.take();
                } else {
                    // An output nothing reads.
                    *tensor = None;
                }
            }
        }
        let mut out = Vec::with_capacity(plan.fetches.len());
        for (index, &slot) in plan.fetches.iter().enumerate() {
            let value = consume(values, remaining, &mut budget, slot).ok_or_else(|| {
                RunError::from(GraphError::UnknownEndpoint {
                    kind: "fetch",
                    name: format!("slot {slot}"),
                    reason: "no value was produced".into(),
                })
            })?;
            // Fetched tensors are returned in host memory.
            let value = if value.is_on_host() {
                value
            } else {
                value.to_host().map_err(|source| RunError::Transfer {
                    node: format!("fetch {index}"),
                    op: "fetch".to_owned(),
                    index,
                    to: DEVICE_CPU.to_owned(),
                    source: Box::new(source),
                })?
            };
            out.push(value);
        }
        plan.keep(scratch);
        if let Some(profile) = profile {
            profile.peak_bytes = Some(budget.peak());
        }
        Ok(out)
    }
}

/// Where one run's time and memory went ([`PreparedRun::run_profiled`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunProfile {
    /// Each kernel step, in the order it ran.
    pub steps: Vec<StepTime>,
    /// The most bytes of tensors the run held at once: feeds and
    /// intermediates (in graphs with loops: every value held, counted
    /// after each kernel), a buffer shared by several counted once. `None`
    /// when not measured.
    pub peak_bytes: Option<u64>,
}

/// One kernel step of a profiled run.
#[derive(Debug, Clone, PartialEq)]
pub struct StepTime {
    /// The node's name.
    pub node: String,
    /// Its op.
    pub op: String,
    /// The device type its kernel ran on.
    pub device: String,
    /// The kernel's time (with any input transfer to its device).
    pub time: Duration,
}

/// Reads a slot for one of its consumers: the value itself for the last
/// one (so it can be reused in place), a shared handle before that.
fn consume(
    values: &mut [Option<Tensor>],
    remaining: &mut [u32],
    budget: &mut MemoryBudget,
    slot: usize,
) -> Option<Tensor> {
    remaining[slot] -= 1;
    if remaining[slot] == 0 {
        budget.refund(slot);
        values[slot].take()
    } else {
        values[slot].clone()
    }
}

/// Runs node `node`'s kernel on `inputs` (moved first to where
/// `input_devices` says, when it is not empty) into `outputs`; a failure
/// or panic becomes [`RunError::Compute`] naming the node.
pub(crate) fn run_kernel_step(
    graph: &Graph,
    node: usize,
    kernel: &KernelInstance,
    input_devices: &InputDevices,
    inputs: &mut [Option<Tensor>],
    outputs: &mut [Option<Tensor>],
) -> Result<(), RunError> {
    if !input_devices.is_empty() {
        move_inputs(graph, node, input_devices, inputs)?;
    }
    // Kernels are user code: a panic fails this run, not the caller.
    catch_unwind(AssertUnwindSafe(|| kernel.compute_in(inputs, outputs)))
        .unwrap_or_else(|payload| Err(KernelError::from_panic(&*payload)))
        .map_err(|source| {
            let n = &graph.nodes()[node];
            RunError::Compute {
                node: n.def.name.clone(),
                op: n.def.op.clone(),
                device: kernel.info().device_type().to_owned(),
                source: Box::new(source),
            }
        })
}

/// Moves each input of node `node` to where its kernel reads it (host
/// memory or the kernel's device), copying through the host between
/// devices.
fn move_inputs(
    graph: &Graph,
    node: usize,
    input_devices: &InputDevices,
    inputs: &mut [Option<Tensor>],
) -> Result<(), RunError> {
    for (index, (slot, want)) in inputs.iter_mut().zip(input_devices).enumerate() {
        let Some(tensor) = slot.as_ref() else {
            continue;
        };
        let moved = match want {
            None if tensor.is_on_host() => continue,
            None => tensor.to_host(),
            Some(device) if tensor.device_type() == device.device_type() => continue,
            Some(device) => tensor
                .to_host()
                .and_then(|host| device.upload(&host).map_err(Into::into)),
        };
        *slot = Some(moved.map_err(|source| {
            let node = &graph.nodes()[node];
            RunError::Transfer {
                node: node.def.name.clone(),
                op: node.def.op.clone(),
                index,
                to: want
                    .as_ref()
                    .map_or(DEVICE_CPU, |d| d.device_type())
                    .to_owned(),
                source: Box::new(source),
            }
        })?);
    }
    Ok(())
}

fn missing_value(graph: &Graph, step: &Step) -> RunError {
    let node = &graph.nodes()[step.node];
    RunError::Compute {
        node: node.def.name.clone(),
        op: node.def.op.clone(),
        device: step.kernel.info().device_type().to_owned(),
        source: Box::new(KernelError::internal(
            "an input had no value (executor bug)",
        )),
    }
}

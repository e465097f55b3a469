//! The executor of graphs with TF 1 control flow (TF's `ExecutorState` with
//! its `PropagatorState`): nodes run when their inputs arrive, tagged with
//! a frame instance and an iteration.
//!
//! - **Dead tensors.** `Switch` sends its data to one output and a dead
//!   token to the other; a node with a dead input (data or control) does
//!   not run and sends dead tokens on; a `Merge` runs with its first live
//!   input, and is dead only when every input it can get is dead.
//! - **Frames.** `Enter` sends its value into the child frame instance of
//!   its (frame, iteration), made on first use: to iteration 0, or to every
//!   iteration when `is_constant`. `NextIteration` sends its value to the
//!   next iteration, started on demand (at most `parallel_iterations` at
//!   once). `Exit` sends its value to the enclosing frame; an `Exit` that
//!   never got a live value sends a dead one when its frame instance ends
//!   (a loop on an untaken branch).
//! - **Limits.** A frame instance that would start more iterations than
//!   [`SessionOptions::max_loop_iterations`](crate::SessionOptions), or runs
//!   longer than [`SessionOptions::loop_timeout`](crate::SessionOptions),
//!   fails the run with [`RunError::LoopLimit`]. With
//!   [`SessionOptions::max_memory_bytes`](crate::SessionOptions), the bytes
//!   of every value the run holds (in every live iteration, loop
//!   invariants, fetches; a shared buffer once) are counted after each
//!   kernel, and a run over the limit fails with [`RunError::MemoryLimit`].
//!
//! Graphs without control flow never come here: their plans run as a
//! straight sequence (`session.rs`), at no cost for any of this.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

use opreg_proto::DataType;
use rustc_hash::{FxHashMap, FxHashSet};
use smallvec::SmallVec;

use crate::budget::distinct_bytes;
use crate::control_flow::ControlFlow;
use crate::plan::InputDevices;
use crate::session::{FORWARDING_OPS, RunProfile, StepTime, run_kernel_step};
use crate::{Endpoint, Graph, GraphError, RunError};
use registry_core::kernel::KernelInstance;
use registry_core::tensor::Tensor;

/// A data edge's end: the consuming step and which of its inputs.
#[derive(Debug, Clone, Copy)]
struct Target {
    step: u32,
    input: u32,
}

/// What a step does with its inputs.
pub(crate) enum Kind {
    /// Runs its kernel.
    Kernel(Arc<KernelInstance>),
    /// Passes input `i` to output `i` (`LoopCond`, the identity family).
    Forward,
    /// `Switch`: the data to output `pred`, a dead token to the other;
    /// `_SwitchN`: to output `output_index` (the last when out of range).
    Switch,
    /// `Merge`: the first live input and its index.
    Merge,
    /// `Enter` into `frame`; a constant one reaches every iteration.
    Enter { frame: u32, constant: bool },
    /// `Exit` to the enclosing frame.
    Exit { exit: u32 },
    /// `NextIteration` to the next iteration.
    NextIteration,
}

/// One planned node.
pub(crate) struct FlowStep {
    pub(crate) node: usize,
    pub(crate) kind: Kind,
    /// The static frame it runs in, and its index among that frame's steps.
    frame: u32,
    local: u32,
    /// Where its input slots start in an iteration's slots (a `Merge` has
    /// one: its live input).
    input_base: u32,
    num_data: u32,
    num_control: u32,
    /// For a loop `Merge`: its data inputs from outside the back edge, and
    /// along it (`(num_data, 0)` for any other node).
    merge_inputs: (u32, u32),
    /// Consumers of each output.
    outputs: Vec<SmallVec<[Target; 2]>>,
    /// Nodes waiting on it through control edges.
    control_out: SmallVec<[u32; 2]>,
    /// Fetches it produces: (output, fetch index).
    fetched: SmallVec<[(u32, u32); 1]>,
    input_devices: InputDevices,
}

/// A static frame's share of the plan.
struct FramePlan {
    name: String,
    parallel_iterations: u64,
    /// Its planned steps.
    members: u32,
    /// Input slots of an iteration: every step's data inputs.
    input_slots: u32,
    /// Its planned `Enter` steps.
    enters: u32,
    /// Its planned `Exit` steps.
    exits: Vec<u32>,
}

/// Where a fetch comes from.
#[derive(Debug, Clone, Copy)]
enum FetchSource {
    /// The `i`th feed.
    Feed(usize),
    /// A step's output, recorded when it runs.
    Step,
}

/// A pruned plan for one feeds/fetches signature of a graph with control
/// flow.
pub(crate) struct FlowPlan {
    pub(crate) steps: Vec<FlowStep>,
    frames: Vec<FramePlan>,
    pub(crate) feed_names: Vec<String>,
    pub(crate) fetch_names: Vec<String>,
    /// Each feed's dtype and consumers.
    feeds: Vec<(DataType, SmallVec<[Target; 2]>)>,
    fetches: Vec<FetchSource>,
    /// Steps of the root frame with no inputs at all.
    sources: Vec<u32>,
    max_iterations: Option<u64>,
    timeout: Option<Duration>,
    max_memory_bytes: Option<u64>,
}

/// Everything [`FlowPlan::build`] needs from the session.
pub(crate) struct FlowRequest<'a> {
    pub(crate) graph: &'a Graph,
    pub(crate) flow: &'a ControlFlow,
    pub(crate) order: &'a [usize],
    pub(crate) feeds: &'a [Endpoint],
    pub(crate) feed_names: &'a [&'a str],
    pub(crate) fetches: &'a [Endpoint],
    pub(crate) fetch_names: &'a [&'a str],
    pub(crate) max_iterations: Option<u64>,
    pub(crate) timeout: Option<Duration>,
    pub(crate) max_memory_bytes: Option<u64>,
}

impl FlowPlan {
    /// Plans the `order`ed nodes; `kernel` builds a node's kernel and
    /// `devices` says where its inputs must be.
    pub(crate) fn build(
        request: FlowRequest<'_>,
        mut kernel: impl FnMut(usize) -> Result<Arc<KernelInstance>, GraphError>,
        mut devices: impl FnMut(&KernelInstance) -> Result<InputDevices, RunError>,
    ) -> Result<Self, RunError> {
        let FlowRequest {
            graph,
            flow,
            order,
            feeds,
            feed_names,
            fetches,
            fetch_names,
            max_iterations,
            timeout,
            max_memory_bytes,
        } = request;
        let nodes = graph.nodes();
        let mut frames: Vec<FramePlan> = flow
            .frames()
            .iter()
            .map(|f| FramePlan {
                name: f.name.clone(),
                parallel_iterations: u64::from(f.parallel_iterations),
                members: 0,
                input_slots: 0,
                enters: 0,
                exits: Vec::new(),
            })
            .collect();
        let mut step_of = vec![u32::MAX; nodes.len()];
        let mut steps: Vec<FlowStep> = Vec::with_capacity(order.len());
        let mut uses_devices = false;
        for &i in order {
            let node = &nodes[i];
            // An Enter runs in the frame of its input and sends into its
            // own; every other node runs in its frame.
            let frame = if node.def.op == "Enter" {
                flow.frames()[flow.frame_of(i)].parent.unwrap_or(0)
            } else {
                flow.frame_of(i)
            };
            let op = node.def.op.as_str();
            let mut input_devices = InputDevices::new();
            let kind = match op {
                "Switch" | "_SwitchN" => Kind::Switch,
                "Merge" => Kind::Merge,
                "Enter" => Kind::Enter {
                    frame: flow.frame_of(i) as u32,
                    constant: registry_core::attr::NodeAttrs::new(&node.def, &node.op_def)
                        .get::<bool>("is_constant")
                        .unwrap_or(false),
                },
                "Exit" => {
                    let plan = &mut frames[frame];
                    plan.exits.push(steps.len() as u32);
                    Kind::Exit {
                        exit: plan.exits.len() as u32 - 1,
                    }
                }
                "NextIteration" => Kind::NextIteration,
                "LoopCond" => Kind::Forward,
                _ => {
                    let k = kernel(i)?;
                    if FORWARDING_OPS.contains(&op)
                        && k.info().on_cpu()
                        && k.info().input_types() == k.info().output_types()
                    {
                        Kind::Forward
                    } else {
                        if !k.info().on_cpu() {
                            uses_devices = true;
                        }
                        input_devices = devices(&k)?;
                        Kind::Kernel(k)
                    }
                }
            };
            if let Kind::Enter { frame, .. } = kind {
                frames[frame as usize].enters += 1;
            }
            let plan = &mut frames[frame];
            let local = plan.members;
            plan.members += 1;
            let input_base = plan.input_slots;
            plan.input_slots += node.inputs.len() as u32;
            let back = (0..node.inputs.len())
                .filter(|&k| graph.is_back_edge(i, k))
                .count() as u32;
            step_of[i] = steps.len() as u32;
            steps.push(FlowStep {
                node: i,
                kind,
                frame: frame as u32,
                local,
                input_base,
                num_data: node.inputs.len() as u32,
                num_control: node.control_inputs.len() as u32,
                merge_inputs: (node.inputs.len() as u32 - back, back),
                outputs: vec![SmallVec::new(); node.output_types.len()],
                control_out: SmallVec::new(),
                fetched: SmallVec::new(),
                input_devices,
            });
        }
        if !uses_devices {
            for step in &mut steps {
                step.input_devices.clear();
            }
        }
        let mut feed_targets: Vec<(DataType, SmallVec<[Target; 2]>)> = feeds
            .iter()
            .map(|&e| (graph.dtype(e), SmallVec::new()))
            .collect();
        for (index, &e) in feeds.iter().enumerate() {
            if flow.output_frame(e.node) != 0 {
                return Err(GraphError::UnknownEndpoint {
                    kind: "feed",
                    name: feed_names[index].to_owned(),
                    reason: format!(
                        "it is inside {}: only tensors outside every loop can be fed",
                        flow.describe(flow.output_frame(e.node))
                    ),
                }
                .into());
            }
        }
        for s in 0..steps.len() {
            let i = steps[s].node;
            for (k, e) in nodes[i].inputs.iter().enumerate() {
                let target = Target {
                    step: s as u32,
                    input: k as u32,
                };
                if let Some(feed) = feeds.iter().position(|f| f == e) {
                    feed_targets[feed].1.push(target);
                } else {
                    let source = step_of[e.node];
                    steps[source as usize].outputs[e.port].push(target);
                }
            }
            for &c in &nodes[i].control_inputs {
                let source = step_of[c];
                steps[source as usize].control_out.push(s as u32);
            }
        }
        let mut fetch_sources = Vec::with_capacity(fetches.len());
        for (index, e) in fetches.iter().enumerate() {
            if let Some(feed) = feeds.iter().position(|f| f == e) {
                fetch_sources.push(FetchSource::Feed(feed));
                continue;
            }
            if flow.output_frame(e.node) != 0 {
                return Err(GraphError::UnknownEndpoint {
                    kind: "fetch",
                    name: fetch_names[index].to_owned(),
                    reason: format!(
                        "it is inside {}: only tensors outside every loop (or an Exit's) can be fetched",
                        flow.describe(flow.output_frame(e.node))
                    ),
                }
                .into());
            }
            steps[step_of[e.node] as usize]
                .fetched
                .push((e.port as u32, index as u32));
            fetch_sources.push(FetchSource::Step);
        }
        let sources = steps
            .iter()
            .enumerate()
            .filter(|(_, s)| s.frame == 0 && s.num_data == 0 && s.num_control == 0)
            .map(|(i, _)| i as u32)
            .collect();
        Ok(FlowPlan {
            steps,
            frames,
            feed_names: feed_names.iter().map(|s| (*s).to_owned()).collect(),
            fetch_names: fetch_names.iter().map(|s| (*s).to_owned()).collect(),
            feeds: feed_targets,
            fetches: fetch_sources,
            sources,
            max_iterations,
            timeout,
            max_memory_bytes,
        })
    }

    /// Runs the plan with `feeds` (in the order the plan names them).
    pub(crate) fn run(
        &self,
        graph: &Graph,
        feeds: SmallVec<[Tensor; 4]>,
        profile: Option<&mut RunProfile>,
    ) -> Result<Vec<Tensor>, RunError> {
        if feeds.len() != self.feeds.len() {
            return Err(RunError::FeedCount {
                expected: self.feed_names.clone(),
                given: feeds.len(),
            });
        }
        let mut state = RunState::new(self, graph);
        if profile.is_some() {
            state.profile = Some(RunProfile {
                steps: Vec::new(),
                peak_bytes: Some(0),
            });
        }
        for (index, tensor) in feeds.iter().enumerate() {
            let (dtype, _) = &self.feeds[index];
            if tensor.dtype() != *dtype {
                return Err(RunError::FeedType {
                    name: self.feed_names[index].clone(),
                    expected: *dtype,
                    actual: tensor.dtype(),
                });
            }
        }
        for (index, tensor) in feeds.iter().enumerate() {
            for &target in &self.feeds[index].1 {
                state.deliver(ROOT, 0, target, Some(tensor.clone()));
            }
        }
        if let Some(name) = self.feed_names.first() {
            state.check_memory(name, "feed")?;
        }
        for &source in &self.sources {
            state.schedule(ROOT, 0, source);
        }
        state.drain()?;
        if let (Some(profile), Some(recorded)) = (profile, state.profile.take()) {
            *profile = recorded;
        }
        let mut out = Vec::with_capacity(self.fetches.len());
        for (index, source) in self.fetches.iter().enumerate() {
            let value = match source {
                FetchSource::Feed(feed) => Some(Some(feeds[*feed].clone())),
                FetchSource::Step => state.fetched[index].take(),
            };
            match value {
                Some(Some(tensor)) => out.push(if tensor.is_on_host() {
                    tensor
                } else {
                    tensor.to_host().map_err(|source| RunError::Transfer {
                        node: self.fetch_names[index].clone(),
                        op: "fetch".to_owned(),
                        index,
                        to: registry_core::device::DEVICE_CPU.to_owned(),
                        source: Box::new(source),
                    })?
                }),
                Some(None) => {
                    return Err(RunError::DeadFetch {
                        fetch: self.fetch_names[index].clone(),
                    });
                }
                None => {
                    return Err(RunError::NotComputed {
                        fetch: self.fetch_names[index].clone(),
                        waiting: state.waiting_nodes(),
                    });
                }
            }
        }
        Ok(out)
    }
}

/// The root frame instance.
const ROOT: u32 = 0;

/// A node's state in one iteration.
#[derive(Default)]
struct NodeState {
    /// Inputs arrived so far (data and control; a `Merge` counts only its
    /// control inputs here).
    arrived: u32,
    /// Dead inputs so far (a `Merge`'s dead data inputs).
    dead: u32,
    /// A `Merge` got a live input (its index is `merge_index`).
    merge_live: bool,
    merge_index: u32,
    /// Scheduled already.
    fired: bool,
}

/// One iteration of a frame instance.
struct Iteration {
    nodes: Vec<NodeState>,
    /// The steps' input values (`None`: not arrived, dead, or taken), at
    /// each step's `input_base`.
    inputs: Vec<Option<Tensor>>,
    /// Its scheduled steps and live child frame instances.
    outstanding: u64,
}

/// One execution of a loop frame (a frame instance), or the root.
struct FrameInstance {
    frame: u32,
    parent: Option<(u32, u64)>,
    /// Live iterations, the oldest first; the first is `first_iteration`.
    iterations: VecDeque<Iteration>,
    first_iteration: u64,
    /// Its planned `Enter`s that have not run yet.
    pending_enters: u32,
    /// Values of constant `Enter`s (`None`: dead), for every iteration.
    invariants: Vec<(u32, Option<Tensor>)>,
    /// Which of the frame's `Exit`s sent a live value.
    exit_live: Vec<bool>,
    /// Scheduled steps and live children over all iterations.
    outstanding: u64,
    /// `NextIteration` values waiting for `parallel_iterations` room.
    deferred: Vec<(u32, Option<Tensor>)>,
    started: Instant,
}

impl FrameInstance {
    fn last_iteration(&self) -> u64 {
        self.first_iteration + self.iterations.len() as u64 - 1
    }

    fn iteration(&mut self, iteration: u64) -> Option<&mut Iteration> {
        let index = iteration.checked_sub(self.first_iteration)?;
        self.iterations.get_mut(usize::try_from(index).ok()?)
    }
}

#[derive(Clone, Copy)]
struct Task {
    step: u32,
    instance: u32,
    iteration: u64,
}

struct RunState<'p> {
    plan: &'p FlowPlan,
    graph: &'p Graph,
    instances: Vec<Option<FrameInstance>>,
    free: Vec<u32>,
    children: FxHashMap<(u32, u64, u32), u32>,
    queue: VecDeque<Task>,
    /// Per fetch: not yet (`None`), dead (`Some(None)`), or its value.
    fetched: Vec<Option<Option<Tensor>>>,
    /// The first error of the loop machinery (limits), reported by `drain`.
    error: Option<RunError>,
    /// Finished iterations per static frame, reset, for reuse.
    spare: Vec<Vec<Iteration>>,
    /// A step's inputs and outputs while it runs (reused).
    scratch_inputs: Vec<Option<Tensor>>,
    scratch_outputs: Vec<Option<Tensor>>,
    /// Buffers counted by `check_memory` (reused).
    seen_buffers: FxHashSet<usize>,
    /// Step times and peak memory, for a profiled run.
    profile: Option<RunProfile>,
}

impl<'p> RunState<'p> {
    fn new(plan: &'p FlowPlan, graph: &'p Graph) -> Self {
        let mut state = Self {
            plan,
            graph,
            instances: Vec::new(),
            free: Vec::new(),
            children: FxHashMap::default(),
            queue: VecDeque::new(),
            fetched: vec![None; plan.fetches.len()],
            error: None,
            spare: plan.frames.iter().map(|_| Vec::new()).collect(),
            scratch_inputs: Vec::new(),
            scratch_outputs: Vec::new(),
            seen_buffers: FxHashSet::default(),
            profile: None,
        };
        state.new_instance(0, None);
        state
    }

    fn new_instance(&mut self, frame: u32, parent: Option<(u32, u64)>) -> u32 {
        let plan = &self.plan.frames[frame as usize];
        let instance = FrameInstance {
            frame,
            parent,
            iterations: VecDeque::from([self.new_iteration(frame)]),
            first_iteration: 0,
            pending_enters: if frame == 0 { 0 } else { plan.enters },
            invariants: Vec::new(),
            exit_live: vec![false; plan.exits.len()],
            outstanding: 0,
            deferred: Vec::new(),
            started: Instant::now(),
        };
        match self.free.pop() {
            Some(id) => {
                self.instances[id as usize] = Some(instance);
                id
            }
            None => {
                self.instances.push(Some(instance));
                self.instances.len() as u32 - 1
            }
        }
    }

    /// A fresh iteration of `frame`: a finished one reset, or a new one.
    fn new_iteration(&mut self, frame: u32) -> Iteration {
        if let Some(iteration) = self.spare[frame as usize].pop() {
            return iteration;
        }
        let plan = &self.plan.frames[frame as usize];
        let mut nodes = Vec::with_capacity(plan.members as usize);
        nodes.resize_with(plan.members as usize, NodeState::default);
        let mut inputs = Vec::with_capacity(plan.input_slots as usize);
        inputs.resize_with(plan.input_slots as usize, || None);
        Iteration {
            nodes,
            inputs,
            outstanding: 0,
        }
    }

    /// Keeps a finished iteration of `frame` for reuse, reset (values a
    /// step never took, such as a `Merge`'s late inputs, dropped).
    fn recycle(&mut self, frame: u32, mut iteration: Iteration) {
        iteration.nodes.fill_with(NodeState::default);
        iteration.inputs.fill_with(|| None);
        iteration.outstanding = 0;
        self.spare[frame as usize].push(iteration);
    }

    fn instance(&mut self, id: u32) -> &mut FrameInstance {
        self.instances[id as usize]
            .as_mut()
            .expect("a frame instance is used only while it lives")
    }

    /// Runs scheduled steps until none is left.
    fn drain(&mut self) -> Result<(), RunError> {
        while let Some(task) = self.queue.pop_front() {
            self.execute(task)?;
            if let Some(e) = self.error.take() {
                return Err(e);
            }
        }
        Ok(())
    }

    /// Queues a step whose inputs are all there.
    fn schedule(&mut self, instance: u32, iteration: u64, step: u32) {
        let plan = self.plan;
        let frame = self.instance(instance);
        frame.outstanding += 1;
        if let Some(it) = frame.iteration(iteration) {
            it.outstanding += 1;
            it.nodes[plan.steps[step as usize].local as usize].fired = true;
        }
        self.queue.push_back(Task {
            step,
            instance,
            iteration,
        });
    }

    /// Delivers a value (`None`: dead) to a data input, and schedules the
    /// step when it is ready.
    fn deliver(&mut self, instance: u32, iteration: u64, target: Target, value: Option<Tensor>) {
        self.arrive(
            instance,
            iteration,
            target.step,
            Some(target.input),
            value,
            true,
        );
    }

    /// Delivers a control edge's token (`alive` or dead).
    fn deliver_control(&mut self, instance: u32, iteration: u64, step: u32, alive: bool) {
        self.arrive(instance, iteration, step, None, None, alive);
    }

    fn arrive(
        &mut self,
        instance: u32,
        iteration: u64,
        step_index: u32,
        input: Option<u32>,
        value: Option<Tensor>,
        control_alive: bool,
    ) {
        let step = &self.plan.steps[step_index as usize];
        let Some(it) = self.instance(instance).iteration(iteration) else {
            return;
        };
        let base = step.input_base as usize;
        let state = &mut it.nodes[step.local as usize];
        if state.fired {
            // A Merge that ran already; later inputs change nothing.
            return;
        }
        let ready = if matches!(step.kind, Kind::Merge) {
            match input {
                // A Merge's control inputs only order it.
                None => state.arrived += 1,
                Some(index) if value.is_some() => {
                    if !state.merge_live {
                        state.merge_live = true;
                        state.merge_index = index;
                        it.inputs[base] = value;
                    }
                }
                Some(_) => state.dead += 1,
            }
            let (forward, back) = step.merge_inputs;
            // Iteration 0 gets the inputs from outside the loop; later
            // ones only the back edges.
            let expected = if back == 0 || iteration == 0 {
                forward
            } else {
                back
            };
            state.arrived == step.num_control && (state.merge_live || state.dead >= expected)
        } else {
            state.arrived += 1;
            match input {
                None => {
                    if !control_alive {
                        state.dead += 1;
                    }
                }
                Some(index) => {
                    if value.is_none() {
                        state.dead += 1;
                    }
                    it.inputs[base + index as usize] = value;
                }
            }
            state.arrived == step.num_data + step.num_control
        };
        if ready {
            self.schedule(instance, iteration, step_index);
        }
    }

    fn execute(&mut self, task: Task) -> Result<(), RunError> {
        let plan = self.plan;
        let step = &plan.steps[task.step as usize];
        let mut inputs = std::mem::take(&mut self.scratch_inputs);
        let mut outputs = std::mem::take(&mut self.scratch_outputs);
        inputs.clear();
        outputs.clear();
        let (dead, merge_index) = {
            let Some(it) = self.instance(task.instance).iteration(task.iteration) else {
                return Ok(());
            };
            let state = &it.nodes[step.local as usize];
            let (dead, slots) = if matches!(step.kind, Kind::Merge) {
                (!state.merge_live, 1)
            } else {
                (state.dead > 0, step.num_data as usize)
            };
            let merge_index = state.merge_index;
            let base = step.input_base as usize;
            inputs.extend(it.inputs[base..base + slots].iter_mut().map(Option::take));
            (dead, merge_index)
        };
        let num_outputs = step.outputs.len();
        outputs.resize_with(num_outputs, || None);
        if !dead {
            match &step.kind {
                Kind::Kernel(kernel) => {
                    let started = self.profile.is_some().then(Instant::now);
                    run_kernel_step(
                        self.graph,
                        step.node,
                        kernel,
                        &step.input_devices,
                        &mut inputs,
                        &mut outputs,
                    )?;
                    if let (Some(profile), Some(started)) = (self.profile.as_mut(), started) {
                        let node = &self.graph.nodes()[step.node].def;
                        profile.steps.push(StepTime {
                            node: node.name.clone(),
                            op: node.op.clone(),
                            device: kernel.info().device_type().to_owned(),
                            time: started.elapsed(),
                        });
                    }
                }
                Kind::Forward | Kind::Enter { .. } | Kind::Exit { .. } | Kind::NextIteration => {
                    for (out, input) in outputs.iter_mut().zip(inputs.iter_mut()) {
                        *out = input.take();
                    }
                }
                Kind::Switch => {
                    let predicate = inputs.get(1).and_then(Option::as_ref);
                    let take = switch_output(self.graph, step.node, predicate, num_outputs)?;
                    outputs[take] = inputs[0].take();
                }
                Kind::Merge => {
                    outputs[0] = inputs.first_mut().and_then(Option::take);
                    if num_outputs > 1 {
                        outputs[1] = Some(Tensor::scalar(merge_index as i32));
                    }
                }
            }
        }
        self.propagate(task, &mut outputs, dead);
        inputs.clear();
        outputs.clear();
        self.scratch_inputs = inputs;
        self.scratch_outputs = outputs;
        self.finish_task(task);
        if !dead && matches!(step.kind, Kind::Kernel(_)) {
            let node = &self.graph.nodes()[step.node].def;
            self.check_memory(&node.name, &node.op)?;
        }
        Ok(())
    }

    /// Fails with [`RunError::MemoryLimit`] (naming `node`) when the values
    /// the run holds are over the session's limit.
    /// A profiled run records the most bytes held after any kernel.
    fn check_memory(&mut self, node: &str, op: &str) -> Result<(), RunError> {
        let limit = self.plan.max_memory_bytes;
        if limit.is_none() && self.profile.is_none() {
            return Ok(());
        }
        let held = self.instances.iter().flatten().flat_map(|frame| {
            let slots = frame.iterations.iter().flat_map(|it| it.inputs.iter());
            let invariants = frame.invariants.iter().map(|(_, v)| v);
            let deferred = frame.deferred.iter().map(|(_, v)| v);
            slots.chain(invariants).chain(deferred).flatten()
        });
        let fetched = self.fetched.iter().flatten().flatten();
        let bytes = distinct_bytes(held.chain(fetched), &mut self.seen_buffers);
        if let Some(peak) = self.profile.as_mut().and_then(|p| p.peak_bytes.as_mut()) {
            *peak = (*peak).max(bytes);
        }
        if let Some(limit) = limit
            && bytes > limit
        {
            return Err(RunError::MemoryLimit {
                node: node.to_owned(),
                op: op.to_owned(),
                bytes,
                limit,
            });
        }
        Ok(())
    }

    /// Sends a step's outputs (dead ones as dead tokens) to its consumers
    /// in the frame instance and iteration they belong to.
    fn propagate(&mut self, task: Task, outputs: &mut [Option<Tensor>], dead: bool) {
        let plan = self.plan;
        let step = &plan.steps[task.step as usize];
        if !matches!(step.kind, Kind::Exit { .. }) || !dead {
            self.record_fetches(step, outputs);
        }
        match step.kind {
            Kind::Enter { frame, constant } => {
                let child = self.child(task.instance, task.iteration, frame);
                if constant {
                    let value = outputs.first_mut().and_then(Option::take);
                    let frame = self.instance(child);
                    frame.invariants.push((task.step, value.clone()));
                    let iterations: Vec<u64> =
                        (frame.first_iteration..=frame.last_iteration()).collect();
                    for iteration in iterations {
                        self.send(child, iteration, step, value.clone(), !dead);
                    }
                } else {
                    self.send_all(child, 0, step, outputs, dead);
                }
                let frame = self.instance(child);
                frame.pending_enters = frame.pending_enters.saturating_sub(1);
                self.after_change(child);
            }
            Kind::Exit { exit } => {
                if dead {
                    // Sent as dead when the frame instance ends, unless a
                    // live value comes first.
                    return;
                }
                let frame = self.instance(task.instance);
                frame.exit_live[exit as usize] = true;
                let (parent, iteration) = frame.parent.expect("an Exit is inside a loop");
                self.send_all(parent, iteration, step, outputs, false);
            }
            Kind::NextIteration => {
                let value = outputs.first_mut().and_then(Option::take);
                self.next_iteration(task, value);
            }
            _ => self.send_all(task.instance, task.iteration, step, outputs, dead),
        }
    }

    fn record_fetches(&mut self, step: &FlowStep, outputs: &[Option<Tensor>]) {
        for &(port, fetch) in &step.fetched {
            self.fetched[fetch as usize] = Some(outputs[port as usize].clone());
        }
    }

    /// Sends every output (and the control edges) of `step` into one
    /// (instance, iteration); the last consumer of a value gets it moved.
    fn send_all(
        &mut self,
        instance: u32,
        iteration: u64,
        step: &FlowStep,
        outputs: &mut [Option<Tensor>],
        dead: bool,
    ) {
        for (port, value) in outputs.iter_mut().enumerate() {
            let targets = &step.outputs[port];
            for (k, &target) in targets.iter().enumerate() {
                let token = if k + 1 == targets.len() {
                    value.take()
                } else {
                    value.clone()
                };
                self.deliver(instance, iteration, target, token);
            }
        }
        self.send_control(instance, iteration, step, !dead);
    }

    /// Sends one value to every consumer of output 0 and the control edges
    /// (a constant `Enter` into one iteration).
    fn send(
        &mut self,
        instance: u32,
        iteration: u64,
        step: &FlowStep,
        value: Option<Tensor>,
        alive: bool,
    ) {
        for &target in &step.outputs[0] {
            self.deliver(instance, iteration, target, value.clone());
        }
        self.send_control(instance, iteration, step, alive);
    }

    fn send_control(&mut self, instance: u32, iteration: u64, step: &FlowStep, alive: bool) {
        for &consumer in &step.control_out {
            self.deliver_control(instance, iteration, consumer, alive);
        }
    }

    /// The child frame instance of (`parent`, `iteration`) for `frame`,
    /// made on first use.
    fn child(&mut self, parent: u32, iteration: u64, frame: u32) -> u32 {
        if let Some(&found) = self.children.get(&(parent, iteration, frame)) {
            return found;
        }
        let child = self.new_instance(frame, Some((parent, iteration)));
        self.children.insert((parent, iteration, frame), child);
        let parent_frame = self.instance(parent);
        parent_frame.outstanding += 1;
        if let Some(it) = parent_frame.iteration(iteration) {
            it.outstanding += 1;
        }
        child
    }

    /// A `NextIteration`'s value into the next iteration (started when
    /// needed, or deferred while `parallel_iterations` are running).
    fn next_iteration(&mut self, task: Task, value: Option<Tensor>) {
        let plan = self.plan;
        let step = &plan.steps[task.step as usize];
        let frame = self.instance(task.instance);
        if task.iteration < frame.last_iteration() {
            self.send(
                task.instance,
                task.iteration + 1,
                step,
                value.clone(),
                value.is_some(),
            );
            return;
        }
        if value.is_none() {
            // A dead value starts no iteration (TF stops deadness here).
            return;
        }
        let parallel = plan.frames[frame.frame as usize].parallel_iterations;
        if frame.iterations.len() as u64 >= parallel {
            frame.deferred.push((task.step, value));
            return;
        }
        if self.start_iteration(task.instance) {
            self.send(task.instance, task.iteration + 1, step, value, true);
        }
    }

    /// Starts the next iteration of `instance` (with the loop invariants);
    /// false when a limit stops the loop (the error is kept for `drain`).
    fn start_iteration(&mut self, instance: u32) -> bool {
        let plan = self.plan;
        let frame_id = self.instance(instance).frame;
        let fresh = self.new_iteration(frame_id);
        let frame = self.instance(instance);
        let next = frame.last_iteration() + 1;
        let frame_plan = &plan.frames[frame.frame as usize];
        if let Some(limit) = plan.max_iterations
            && next > limit
        {
            self.error.get_or_insert(RunError::LoopLimit {
                frame: frame_plan.name.clone(),
                iterations: next - 1,
                reason: format!(
                    "the session's limit of {limit} iterations per loop \
                     (SessionOptions::max_loop_iterations, `opreg run --max-iterations`)"
                ),
            });
            return false;
        }
        if let Some(timeout) = plan.timeout
            && frame.started.elapsed() > timeout
        {
            self.error.get_or_insert(RunError::LoopLimit {
                frame: frame_plan.name.clone(),
                iterations: next - 1,
                reason: format!(
                    "the session's limit of {timeout:?} per loop (SessionOptions::loop_timeout)"
                ),
            });
            return false;
        }
        frame.iterations.push_back(fresh);
        for k in 0..frame.invariants.len() {
            let (enter, value) = self.instance(instance).invariants[k].clone();
            let alive = value.is_some();
            self.send(instance, next, &plan.steps[enter as usize], value, alive);
        }
        true
    }

    /// A task is done: its iteration and frame instance may be too.
    fn finish_task(&mut self, task: Task) {
        let frame = self.instance(task.instance);
        frame.outstanding -= 1;
        if let Some(it) = frame.iteration(task.iteration) {
            it.outstanding -= 1;
        }
        self.after_change(task.instance);
    }

    /// Frees finished iterations, starts deferred ones, and ends the frame
    /// instance when nothing in it can run any more (sending its dead
    /// exits), walking up through parents that end with it.
    fn after_change(&mut self, mut instance: u32) {
        loop {
            if instance == ROOT {
                return;
            }
            let plan = self.plan;
            let mut frame = self.instance(instance);
            if frame.pending_enters > 0 {
                return;
            }
            // Iterations end oldest first: no token can reach one whose
            // predecessors are done and which has nothing scheduled.
            let frame_id = frame.frame;
            while frame.iterations.len() > 1
                && frame
                    .iterations
                    .front()
                    .is_some_and(|it| it.outstanding == 0)
            {
                let done = frame.iterations.pop_front().expect("checked above");
                frame.first_iteration += 1;
                self.recycle(frame_id, done);
                frame = self.instance(instance);
            }
            if !frame.deferred.is_empty()
                && (frame.iterations.len() as u64)
                    < plan.frames[frame.frame as usize].parallel_iterations
            {
                let deferred = std::mem::take(&mut frame.deferred);
                let from = frame.last_iteration();
                if self.start_iteration(instance) {
                    for (step, value) in deferred {
                        let alive = value.is_some();
                        self.send(instance, from + 1, &plan.steps[step as usize], value, alive);
                    }
                }
                return;
            }
            let frame = self.instance(instance);
            if frame.outstanding > 0 || !frame.deferred.is_empty() {
                return;
            }
            // The instance is done.
            let mut done = self.instances[instance as usize]
                .take()
                .expect("a frame instance ends once");
            self.free.push(instance);
            for iteration in std::mem::take(&mut done.iterations) {
                self.recycle(done.frame, iteration);
            }
            let (parent, iteration) = done.parent.expect("only the root has no parent");
            self.children.remove(&(parent, iteration, done.frame));
            let exits = &plan.frames[done.frame as usize].exits;
            for (k, &exit) in exits.iter().enumerate() {
                if !done.exit_live[k] {
                    let step = &plan.steps[exit as usize];
                    let mut dead: [Option<Tensor>; 1] = [None];
                    self.record_fetches(step, &dead);
                    self.send_all(parent, iteration, step, &mut dead, true);
                }
            }
            let parent_frame = self.instance(parent);
            parent_frame.outstanding -= 1;
            if let Some(it) = parent_frame.iteration(iteration) {
                it.outstanding -= 1;
            }
            instance = parent;
        }
    }

    /// Nodes of live frame instances that got some inputs but never ran,
    /// for the error of a fetch that was never computed.
    fn waiting_nodes(&self) -> Vec<String> {
        let mut waiting = Vec::new();
        for frame in self.instances.iter().flatten() {
            for it in &frame.iterations {
                for step in &self.plan.steps {
                    if step.frame != frame.frame {
                        continue;
                    }
                    let state = &it.nodes[step.local as usize];
                    if !state.fired && (state.arrived > 0 || state.dead > 0 || state.merge_live) {
                        waiting.push(self.graph.nodes()[step.node].def.name.clone());
                    }
                }
            }
        }
        waiting.sort();
        waiting.dedup();
        waiting.truncate(5);
        waiting
    }
}

/// Which output of a `Switch` takes the data: its predicate's value; of a
/// `_SwitchN` (`outputs` outputs), its index, the last when out of range.
fn switch_output(
    graph: &Graph,
    node: usize,
    predicate: Option<&Tensor>,
    outputs: usize,
) -> Result<usize, RunError> {
    let fail = |message: String| {
        let n = &graph.nodes()[node];
        RunError::Compute {
            node: n.def.name.clone(),
            op: n.def.op.clone(),
            device: registry_core::device::DEVICE_CPU.to_owned(),
            source: Box::new(registry_core::kernel::KernelError::invalid_argument(
                message,
            )),
        }
    };
    let predicate = predicate.ok_or_else(|| fail("the predicate has no value".into()))?;
    let host;
    let predicate = if predicate.is_on_host() {
        predicate
    } else {
        host = predicate.to_host().map_err(|e| fail(e.to_string()))?;
        &host
    };
    if !predicate.dims().is_empty() {
        return Err(fail(format!(
            "The second input must be a scalar, but it has shape {}",
            predicate.shape()
        )));
    }
    if predicate.dtype() == DataType::DtInt32 {
        let index = predicate
            .as_slice::<i32>()
            .map_err(|e| fail(e.to_string()))?[0];
        return Ok(usize::try_from(index)
            .ok()
            .filter(|&i| i < outputs)
            .unwrap_or(outputs - 1));
    }
    let value = predicate
        .as_slice::<bool>()
        .map_err(|e| fail(e.to_string()))?[0];
    Ok(usize::from(value))
}

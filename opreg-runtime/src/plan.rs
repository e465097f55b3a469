//! [`Plan`]: what one (feeds, fetches) signature runs — the pruned nodes in
//! order with their kernels, and a slot per live tensor with the number of
//! consumers, so each intermediate is freed (or moved into its last
//! consumer, which may then compute in place) as soon as possible.

use std::sync::{Arc, Mutex};

use opreg_proto::DataType;
use rustc_hash::FxHashMap;
use smallvec::SmallVec;

use crate::{Endpoint, Graph};
use registry_core::device::Device;
use registry_core::kernel::KernelInstance;
use registry_core::tensor::Tensor;

/// Where each input of a step must be when its kernel runs: `None` for
/// host memory, else the device.
pub(crate) type InputDevices = SmallVec<[Option<Arc<dyn Device>>; 2]>;

/// One node to run.
#[derive(Clone)]
pub(crate) struct Step {
    /// The node's index in the graph.
    pub(crate) node: usize,
    /// Its kernel, created once per session.
    pub(crate) kernel: Arc<KernelInstance>,
    /// The slot of each data input.
    pub(crate) inputs: SmallVec<[usize; 4]>,
    /// The slot each output goes to, or `None` when nothing reads it.
    pub(crate) outputs: SmallVec<[Option<usize>; 2]>,
    /// Where each input must be when the kernel runs: `None` for host
    /// memory, else the device (empty when every input is on the host).
    pub(crate) input_devices: InputDevices,
}

/// A pruned, ordered execution plan for one feeds/fetches signature.
pub(crate) struct Plan {
    pub(crate) steps: Vec<Step>,
    /// The slot and value of each constant, made when the plan was built.
    pub(crate) constants: Vec<(usize, Tensor)>,
    /// Number of consumers (inputs and fetches) of each slot.
    pub(crate) consumers: Vec<u32>,
    /// The feeds' names, in order.
    pub(crate) feed_names: Vec<String>,
    /// The slot and dtype of each feed, in the order the feeds are named.
    pub(crate) feeds: Vec<(usize, DataType)>,
    /// The slot of each fetch, in order.
    pub(crate) fetches: Vec<usize>,
    /// The buffers of the last run that finished, kept for the next one.
    pub(crate) scratch: Mutex<Option<RunScratch>>,
}

/// The buffers one run of a [`Plan`] works in: each slot's value, each
/// slot's consumers still to read it, and the input and output slots of
/// the step running (as many as the widest step has, each `None` between
/// steps). Kept between runs so a run neither allocates nor initialises
/// them afresh: a 1,000-node chain's slots are 1,000 values.
#[derive(Debug)]
pub(crate) struct RunScratch {
    pub(crate) values: Vec<Option<Tensor>>,
    pub(crate) remaining: Vec<u32>,
    pub(crate) inputs: Vec<Option<Tensor>>,
    pub(crate) outputs: Vec<Option<Tensor>>,
}

impl Plan {
    /// A copy of the plan (same steps and kernels, buffers of its own) whose
    /// constants are those `replace` gives for a slot and value, or the
    /// same where it gives none.
    pub(crate) fn with_constants(
        &self,
        replace: impl Fn(usize, &Tensor) -> Option<Tensor>,
    ) -> Plan {
        Plan {
            steps: self.steps.clone(),
            constants: self
                .constants
                .iter()
                .map(|(slot, value)| {
                    (
                        *slot,
                        replace(*slot, value).unwrap_or_else(|| value.clone()),
                    )
                })
                .collect(),
            consumers: self.consumers.clone(),
            feed_names: self.feed_names.clone(),
            feeds: self.feeds.clone(),
            fetches: self.fetches.clone(),
            scratch: Mutex::default(),
        }
    }

    /// The buffers for a run, ready: the last run's (when no other run
    /// holds them) or new ones, every value `None` and every slot's
    /// consumer count full.
    pub(crate) fn scratch(&self) -> RunScratch {
        let kept = self
            .scratch
            .try_lock()
            .ok()
            .and_then(|mut kept| kept.take());
        let mut scratch = kept.unwrap_or_else(|| {
            let nones = |count: usize| (0..count).map(|_| None).collect();
            let widest = |count: fn(&Step) -> usize| self.steps.iter().map(count).max();
            RunScratch {
                values: nones(self.consumers.len()),
                remaining: Vec::with_capacity(self.consumers.len()),
                inputs: nones(widest(|s| s.inputs.len()).unwrap_or(0)),
                outputs: nones(widest(|s| s.outputs.len()).unwrap_or(0)),
            }
        });
        scratch.remaining.clear();
        scratch.remaining.extend_from_slice(&self.consumers);
        scratch
    }

    /// Drops the values a run left in `scratch` (those no consumer took)
    /// and keeps its buffers for the next run.
    pub(crate) fn keep(&self, mut scratch: RunScratch) {
        for value in scratch
            .values
            .iter_mut()
            .chain(&mut scratch.inputs)
            .chain(&mut scratch.outputs)
        {
            *value = None;
        }
        if let Ok(mut kept) = self.scratch.try_lock() {
            kept.get_or_insert(scratch);
        }
    }
}

/// The nodes a run must execute: every ancestor of the fetches and of the
/// `targets` (through data and control edges) that is not cut off by a
/// feed, in graph order.
pub(crate) fn needed_nodes(
    graph: &Graph,
    feeds: &[Endpoint],
    fetches: &[Endpoint],
    targets: &[usize],
) -> Vec<usize> {
    let nodes = graph.nodes();
    let mut needed = vec![false; nodes.len()];
    let mut stack: Vec<usize> = fetches
        .iter()
        .filter(|e| !feeds.contains(e))
        .map(|e| e.node)
        .chain(targets.iter().copied())
        .collect();
    while let Some(i) = stack.pop() {
        if needed[i] {
            continue;
        }
        needed[i] = true;
        for e in &nodes[i].inputs {
            if !feeds.contains(e) && !needed[e.node] {
                stack.push(e.node);
            }
        }
        for &c in &nodes[i].control_inputs {
            if !needed[c] {
                stack.push(c);
            }
        }
    }
    (0..nodes.len()).filter(|&i| needed[i]).collect()
}

/// Assigns slots: one per endpoint that is fed, read by a step, or fetched.
#[derive(Default)]
pub(crate) struct Slots {
    map: FxHashMap<Endpoint, usize>,
    pub(crate) consumers: Vec<u32>,
}

impl Slots {
    pub(crate) fn slot(&mut self, e: Endpoint) -> usize {
        let next = self.map.len();
        let slot = *self.map.entry(e).or_insert(next);
        if slot == self.consumers.len() {
            self.consumers.push(0);
        }
        slot
    }

    pub(crate) fn get(&self, e: &Endpoint) -> Option<usize> {
        self.map.get(e).copied()
    }
}

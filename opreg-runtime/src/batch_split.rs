//! Splitting a run over its batch: when every step of a plan computes each
//! sample of the batch (dimension 0 of every fed tensor) from that sample
//! alone, as the layers of a feed-forward network do, the run can go as
//! independent runs over parts of the batch, one part per thread, each
//! part's kernels on one core with its activations in that core's cache,
//! and the fetched tensors put back together along dimension 0. On two
//! cores that is one hand-over per run instead of two or more per layer
//! (the kernels' own splits of each layer's work).
//!
//! Whether a plan is separable is decided once per set of feed shapes,
//! from a whole run's actual shapes ([`SlotShapes`]): every step whose
//! inputs depend on the feeds must be one of the ops [`separable`] knows
//! to compute each row of dimension 0 from the same rows of its inputs,
//! in a configuration that keeps it so (a reduction not over dimension 0,
//! a convolution whose filter is not fed, a `Reshape` whose first
//! dimension stays a multiple of the batch...). A tensor that depends on
//! the feeds has `batch * k` rows, each sample's `k` rows together (a
//! `Reshape` from `[batch, 16, 32]` to `[batch * 16, 32]` and back, as
//! Keras's `Dense` on sequences does). A constant holding such a row
//! count where an op reads a shape (`Reshape`'s shape,
//! `Conv2DBackpropInput`'s sizes, `Slice`'s size) is scaled to each
//! part's samples. Anything else (a stateful op, `Shape` of a fed tensor,
//! a fetch that does not depend on the feeds) keeps the runs whole.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use opreg_proto::DataType;
use rustc_hash::{FxHashMap, FxHashSet};
use smallvec::SmallVec;

use crate::Graph;
use crate::plan::Plan;
use crate::threads::RunStart;
use registry_core::attr::NodeAttrs;
use registry_core::tensor::{HostBuffer, Tensor};

/// One tensor's dimensions.
pub(crate) type Dims = SmallVec<[usize; 4]>;

/// The dimensions of every slot of a plan, as one run found them (feeds,
/// constants and each step's outputs); `None` for a slot no value reached.
pub(crate) type SlotShapes = Vec<Option<Dims>>;

/// Feed shapes for which a decision is kept, at most.
const KEPT_DECISIONS: usize = 8;

/// The split decisions of one plan, by the shapes of its feeds.
#[derive(Default)]
pub(crate) struct SplitDecisions {
    decisions: Mutex<FxHashMap<Vec<Dims>, Arc<Decision>>>,
}

/// How runs with given feed shapes go.
pub(crate) enum Decision {
    /// Whole, for the reason given (the first step that is not per sample).
    Whole(String),
    /// Over parts of the batch, when faster.
    Split(SplitRuns),
}

/// Runs that may split over parts of the batch.
pub(crate) struct SplitRuns {
    /// Each part's number of samples and its plan.
    pub(crate) parts: Vec<Part>,
    /// Whether runs split (`true`) or run whole, by the times of both
    /// (`BatchSplit::Auto`): a split run copies its feeds and fetches,
    /// which costs more than it gains where each kernel already splits
    /// its work well (one element-wise op over 16M floats: 12 ms split
    /// against 3.3 ms whole).
    pub(crate) choice: RunStart,
    /// Split runs so far, up to [`SPLIT_WARM_UP`].
    split_runs: AtomicU32,
}

/// Whole runs at least this long try splitting (`BatchSplit::Auto`): a
/// split run hands a part to another thread, which shorter runs do not
/// gain from (half of [`RunStart`]'s placement threshold: a split run
/// gains more than a run moved to the pool).
const SPLIT_TRIAL_LONG: Duration = Duration::from_micros(125);

/// Split runs not timed for [`SplitRuns::choice`]: the first runs of the
/// parts' plans fill their buffers and their threads' caches (mobilenet_v2:
/// 600-1,100 us each, then 430-500), and timed against warm whole runs
/// they made the whole ones look faster.
const SPLIT_WARM_UP: u32 = 8;

impl SplitRuns {
    /// Whether the next run splits: every run when `always`
    /// (`BatchSplit::Always`), else while the choice says split runs are
    /// the faster.
    pub(crate) fn splits_now(&self, always: bool) -> bool {
        always || self.choice.chosen()
    }

    /// Records a run (split or not) for the choice between them, but for
    /// the first [`SPLIT_WARM_UP`] split runs.
    pub(crate) fn record(&self, split: bool, took: Duration) {
        if split && self.split_runs.load(Ordering::Relaxed) < SPLIT_WARM_UP {
            self.split_runs.fetch_add(1, Ordering::Relaxed);
            return;
        }
        self.choice.record(split, took);
    }
}

/// One part of a split run.
pub(crate) struct Part {
    /// Its samples (dimension 0 of each feed and fetch).
    pub(crate) rows: usize,
    /// The plan with this part's batch size in the constants that hold the
    /// batch size (its own buffers, so that the parts run at once).
    pub(crate) plan: Plan,
}

impl SplitDecisions {
    /// The decision for feeds of these shapes, if one was made.
    pub(crate) fn decision(&self, feeds: &[Dims]) -> Option<Arc<Decision>> {
        self.lock().get(feeds).cloned()
    }

    /// Decides for feeds of these shapes from a whole run's `shapes`, into
    /// at most `threads` parts, and keeps the decision.
    pub(crate) fn decide(
        &self,
        graph: &Graph,
        plan: &Plan,
        feeds: Vec<Dims>,
        shapes: &SlotShapes,
        threads: usize,
    ) -> Arc<Decision> {
        let decision = Arc::new(decide(graph, plan, &feeds, shapes, threads));
        let mut decisions = self.lock();
        if decisions.len() >= KEPT_DECISIONS {
            decisions.clear();
        }
        decisions.insert(feeds, Arc::clone(&decision));
        decision
    }

    /// Keeps runs with feeds of these shapes whole from now on, for `why`
    /// (a split run failed where the whole batch ran).
    pub(crate) fn refuse(&self, feeds: Vec<Dims>, why: String) {
        self.lock().insert(feeds, Arc::new(Decision::Whole(why)));
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, FxHashMap<Vec<Dims>, Arc<Decision>>> {
        self.decisions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

/// The decision for a plan whose feeds have shapes `feeds` and whose slots
/// had `shapes` in a whole run.
fn decide(
    graph: &Graph,
    plan: &Plan,
    feeds: &[Dims],
    shapes: &SlotShapes,
    threads: usize,
) -> Decision {
    let batch = match feeds.first().and_then(|dims| dims.first()) {
        Some(&batch) if feeds.iter().all(|dims| dims.first() == Some(&batch)) => batch,
        _ => return Decision::Whole("the feeds do not share a first dimension".into()),
    };
    let parts = threads.min(batch);
    if parts < 2 {
        return Decision::Whole(format!("{parts} part of the batch of {batch}"));
    }
    match separable(graph, plan, shapes, batch) {
        Err(why) => Decision::Whole(why),
        Ok(batch_constants) => Decision::Split(SplitRuns {
            parts: part_rows(batch, parts)
                .into_iter()
                .map(|rows| Part {
                    rows,
                    plan: plan.with_constants(|slot, value| {
                        batch_constants
                            .contains(&slot)
                            .then(|| scaled_first(value, batch, rows))
                            .flatten()
                    }),
                })
                .collect(),
            choice: RunStart::trying_after(SPLIT_TRIAL_LONG),
            split_runs: AtomicU32::new(0),
        }),
    }
}

/// `batch` samples in `parts` parts as even as can be (the first ones one
/// larger).
pub(crate) fn part_rows(batch: usize, parts: usize) -> Vec<usize> {
    let parts = parts.clamp(1, batch.max(1));
    (0..parts)
        .map(|i| batch / parts + usize::from(i < batch % parts))
        .collect()
}

/// `value` (an integer vector whose first element is a multiple of
/// `batch`) with its first element scaled from `batch` samples to `rows`.
fn scaled_first(value: &Tensor, batch: usize, rows: usize) -> Option<Tensor> {
    let mut values = value.int_values().ok()?;
    let first = values.first_mut()?;
    *first = *first / i64::try_from(batch).ok()? * i64::try_from(rows).ok()?;
    let dims = value.dims().to_vec();
    match value.dtype() {
        DataType::DtInt32 => {
            let values = values
                .into_iter()
                .map(i32::try_from)
                .collect::<Result<Vec<_>, _>>();
            Tensor::from_vec(dims, values.ok()?).ok()
        }
        DataType::DtInt64 => Tensor::from_vec(dims, values).ok(),
        _ => None,
    }
}

/// Checks that each step of `plan` is per sample along dimension 0 of a
/// batch of `batch` (the shapes of a whole run given), and returns the
/// slots of the constants that hold a row count of the batch as a shape's
/// first element; else why not, naming the first step that is not.
pub(crate) fn separable(
    graph: &Graph,
    plan: &Plan,
    shapes: &SlotShapes,
    batch: usize,
) -> Result<Vec<usize>, String> {
    let constants: FxHashMap<usize, &Tensor> = plan
        .constants
        .iter()
        .map(|(slot, value)| (*slot, value))
        .collect();
    let mut batched = vec![false; shapes.len()];
    for &(slot, _) in &plan.feeds {
        batched[slot] = true;
    }
    let mut sizes = FxHashSet::default();
    let mut other_uses = FxHashSet::default();
    for step in &plan.steps {
        let node = &graph.nodes()[step.node];
        let why = |problem: &str| format!("node '{}' ({}) {problem}", node.def.name, node.def.op);
        if node.op_def.is_stateful {
            return Err(why("is stateful: each part would run it"));
        }
        if !step.kernel.info().on_cpu() {
            return Err(why("runs on a device: its parts would share its streams"));
        }
        let inputs: SmallVec<[Input<'_>; 4]> = step
            .inputs
            .iter()
            .map(|&slot| Input {
                slot,
                batched: batched[slot],
                dims: shapes.get(slot).and_then(Option::as_deref),
                constant: constants.get(&slot).copied(),
            })
            .collect();
        let step_info = StepInfo {
            op: &node.def.op,
            attrs: NodeAttrs::new(&node.def, &node.op_def),
            inputs: &inputs,
            out_dims: step
                .outputs
                .first()
                .copied()
                .flatten()
                .and_then(|slot| shapes.get(slot).and_then(Option::as_deref)),
            batch,
        };
        let outcome = if inputs.iter().any(|input| input.batched) {
            step_info.rule().map_err(|problem| why(&problem))?
        } else {
            Outcome::unbatched()
        };
        for (position, input) in inputs.iter().enumerate() {
            if input.constant.is_some() {
                if outcome.batch_size_input == Some(position) {
                    sizes.insert(input.slot);
                } else {
                    other_uses.insert(input.slot);
                }
            }
        }
        for (index, slot) in step.outputs.iter().enumerate() {
            let Some(slot) = *slot else { continue };
            let out_batched = outcome.batched_output(index);
            if out_batched {
                let dims = shapes.get(slot).and_then(Option::as_deref);
                if !dims
                    .and_then(|d| d.first())
                    .is_some_and(|&rows| rows >= batch && rows % batch == 0)
                {
                    return Err(why(&format!(
                        "gives output {index} of shape {dims:?}, whose first dimension is not a multiple of the batch of {batch}"
                    )));
                }
            }
            batched[slot] = out_batched;
        }
    }
    if let Some(index) = plan.fetches.iter().position(|&slot| !batched[slot]) {
        return Err(format!("fetch {index} does not depend on the feeds"));
    }
    if let Some(slot) = sizes.iter().find(|slot| other_uses.contains(slot)) {
        return Err(format!(
            "the batch size in constant slot {slot} is also read as something else"
        ));
    }
    let mut sizes: Vec<usize> = sizes.into_iter().collect();
    sizes.sort_unstable();
    Ok(sizes)
}

/// One input of a step, as the analysis sees it.
struct Input<'a> {
    slot: usize,
    /// Whether it carries the batch (depends on a feed).
    batched: bool,
    dims: Option<&'a [usize]>,
    /// Its value, when it is a constant of the plan.
    constant: Option<&'a Tensor>,
}

impl Input<'_> {
    fn rank(&self) -> Option<usize> {
        self.dims.map(<[usize]>::len)
    }

    /// Its value as integers, when it is an integer constant.
    fn ints(&self) -> Result<Vec<i64>, String> {
        self.constant
            .and_then(|value| value.int_values().ok())
            .ok_or_else(|| format!("reads a non-constant (slot {})", self.slot))
    }
}

/// What a step does with the batch.
struct Outcome {
    /// Which outputs carry it.
    outputs: OutputsBatched,
    /// The input (a constant) whose first element is a row count of the
    /// batch, scaled to each part's.
    batch_size_input: Option<usize>,
}

enum OutputsBatched {
    None,
    All,
    /// Output `i` carries it when input `i` does (`IdentityN`).
    AsInputs(SmallVec<[bool; 4]>),
}

impl Outcome {
    fn unbatched() -> Self {
        Self {
            outputs: OutputsBatched::None,
            batch_size_input: None,
        }
    }

    fn all() -> Self {
        Self {
            outputs: OutputsBatched::All,
            batch_size_input: None,
        }
    }

    fn batched_output(&self, index: usize) -> bool {
        match &self.outputs {
            OutputsBatched::None => false,
            OutputsBatched::All => true,
            OutputsBatched::AsInputs(flags) => flags.get(index).copied().unwrap_or(false),
        }
    }
}

/// Expands to the names of the unary table's ops.
macro_rules! unary_names {
    ($($(#[$doc:meta])* $op:ident($x:ident) [$group:literal]:
        cpu <$t:ident: $bound:path> $cpu:expr, for [$($ct:ident),*];
        gpu {$($kind:ident: $gpu:literal),*} for [$($gt:ident),*];)*) => {
        &[$(stringify!($op)),*]
    };
}

/// The element-wise unary functions of the standard ops' table.
const UNARY_TABLE: &[&str] = opreg_op_logic::unary_functions!(unary_names);

/// Element-wise ops besides the unary table's (every input broadcast
/// against the others).
const ELEMENT_WISE: &[&str] = &[
    "Inv",
    "Rint",
    "LeakyRelu",
    "Gelu",
    "Cast",
    "IsNan",
    "IsInf",
    "IsFinite",
    "LogicalNot",
    "ZerosLike",
    "OnesLike",
    "Add",
    "AddV2",
    "Sub",
    "Mul",
    "Div",
    "RealDiv",
    "DivNoNan",
    "FloorDiv",
    "FloorMod",
    "TruncateDiv",
    "Maximum",
    "Minimum",
    "Pow",
    "SquaredDifference",
    "BiasAdd",
    "BiasAddV1",
    "Less",
    "LessEqual",
    "Greater",
    "GreaterEqual",
    "Equal",
    "NotEqual",
    "LogicalAnd",
    "LogicalOr",
    "SelectV2",
    "AddN",
    "ClipByValue",
    "Atan2",
    "Xdivy",
    "Xlogy",
    "MulNoNan",
];

/// Ops that pass their inputs through (output `i` is input `i`).
const PASS_THROUGH: &[&str] = &[
    "Identity",
    "IdentityN",
    "StopGradient",
    "PreventGradient",
    "Snapshot",
];

/// Ops over images or volumes (NHWC, NCHW, NDHWC...: the batch first) whose
/// input 0 is the batch and whose other inputs (filters, sizes, scales)
/// are not, but for a fused op's tensor added (input 3).
const PER_IMAGE: &[&str] = &[
    "Conv2D",
    "_FusedConv2D",
    "DepthwiseConv2dNative",
    "_FusedDepthwiseConv2dNative",
    "Conv3D",
    "MaxPool",
    "MaxPoolV2",
    "AvgPool",
    "MaxPool3D",
    "AvgPool3D",
    "ResizeBilinear",
    "ResizeNearestNeighbor",
    "ResizeBicubic",
    "DepthToSpace",
    "SpaceToDepth",
    "LRN",
];

/// Reductions over the axes of input 1.
const REDUCTIONS: &[&str] = &[
    "Mean",
    "Sum",
    "Max",
    "Min",
    "Prod",
    "All",
    "Any",
    "EuclideanNorm",
];

/// A step being checked.
struct StepInfo<'a> {
    op: &'a str,
    attrs: NodeAttrs<'a>,
    inputs: &'a [Input<'a>],
    /// Output 0's dimensions (when something reads it).
    out_dims: Option<&'a [usize]>,
    batch: usize,
}

/// `axis` of a tensor of `rank` dimensions, negative ones counted from the
/// end; `None` when out of range.
fn normalized(axis: i64, rank: usize) -> Option<usize> {
    let rank = i64::try_from(rank).ok()?;
    let axis = if axis < 0 { axis + rank } else { axis };
    if axis < rank {
        usize::try_from(axis).ok()
    } else {
        None
    }
}

impl StepInfo<'_> {
    /// Whether the step is per sample, and what it does with the batch;
    /// else why not.
    fn rule(&self) -> Result<Outcome, String> {
        let op = self.op;
        if UNARY_TABLE.contains(&op) || ELEMENT_WISE.contains(&op) {
            return self.element_wise(self.inputs.iter().collect());
        }
        if PASS_THROUGH.contains(&op) {
            return Ok(Outcome {
                outputs: OutputsBatched::AsInputs(self.inputs.iter().map(|i| i.batched).collect()),
                batch_size_input: None,
            });
        }
        if PER_IMAGE.contains(&op) {
            return self.only_batched(&[0, 3]);
        }
        if REDUCTIONS.contains(&op) {
            self.only_batched(&[0])?;
            return self.axes_keep_batch(1, 0);
        }
        match op {
            "MatMul" | "_FusedMatMul" => {
                self.flag_is("transpose_a", false)?;
                self.only_batched(&[0, 3])
            }
            "BatchMatMul" | "BatchMatMulV2" | "BatchMatMulV3" => {
                if self.out_rank()? >= 3 {
                    self.element_wise(self.inputs.iter().take(2).collect())
                } else {
                    self.flag_is("adj_x", false)?;
                    self.only_batched(&[0])
                }
            }
            "Einsum" => self.einsum(),
            "ArgMax" | "ArgMin" | "Cumsum" | "Cumprod" | "ReverseV2" => {
                // (The axis or axes are input 1.)
                self.only_batched(&[0])?;
                self.axes_keep_batch(1, 0)
            }
            "Softmax" | "LogSoftmax" | "TopKV2" | "InTopKV2" => {
                self.only_batched(&[0])?;
                self.rank_at_least(0, 2)
            }
            "Pad" | "PadV2" | "MirrorPad" => {
                self.only_batched(&[0])?;
                let paddings = self.inputs.get(1).ok_or("has no paddings")?.ints()?;
                if paddings.get(..2).is_some_and(|first| first == [0, 0]) {
                    Ok(Outcome::all())
                } else {
                    Err("pads the batch dimension".into())
                }
            }
            "ConcatV2" => {
                let (axis_input, values) = self.inputs.split_last().ok_or("has no inputs")?;
                self.all_batched(values)?;
                self.axis_not_batch(axis_input.ints()?.first().copied(), self.rank(0)?)
            }
            "Pack" => {
                self.all_batched(self.inputs)?;
                self.axis_not_batch(Some(self.int_attr("axis")?), self.rank(0)? + 1)
            }
            "Unpack" => self.axis_not_batch(Some(self.int_attr("axis")?), self.rank(0)?),
            "Split" => {
                self.only_batched(&[1])?;
                let axis = self.inputs[0].ints()?.first().copied();
                self.axis_not_batch(axis, self.rank(1)?)
            }
            "SplitV" => {
                self.only_batched(&[0])?;
                let axis = self.inputs.get(2).ok_or("has no axis")?.ints()?;
                self.axis_not_batch(axis.first().copied(), self.rank(0)?)
            }
            "ExpandDims" => {
                self.only_batched(&[0])?;
                let axis = self.inputs.get(1).ok_or("has no axis")?.ints()?;
                self.axis_not_batch(axis.first().copied(), self.rank(0)? + 1)
            }
            "Squeeze" => {
                self.only_batched(&[0])?;
                let rank = self.rank(0)?;
                let dims: Vec<i64> = self.attrs.get("squeeze_dims").map_err(|e| e.to_string())?;
                if dims.iter().any(|&d| normalized(d, rank) == Some(0)) {
                    return Err("squeezes the batch dimension".into());
                }
                Ok(Outcome::all())
            }
            "Transpose" => {
                self.only_batched(&[0])?;
                self.first_is(1, 0, "moves the batch dimension")
            }
            "Tile" => {
                self.only_batched(&[0])?;
                self.first_is(1, 1, "tiles the batch dimension")
            }
            "Reshape" => {
                self.only_batched(&[0])?;
                let shape = self.inputs.get(1).ok_or("has no shape")?.ints()?;
                if self.rank(0)? == 0 {
                    return Err("reshapes a scalar".into());
                }
                self.batch_size_first(1, &shape, true)
            }
            "Slice" => {
                self.only_batched(&[0])?;
                let begin = self.inputs.get(1).ok_or("has no begin")?.ints()?;
                let size = self.inputs.get(2).ok_or("has no size")?.ints()?;
                // All of dimension 0: from 0, to its end (-1) or its size.
                let rows = self.rows(0)?;
                if begin.first() != Some(&0) || !size.first().is_some_and(|&s| s == -1 || s == rows)
                {
                    return Err("slices the batch dimension".into());
                }
                self.batch_size_first(2, &size, true)
            }
            "StridedSlice" => self.strided_slice(),
            "GatherV2" => self.gather(),
            "Conv2DBackpropInput" => {
                self.only_batched(&[2])?;
                let sizes = self.inputs[0].ints()?;
                self.batch_size_first(0, &sizes, false)
            }
            "FusedBatchNorm" | "FusedBatchNormV2" | "FusedBatchNormV3" => {
                self.flag_is("is_training", false)?;
                self.only_batched(&[0])?;
                // Only `y` carries the batch; the statistics are the inputs'.
                Ok(Outcome {
                    outputs: OutputsBatched::AsInputs([true].into_iter().collect()),
                    batch_size_input: None,
                })
            }
            _ => Err("is not known to compute each sample on its own".into()),
        }
    }

    fn out_rank(&self) -> Result<usize, String> {
        self.out_dims
            .map(<[usize]>::len)
            .ok_or_else(|| "has no output shape".into())
    }

    fn rank(&self, input: usize) -> Result<usize, String> {
        self.inputs
            .get(input)
            .and_then(Input::rank)
            .ok_or_else(|| format!("has no shape for input {input}"))
    }

    /// The size of dimension 0 of input `input`.
    fn rows(&self, input: usize) -> Result<i64, String> {
        self.inputs
            .get(input)
            .and_then(|i| i.dims)
            .and_then(|d| d.first())
            .and_then(|&rows| i64::try_from(rows).ok())
            .ok_or_else(|| format!("has no shape for input {input}"))
    }

    fn int_attr(&self, name: &str) -> Result<i64, String> {
        self.attrs.get::<i64>(name).map_err(|e| e.to_string())
    }

    fn flag_is(&self, name: &str, want: bool) -> Result<(), String> {
        match self.attrs.get::<bool>(name) {
            Ok(value) if value == want => Ok(()),
            Ok(_) => Err(format!("has {name} = {}", !want)),
            Err(e) => Err(e.to_string()),
        }
    }

    /// Only the inputs at `allowed` may carry the batch (and the first of
    /// them must).
    fn only_batched(&self, allowed: &[usize]) -> Result<Outcome, String> {
        if let Some((index, _)) = self
            .inputs
            .iter()
            .enumerate()
            .find(|(index, input)| input.batched && !allowed.contains(index))
        {
            return Err(format!("reads the batch in input {index}"));
        }
        match allowed.first().and_then(|&first| self.inputs.get(first)) {
            Some(input) if input.batched => Ok(Outcome::all()),
            _ => Err("does not read the batch where it takes its samples".into()),
        }
    }

    /// Input `input` (a constant) starts with `want`, else `problem`.
    fn first_is(&self, input: usize, want: i64, problem: &str) -> Result<Outcome, String> {
        let values = self.inputs.get(input).ok_or("has too few inputs")?.ints()?;
        if values.first() == Some(&want) {
            Ok(Outcome::all())
        } else {
            Err(problem.into())
        }
    }

    fn all_batched(&self, inputs: &[Input<'_>]) -> Result<(), String> {
        if inputs.iter().all(|input| input.batched) {
            Ok(())
        } else {
            Err("joins tensors with and without the batch".into())
        }
    }

    fn rank_at_least(&self, input: usize, least: usize) -> Result<Outcome, String> {
        if self.rank(input)? >= least {
            Ok(Outcome::all())
        } else {
            Err(format!(
                "works along the batch of a rank-{} tensor",
                self.rank(input)?
            ))
        }
    }

    /// The axis (of a tensor of `rank` dimensions) is not dimension 0.
    fn axis_not_batch(&self, axis: Option<i64>, rank: usize) -> Result<Outcome, String> {
        match axis.and_then(|axis| normalized(axis, rank)) {
            Some(0) => Err("works along the batch dimension".into()),
            Some(_) => Ok(Outcome::all()),
            None => Err("has an axis out of range".into()),
        }
    }

    /// The axes in input `axes` (constant) of input `data` leave dimension 0
    /// alone.
    fn axes_keep_batch(&self, axes: usize, data: usize) -> Result<Outcome, String> {
        let rank = self.rank(data)?;
        let values = self.inputs.get(axes).ok_or("has no axes")?.ints()?;
        for axis in values {
            self.axis_not_batch(Some(axis), rank)?;
        }
        Ok(Outcome::all())
    }

    /// A shape-like constant (input `input`, `values`) whose first element
    /// is a multiple of the batch size (scaled to each part's) or, when
    /// `minus_one_too`, -1.
    fn batch_size_first(
        &self,
        input: usize,
        values: &[i64],
        minus_one_too: bool,
    ) -> Result<Outcome, String> {
        let batch = i64::try_from(self.batch).map_err(|e| e.to_string())?;
        match values.first() {
            Some(&first) if first >= batch && first % batch == 0 => Ok(Outcome {
                outputs: OutputsBatched::All,
                batch_size_input: Some(input),
            }),
            Some(-1) if minus_one_too => Ok(Outcome::all()),
            _ => Err(format!(
                "does not keep a multiple of the batch of {batch} first (input {input} is {values:?})"
            )),
        }
    }

    /// Every input broadcast against the others: one that carries the
    /// batch has the output's rank, one that does not has a lower rank or
    /// a first dimension of 1.
    fn element_wise(&self, inputs: Vec<&Input<'_>>) -> Result<Outcome, String> {
        let rank = self.out_rank()?;
        for (index, input) in inputs.iter().enumerate() {
            let dims = input
                .dims
                .ok_or_else(|| format!("has no shape for input {index}"))?;
            let fits = if input.batched {
                dims.len() == rank
            } else {
                dims.len() < rank || dims.first() == Some(&1)
            };
            if !fits {
                return Err(format!(
                    "broadcasts input {index} of shape {dims:?} along the batch"
                ));
            }
        }
        Ok(Outcome::all())
    }

    /// `Einsum` without an ellipsis: the output's first label is the first
    /// of each input that carries the batch and absent from the others.
    fn einsum(&self) -> Result<Outcome, String> {
        let equation: &str = self.attrs.get("equation").map_err(|e| e.to_string())?;
        let equation =
            opreg_op_logic::einsum::Equation::parse(equation).map_err(|e| e.to_string())?;
        let no_ellipsis = |s: &opreg_op_logic::einsum::Subscripts| !s.ellipsis;
        if !equation.inputs.iter().all(no_ellipsis) || !no_ellipsis(&equation.output) {
            return Err("has an ellipsis".into());
        }
        let label = *equation
            .output
            .before
            .first()
            .ok_or("has a scalar output")?;
        for (subscripts, input) in equation.inputs.iter().zip(self.inputs) {
            let first = subscripts.before.first() == Some(&label);
            let has = subscripts.before.contains(&label);
            let fits = if input.batched {
                first && subscripts.before[1..].iter().all(|&l| l != label)
            } else {
                !has
            };
            if !fits {
                return Err(format!("mixes the batch in '{}'", equation.text));
            }
        }
        Ok(Outcome::all())
    }

    /// `StridedSlice` taking all of dimension 0, step 1, no new or
    /// ellipsis axes.
    fn strided_slice(&self) -> Result<Outcome, String> {
        self.only_batched(&[0])?;
        let mask = |name: &str| self.int_attr(name);
        if mask("ellipsis_mask")? != 0 || mask("new_axis_mask")? != 0 {
            return Err("has an ellipsis or new axes".into());
        }
        if mask("shrink_axis_mask")? & 1 != 0 {
            return Err("takes one sample".into());
        }
        let begin = self.inputs.get(1).ok_or("has no begin")?.ints()?;
        let end = self.inputs.get(2).ok_or("has no end")?.ints()?;
        let strides = self.inputs.get(3).ok_or("has no strides")?.ints()?;
        let rows = self.rows(0)?;
        let from_start = mask("begin_mask")? & 1 != 0 || begin.first() == Some(&0);
        let to_end = mask("end_mask")? & 1 != 0 || end.first().is_some_and(|&e| e >= rows);
        if from_start && to_end && strides.first() == Some(&1) {
            Ok(Outcome::all())
        } else {
            Err("slices the batch dimension".into())
        }
    }

    /// `GatherV2` (no batch dims): rows of a table that does not carry the
    /// batch picked by indices that do (axis 0), or samples' values picked
    /// by fixed indices along another axis.
    fn gather(&self) -> Result<Outcome, String> {
        if self.int_attr("batch_dims")? != 0 {
            return Err("has batch_dims".into());
        }
        let axis = self.inputs.get(2).ok_or("has no axis")?.ints()?;
        let axis = axis.first().copied().ok_or("has no axis")?;
        let params_rank = self.rank(0)?;
        let axis = normalized(axis, params_rank).ok_or("has an axis out of range")?;
        match (self.inputs[0].batched, self.inputs[1].batched) {
            (false, true) if axis == 0 => Ok(Outcome::all()),
            (true, false) if axis != 0 => Ok(Outcome::all()),
            _ => Err("gathers along the batch".into()),
        }
    }
}

/// Part `index`'s feeds: its rows of every feed along dimension 0 (the
/// parts in order); `None` when a feed cannot be split so (not host memory
/// of fixed-size elements, or a batch other than the parts').
pub(crate) fn part_feeds(
    feeds: &[Tensor],
    parts: &[Part],
    index: usize,
) -> Option<SmallVec<[Tensor; 4]>> {
    let batch: usize = parts.iter().map(|part| part.rows).sum();
    let first: usize = parts.get(..index)?.iter().map(|part| part.rows).sum();
    let rows = parts.get(index)?.rows;
    feeds
        .iter()
        .map(|feed| {
            if feed.dims().first() != Some(&batch) {
                return None;
            }
            let bytes = feed.as_bytes().ok()?;
            let row_bytes = bytes.len() / batch;
            let span = bytes.get(first * row_bytes..(first + rows) * row_bytes)?;
            let mut dims = feed.dims().to_vec();
            dims[0] = rows;
            // Every byte is written below: no zero fill first.
            let buffer = HostBuffer::for_overwrite(span.len()).ok()?;
            let mut part = Tensor::from_host_buffer(feed.dtype(), dims, buffer).ok()?;
            part.as_mut_bytes().ok()?.copy_from_slice(span);
            Some(part)
        })
        .collect()
}

/// The fetches of the whole batch from each part's (joined along
/// dimension 0); else why not: a part failed, or their fetches do not join
/// (each part's must have as many rows per sample, and the same other
/// dimensions and type).
pub(crate) fn join_fetches(
    results: Vec<Result<Vec<Tensor>, crate::RunError>>,
    parts: &[Part],
) -> Result<Vec<Tensor>, String> {
    let outputs: Vec<Vec<Tensor>> = results
        .into_iter()
        .collect::<Result<_, _>>()
        .map_err(|e| format!("a part failed: {e}"))?;
    let batch: usize = parts.iter().map(|part| part.rows).sum();
    let fetches = outputs.first().map_or(0, Vec::len);
    (0..fetches)
        .map(|index| {
            let unjoinable = || format!("fetch {index} of the parts does not join");
            let pieces: Vec<&Tensor> = outputs
                .iter()
                .map(|out| out.get(index))
                .collect::<Option<_>>()
                .ok_or_else(unjoinable)?;
            let first = pieces.first().ok_or_else(unjoinable)?;
            // Rows per sample.
            let per_sample = first.dims().first().copied().unwrap_or(0) / parts[0].rows.max(1);
            let joinable = per_sample > 0
                && pieces.iter().zip(parts).all(|(piece, part)| {
                    piece.dtype() == first.dtype()
                        && piece.dims().first() == Some(&(part.rows * per_sample))
                        && piece.dims()[1..] == first.dims()[1..]
                });
            if !joinable {
                return Err(unjoinable());
            }
            let mut dims = first.dims().to_vec();
            dims[0] = batch * per_sample;
            // Every byte is written below: no zero fill first.
            let len = pieces
                .iter()
                .map(|piece| piece.as_bytes().map_or(0, <[u8]>::len))
                .sum();
            let mut whole = HostBuffer::for_overwrite(len)
                .and_then(|buffer| Tensor::from_host_buffer(first.dtype(), dims, buffer))
                .map_err(|e| e.to_string())?;
            let bytes = whole.as_mut_bytes().map_err(|e| e.to_string())?;
            let mut at = 0;
            for piece in pieces {
                let piece = piece.as_bytes().map_err(|e| e.to_string())?;
                bytes
                    .get_mut(at..at + piece.len())
                    .ok_or_else(unjoinable)?
                    .copy_from_slice(piece);
                at += piece.len();
            }
            Ok(whole)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_are_as_even_as_can_be() {
        assert_eq!(part_rows(2, 2), [1, 1]);
        assert_eq!(part_rows(5, 2), [3, 2]);
        assert_eq!(part_rows(7, 3), [3, 2, 2]);
        // No more parts than samples.
        assert_eq!(part_rows(2, 8), [1, 1]);
    }

    #[test]
    fn row_counts_scale_to_a_parts_samples() {
        let shape = Tensor::from_vec([3], vec![32i32, -1, 4]).unwrap();
        let scaled = scaled_first(&shape, 2, 1).unwrap();
        assert_eq!(scaled.as_slice::<i32>().unwrap(), [16, -1, 4]);
        let sizes = Tensor::from_vec([4], vec![6i64, 8, 8, 3]).unwrap();
        let scaled = scaled_first(&sizes, 6, 4).unwrap();
        assert_eq!(scaled.as_slice::<i64>().unwrap(), [4, 8, 8, 3]);
        // Not an integer vector: nothing to scale.
        assert!(scaled_first(&Tensor::from_vec([1], vec![2.0f32]).unwrap(), 2, 1).is_none());
    }
}

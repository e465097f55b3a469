//! Control ops: [`NoOp`] (TF's `no_op.cc`), TF 1 control flow (`control_flow_ops.cc`:
//! [`Enter`], [`Exit`], [`Switch`], [`SwitchN`], [`Merge`], [`NextIteration`], [`LoopCond`]) and the
//! functional ops (`functional_ops.cc`: [`While`], [`If`], [`Case`], their stateless forms,
//! [`PartitionedCall`], [`StatefulPartitionedCall`]), which opreg's runtime runs itself.

use registry_core::op;

/// Does nothing. Only useful as a placeholder for control edges.
///
/// A `NoOp` node has no inputs and no outputs; graphs use it to group control
/// dependencies, for example as the target that runs a set of updates.
#[op(shape_fn = registry_core::shape::common::no_outputs)]
pub struct NoOp;

/// Creates or finds a child frame, and makes `data` available to the child frame.
///
/// This op is used together with `Exit` to create loops in the graph.
/// The unique `frame_name` is used by the `Executor` to identify frames. If
/// `is_constant` is true, `output` is a constant in the child frame; otherwise
/// it may be changed in the child frame. At most `parallel_iterations` iterations
/// are run in parallel in the child frame.
#[op(
    input = "data: T",
    output = "output: T",
    attr = "T: type",
    attr = "frame_name: string",
    attr = "is_constant: bool = false",
    attr = "parallel_iterations: int = 10",
    shape_fn = crate::shape::enter
)]
pub struct Enter;

/// Exits the current frame to its parent frame.
///
/// Exit makes its input `data` available to the parent frame.
#[op(
    input = "data: T",
    output = "output: T",
    attr = "T: type",
    shape_fn = registry_core::shape::common::unchanged_shape
)]
pub struct Exit;

/// Forwards `data` to the output port determined by `pred`.
///
/// If `pred` is true, the `data` input is forwarded to `output_true`. Otherwise,
/// the data goes to `output_false`. The other output is dead: nodes that
/// read it do not run, up to the next `Merge`.
#[op(
    input = "data: T",
    input = "pred: bool",
    output = "output_false: T",
    output = "output_true: T",
    attr = "T: type",
    shape_fn = crate::shape::switch
)]
pub struct Switch;

/// Forwards `data` to the output numbered `output_index`.
///
/// An index out of range picks the last output; the other outputs are
/// dead (TF's lowering of `Case`).
#[op(
    name = "_SwitchN",
    input = "data: T",
    input = "output_index: int32",
    output = "outputs: num_outs * T",
    attr = "num_outs: int >= 1",
    attr = "T: type",
    shape_fn = crate::shape::switch
)]
pub struct SwitchN;

/// Forwards the value of an available tensor from `inputs` to `output`.
///
/// `Merge` waits for at least one of the tensors in `inputs` to become available.
/// It is usually combined with `Switch` to implement branching.
///
/// `Merge` forwards the first tensor to become available to `output`, and sets
/// `value_index` to its index in `inputs`.
#[op(
    input = "inputs: N * T",
    output = "output: T",
    output = "value_index: int32",
    attr = "T: type",
    attr = "N: int >= 1",
    shape_fn = crate::shape::merge
)]
pub struct Merge;

/// Makes its input available to the next iteration.
///
/// Its output goes to the loop's `Merge` in the next iteration (the loop's
/// back edge).
#[op(
    input = "data: T",
    output = "output: T",
    attr = "T: type",
    shape_fn = registry_core::shape::common::unchanged_shape
)]
pub struct NextIteration;

/// Forwards the input to the output.
///
/// This operator represents the loop termination condition used by the
/// "pivot" switches of a loop.
#[op(
    input = "input: bool",
    output = "output: bool",
    shape_fn = crate::shape::loop_cond
)]
pub struct LoopCond;

/// Runs `body` on the loop variables while `cond` holds.
///
/// output = input; While (Cond(output)) { output = Body(output) }. `cond` is a function of the loop variables returning a scalar (true
/// while the loop runs on; a non-scalar is true when not empty); `body`
/// maps the loop variables to their next values.
#[op(
    input = "input: T",
    output = "output: T",
    attr = "T: list(type) >= 0",
    attr = "cond: func",
    attr = "body: func",
    attr = "output_shapes: list(shape) = []",
    attr = "parallel_iterations: int = 10",
    stateful,
    shape_fn = crate::shape::while_loop
)]
pub struct While;

/// Runs `body` on the loop variables while `cond` holds, without side effects.
///
/// output = input; While (Cond(output)) { output = Body(output) }. `While` for a `cond` and a `body` without side effects.
#[op(
    input = "input: T",
    output = "output: T",
    attr = "T: list(type) >= 0",
    attr = "cond: func",
    attr = "body: func",
    attr = "output_shapes: list(shape) = []",
    attr = "parallel_iterations: int = 10",
    shape_fn = crate::shape::while_loop
)]
pub struct StatelessWhile;

/// Runs `then_branch` or `else_branch` on the inputs.
///
/// output = cond ? then_branch(input) : else_branch(input). `cond` is true when it is a non-zero scalar (a non-empty string), or a
/// non-scalar tensor with elements.
#[op(
    input = "cond: Tcond",
    input = "input: Tin",
    output = "output: Tout",
    attr = "Tcond: type",
    attr = "Tin: list(type) >= 0",
    attr = "Tout: list(type) >= 0",
    attr = "then_branch: func",
    attr = "else_branch: func",
    attr = "output_shapes: list(shape) = []",
    stateful,
    shape_fn = crate::shape::functional_outputs
)]
pub struct If;

/// Runs `then_branch` or `else_branch` on the inputs, without side effects.
///
/// output = cond ? then_branch(input) : else_branch(input). `If` for branches without side effects.
#[op(
    input = "cond: Tcond",
    input = "input: Tin",
    output = "output: Tout",
    attr = "Tcond: type",
    attr = "Tin: list(type) >= 0",
    attr = "Tout: list(type) >= 0",
    attr = "then_branch: func",
    attr = "else_branch: func",
    attr = "output_shapes: list(shape) = []",
    shape_fn = crate::shape::functional_outputs
)]
pub struct StatelessIf;

/// An n-way switch statement which calls a single branch function.
///
/// `branches[branch_index](input)` runs; an index out of range runs the
/// last branch.
#[op(
    input = "branch_index: int32",
    input = "input: Tin",
    output = "output: Tout",
    attr = "Tin: list(type) >= 0",
    attr = "Tout: list(type) >= 0",
    attr = "branches: list(func) >= 1",
    attr = "output_shapes: list(shape) = []",
    stateful,
    shape_fn = crate::shape::functional_outputs
)]
pub struct Case;

/// An n-way switch statement which calls a single branch function.
///
/// `Case` for branches without side effects.
#[op(
    input = "branch_index: int32",
    input = "input: Tin",
    output = "output: Tout",
    attr = "Tin: list(type) >= 0",
    attr = "Tout: list(type) >= 0",
    attr = "branches: list(func) >= 1",
    attr = "output_shapes: list(shape) = []",
    shape_fn = crate::shape::functional_outputs
)]
pub struct StatelessCase;

/// Returns `f(inputs)`, where `f`'s body is placed and partitioned.
///
/// Asynchronously executes a function, potentially across multiple devices but
/// within a single process.
#[op(
    input = "args: Tin",
    output = "output: Tout",
    attr = "Tin: list(type) >= 0",
    attr = "Tout: list(type) >= 0",
    attr = "f: func",
    attr = "config: string = ''",
    attr = "config_proto: string = ''",
    attr = "executor_type: string = ''",
    shape_fn = registry_core::shape::common::unknown_shape
)]
pub struct PartitionedCall;

/// Returns `f(inputs)`, where `f`'s body is placed and partitioned.
///
/// `PartitionedCall` for a function with side effects.
#[op(
    input = "args: Tin",
    output = "output: Tout",
    attr = "Tin: list(type) >= 0",
    attr = "Tout: list(type) >= 0",
    attr = "f: func",
    attr = "config: string = ''",
    attr = "config_proto: string = ''",
    attr = "executor_type: string = ''",
    stateful,
    distributed_communication,
    shape_fn = registry_core::shape::common::unknown_shape
)]
pub struct StatefulPartitionedCall;

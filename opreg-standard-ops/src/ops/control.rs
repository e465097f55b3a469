//! Control ops (TF's `no_op.cc`): [`NoOp`].

use registry_core::op;

/// Does nothing. Only useful as a placeholder for control edges.
///
/// A `NoOp` node has no inputs and no outputs; graphs use it to group control
/// dependencies, for example as the target that runs a set of updates.
#[op(shape_fn = registry_core::shape::common::no_outputs)]
pub struct NoOp;

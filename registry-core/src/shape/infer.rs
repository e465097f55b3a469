//! [`infer_shapes`]: run a shape function on one node.

use opreg_proto::{NodeDef, OpDef};

use super::{InferenceContext, Shape, ShapeError, ShapeFn};
use crate::tensor::Tensor;

/// The output shapes of `node`, an instance of `op_def` whose shape
/// function is `shape_fn`, given the shapes of its inputs and, where known,
/// their values (`input_constants`: one per input, or empty when none is
/// known). For a registered op, `OpRegistrationData::infer_shapes` finds
/// the shape function.
///
/// Fails with [`ShapeError::InNode`] when the shape function rejects the
/// node, and with [`ShapeError::OutputNotSet`] when it leaves an output
/// unset. Attrs the node leaves out take the op's defaults.
pub fn infer_shapes(
    op_def: &OpDef,
    shape_fn: ShapeFn,
    node: &NodeDef,
    input_shapes: &[Shape],
    input_constants: &[Option<&Tensor>],
) -> Result<Vec<Shape>, ShapeError> {
    let mut ctx = InferenceContext::new(node, op_def, input_shapes, input_constants)?;
    ctx.run(shape_fn)?;
    ctx.into_outputs()
}

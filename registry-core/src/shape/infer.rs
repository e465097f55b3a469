//! [`infer_shapes`]: run an op's shape function on one node.

use opreg_proto::{NodeDef, OpDef};

use super::{InferenceContext, Shape, ShapeError, ShapeFn};
use crate::registry::OpRegistrationData;
use crate::tensor::Tensor;

/// The output shapes of `node`, an instance of the registered op `op`,
/// given the shapes of its inputs and, where known, their values
/// (`input_constants`: one per input, or empty when none is known).
///
/// Fails with [`ShapeError::NoShapeFn`] when the op has none, with
/// [`ShapeError::InNode`] when the shape function rejects the node, and
/// with [`ShapeError::OutputNotSet`] when it leaves an output unset.
/// Attrs the node leaves out take the op's defaults.
pub fn infer_shapes(
    op: &OpRegistrationData,
    node: &NodeDef,
    input_shapes: &[Shape],
    input_constants: &[Option<&Tensor>],
) -> Result<Vec<Shape>, ShapeError> {
    let Some(shape_fn) = op.shape_fn() else {
        return Err(ShapeError::NoShapeFn {
            node: node.name.clone(),
            op: op.name().to_owned(),
        });
    };
    infer_shapes_with(op.op_def(), shape_fn, node, input_shapes, input_constants)
}

/// [`infer_shapes`] for an OpDef and a shape function given separately.
pub fn infer_shapes_with(
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

//! Shape functions of element-wise ops: unchanged, broadcast, merged, and
//! the trivial ones (unknown, scalar, no outputs).

use crate::shape::{InferenceContext, Shape, ShapeError};

/// The output has the shape of input 0 (TF's `UnchangedShape`): unary
/// element-wise ops, `Identity`, `Cast`, `Relu`.
pub fn unchanged_shape(c: &mut InferenceContext<'_>) -> Result<(), ShapeError> {
    let input = c.input(0)?.clone();
    c.set_output(0, input)
}

/// The output has the shape of input 0, which must have rank >= 1 (TF's
/// `UnchangedShapeWithRankAtLeast(c, 1)`): `Softmax`.
pub fn unchanged_shape_with_rank_at_least_1(
    c: &mut InferenceContext<'_>,
) -> Result<(), ShapeError> {
    let input = c.input_with_rank_at_least(0, 1)?;
    c.set_output(0, input)
}

/// Every output has an unknown shape (TF's `UnknownShape`).
pub fn unknown_shape(c: &mut InferenceContext<'_>) -> Result<(), ShapeError> {
    for i in 0..c.num_outputs() {
        c.set_output(i, Shape::unknown())?;
    }
    Ok(())
}

/// The output is a scalar (TF's `ScalarShape`).
pub fn scalar_shape(c: &mut InferenceContext<'_>) -> Result<(), ShapeError> {
    c.set_output(0, Shape::scalar())
}

/// The op has no outputs (TF's `NoOutputs`): `NoOp`.
pub fn no_outputs(_c: &mut InferenceContext<'_>) -> Result<(), ShapeError> {
    Ok(())
}

/// All inputs must have compatible shapes; the output is their merge
/// (TF's shape function of `AddN`).
pub fn merge_inputs(c: &mut InferenceContext<'_>) -> Result<(), ShapeError> {
    let merged = merged_inputs(c)?;
    c.set_output(0, merged)
}

/// The merge of all inputs' shapes, from the last to the first as TF
/// merges them (unknown when there are none); an input that does not merge
/// is an error naming it.
pub fn merged_inputs(c: &InferenceContext<'_>) -> Result<Shape, ShapeError> {
    let inputs = c.inputs();
    let Some((last, rest)) = inputs.split_last() else {
        return Ok(Shape::unknown());
    };
    let mut merged = last.clone();
    for (i, shape) in rest.iter().enumerate().rev() {
        merged = shape.merge(&merged).map_err(|e| c.input_error(i, e))?;
    }
    Ok(merged)
}

/// The output is inputs 0 and 1 broadcast against each other (TF's
/// `BroadcastBinaryOpShapeFn`), see [`Shape::broadcast`]. An attr
/// `incompatible_shape_error` set to false (`Equal`, `NotEqual`) turns
/// shapes that cannot broadcast into a scalar output instead of an error.
pub fn broadcast_binary_op(c: &mut InferenceContext<'_>) -> Result<(), ShapeError> {
    let incompatible_shape_error = c.attr_or("incompatible_shape_error", true)?;
    let (x, y) = (c.input(0)?, c.input(1)?);
    let out = x.broadcast_with(y, incompatible_shape_error)?;
    c.set_output(0, out)
}

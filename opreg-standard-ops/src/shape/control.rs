//! Shape functions of the control flow and functional ops (TF's
//! `control_flow_ops.cc` and `functional_ops.cc`).

use registry_core::proto::TensorShapeProto;
use registry_core::shape::{Dim, InferenceContext, Shape, ShapeError};

/// `Enter`: a constant's shape is its input's; any other value may change
/// from one iteration to the next, so its shape is unknown.
pub fn enter(c: &mut InferenceContext<'_>) -> Result<(), ShapeError> {
    let shape = if c.attr_or("is_constant", false)? {
        c.input(0)?.clone()
    } else {
        Shape::unknown()
    };
    c.set_output(0, shape)
}

/// `Switch` and `_SwitchN`: every output has the data's shape; the
/// predicate (the output index) is a scalar.
pub fn switch(c: &mut InferenceContext<'_>) -> Result<(), ShapeError> {
    c.input_with_rank(1, 0)?;
    let data = c.input(0)?.clone();
    for i in 0..c.num_outputs() {
        c.set_output(i, data.clone())?;
    }
    Ok(())
}

/// `Merge` (TF's `MergeShape`): the inputs' common rank, with the
/// dimensions where they differ unknown (unknown when ranks differ);
/// `value_index` is a scalar.
pub fn merge(c: &mut InferenceContext<'_>) -> Result<(), ShapeError> {
    let inputs = c.inputs();
    let mut out = inputs.first().cloned().unwrap_or_else(Shape::unknown);
    if let Some(rank) = out.rank() {
        for input in &inputs[1..] {
            if input.rank() != Some(rank) {
                out = Shape::unknown();
                break;
            }
            for d in 0..rank {
                let index = d as i64;
                if input.dim(index)?.value() != out.dim(index)?.value() {
                    out = out.replace_dim(index, Dim::UNKNOWN)?;
                }
            }
        }
    }
    c.set_output(0, out)?;
    c.set_output(1, Shape::scalar())
}

/// `LoopCond`: a scalar, like its input.
pub fn loop_cond(c: &mut InferenceContext<'_>) -> Result<(), ShapeError> {
    let shape = c.input_with_rank(0, 0)?;
    c.set_output(0, shape)
}

/// `While` and `StatelessWhile` (TF's `WhileShapeInferenceFn`): the
/// `output_shapes` attr when set, else each input's shape.
pub fn while_loop(c: &mut InferenceContext<'_>) -> Result<(), ShapeError> {
    if let Some(shapes) = output_shapes(c)? {
        return set_outputs(c, shapes);
    }
    for i in 0..c.num_outputs() {
        let shape = c.input(i)?.clone();
        c.set_output(i, shape)?;
    }
    Ok(())
}

/// `If`, `Case` and their stateless forms (TF's `IfShapeInferenceFn`):
/// the `output_shapes` attr when set, else unknown.
pub fn functional_outputs(c: &mut InferenceContext<'_>) -> Result<(), ShapeError> {
    if let Some(shapes) = output_shapes(c)? {
        return set_outputs(c, shapes);
    }
    for i in 0..c.num_outputs() {
        c.set_output(i, Shape::unknown())?;
    }
    Ok(())
}

/// The `output_shapes` attr, when set (one shape per output).
fn output_shapes(c: &InferenceContext<'_>) -> Result<Option<Vec<Shape>>, ShapeError> {
    let shapes: &[TensorShapeProto] = c.attr_or("output_shapes", &[][..])?;
    if shapes.is_empty() {
        return Ok(None);
    }
    if shapes.len() != c.num_outputs() {
        return Err(c.invalid_attr(
            "output_shapes",
            format!(
                "has {} shapes for {} outputs",
                shapes.len(),
                c.num_outputs()
            ),
        ));
    }
    shapes
        .iter()
        .map(Shape::from_proto)
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
}

fn set_outputs(c: &mut InferenceContext<'_>, shapes: Vec<Shape>) -> Result<(), ShapeError> {
    for (i, shape) in shapes.into_iter().enumerate() {
        c.set_output(i, shape)?;
    }
    Ok(())
}

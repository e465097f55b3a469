use registry_core::op;

use registry_core::shape::{InferenceContext, ShapeError};

fn unchanged(_: &mut InferenceContext) -> Result<(), ShapeError> {
    Ok(())
}

#[op(input = "x: float", output = "y: float", shape_fn = unchanged, shape_fn = unchanged)]
pub struct TwoShapes;

fn main() {}

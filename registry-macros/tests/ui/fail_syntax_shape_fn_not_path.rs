use registry_core::op;

#[op(input = "x: float", shape_fn = |_| Ok(()))]
pub struct ClosureShape;

#[op(input = "x: float", shape_fn)]
pub struct NoShape;

fn main() {}

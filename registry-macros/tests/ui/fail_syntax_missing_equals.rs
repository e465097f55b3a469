use registry_core::op;

#[op(input "x: float", output = "y: float")]
pub struct NoEquals;

fn main() {}

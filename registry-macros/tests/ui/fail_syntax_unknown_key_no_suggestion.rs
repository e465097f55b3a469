use registry_core::op;

#[op(input = "x: float", frobnicate = "yes")]
pub struct Unknown;

fn main() {}

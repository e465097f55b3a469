use registry_core::op;

#[op(input = "X: float")]
pub struct UpperArg;

fn main() {}

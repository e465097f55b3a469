use registry_core::op;

#[op(input = "x: float")]
pub struct Generic<T>(T);

fn main() {}

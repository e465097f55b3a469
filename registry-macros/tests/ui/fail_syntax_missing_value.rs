use registry_core::op;

#[op(input, output = , attr = "T: type")]
pub struct NoValue;

fn main() {}

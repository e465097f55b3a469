use registry_core::op;

#[op(input = "x: float", crate = 42)]
pub struct BadCrate;

fn main() {}

use registry_core::op;

#[op(attr = "l: list(int) >= -1")]
pub struct NegativeListMinimum;

fn main() {}

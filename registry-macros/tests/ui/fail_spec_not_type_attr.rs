use registry_core::op;

#[op(attr = "N: int", input = "x: N")]
pub struct IntAsType;

fn main() {}

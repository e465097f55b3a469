use registry_core::op;

#[op(attr = "N: type", attr = "T: type", input = "x: N * T")]
pub struct TypeAsNumber;

fn main() {}

use registry_core::op;

#[op(attr = "N: list(int)", attr = "T: type", input = "x: N * T")]
pub struct ListAsNumber;

fn main() {}

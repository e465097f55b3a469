use registry_core::op;

#[op(attr = "N: int", attr = "T: list(type)", input = "x: N * T")]
pub struct ListAsElement;

fn main() {}

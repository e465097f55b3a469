use registry_core::op;

#[op(doc = "Computes things.", input = "x: float")]
pub struct DocKey;

fn main() {}

use registry_core::op;

#[op(input = "x: float", output = "x: float")]
pub struct SameName;

fn main() {}

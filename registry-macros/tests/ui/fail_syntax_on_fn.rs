use registry_core::op;

#[op(input = "x: float")]
pub fn not_a_struct() {}

fn main() {}

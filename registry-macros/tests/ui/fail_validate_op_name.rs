use registry_core::op;

#[op(name = "lower_case", input = "x: float")]
pub struct LowerCase;

fn main() {}

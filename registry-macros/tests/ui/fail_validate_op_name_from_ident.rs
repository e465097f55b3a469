use registry_core::op;

#[allow(non_camel_case_types)]
#[op(input = "x: float")]
pub struct snake_op;

fn main() {}

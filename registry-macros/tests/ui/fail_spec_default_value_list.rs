use registry_core::op;

#[op(attr = "dims: list(int) = [1, x]")]
pub struct BadListDefault;

fn main() {}

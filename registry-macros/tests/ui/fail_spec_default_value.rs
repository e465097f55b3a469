use registry_core::op;

#[op(attr = "N: int = abc")]
pub struct BadDefault;

fn main() {}

use registry_core::op;

#[op(attr = "T: list(type")]
pub struct ListOpen;

fn main() {}

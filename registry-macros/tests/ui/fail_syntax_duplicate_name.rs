use registry_core::op;

#[op(name = "First", name = "Second")]
pub struct TwoNames;

fn main() {}

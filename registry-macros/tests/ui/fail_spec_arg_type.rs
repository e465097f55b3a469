use registry_core::op;

#[op(output = "y: 3")]
pub struct ArgNumber;

fn main() {}

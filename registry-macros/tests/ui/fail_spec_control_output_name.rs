use registry_core::op;

#[op(control_output = "1st")]
pub struct BadControl;

fn main() {}

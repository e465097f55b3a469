use registry_core::op;

#[op(stateful, stateful)]
pub struct TwiceStateful;

fn main() {}

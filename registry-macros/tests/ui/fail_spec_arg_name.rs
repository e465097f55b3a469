use registry_core::op;

#[op(attr = "T: type", input = "x T")]
pub struct ArgNoColon;

fn main() {}

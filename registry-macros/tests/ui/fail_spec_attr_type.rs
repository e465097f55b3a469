use registry_core::op;

#[op(attr = "T: typ", input = "x: T")]
pub struct BadAttrType;

fn main() {}

use registry_core::op;

#[op(attr = ": type")]
pub struct EmptyAttrName;

fn main() {}

use registry_core::op;

#[op(attr = "float: type")]
pub struct FloatAttr;

fn main() {}

use registry_core::op;

#[op(attr = "T: type extra")]
pub struct AttrTrailing;

fn main() {}

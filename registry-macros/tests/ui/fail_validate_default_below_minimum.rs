use registry_core::op;

#[op(attr = "N: int >= 2 = 1")]
pub struct SmallDefault;

fn main() {}

use registry_core::op;

#[op(attr = "T: type", attr = "T: {float}", input = "x: T")]
pub struct TwoTs;

fn main() {}

use registry_core::op;

#[op(attr = "T: {float, int32} = DT_DOUBLE", input = "x: T")]
pub struct DefaultOutside;

fn main() {}

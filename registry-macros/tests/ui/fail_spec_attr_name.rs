use registry_core::op;

#[op(attr = "T {float, int32}", input = "x: T")]
pub struct MissingColon;

fn main() {}

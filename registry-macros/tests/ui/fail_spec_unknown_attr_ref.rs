use registry_core::op;

#[op(attr = "T: {float, int32}", input = "x: U", output = "y: T")]
pub struct UnknownRef;

fn main() {}

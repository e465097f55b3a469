use registry_core::op;

#[op("x: float", output = "y: float")]
pub struct NoKey;

fn main() {}

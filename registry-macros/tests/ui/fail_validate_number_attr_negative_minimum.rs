use registry_core::op;

#[op(attr = "N: int >= -1", attr = "T: type", output = "y: N * T")]
pub struct NegativeLength;

fn main() {}

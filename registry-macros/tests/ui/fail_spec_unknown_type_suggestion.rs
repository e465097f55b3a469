use registry_core::op;

#[op(input = "x: T", output = "y: T", attr = "T: {half, flaot, double}")]
pub struct Abs;

fn main() {}

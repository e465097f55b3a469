use registry_core::op;

#[op(inptu = "x: T", output = "y: T", attr = "T: type")]
pub struct Typo;

fn main() {}

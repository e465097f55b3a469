use registry_core::op;

#[op(attr = "T: {float, wibble}")]
pub struct Wibble;

fn main() {}

use registry_core::op;

#[op(attr = "T: type", input = "x: T junk")]
pub struct ArgTrailing;

fn main() {}

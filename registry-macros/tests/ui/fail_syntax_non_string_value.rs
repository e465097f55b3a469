use registry_core::op;

#[op(input = x, output = "y: float", attr = 3)]
pub struct NotStrings;

fn main() {}

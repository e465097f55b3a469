use registry_core::op;

#[op(attr = "T: type", input = "x: Ref(T")]
pub struct RefOpen;

fn main() {}

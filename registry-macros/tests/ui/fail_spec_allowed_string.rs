use registry_core::op;

#[op(attr = "padding: {'SAME', VALID}")]
pub struct Padding;

fn main() {}

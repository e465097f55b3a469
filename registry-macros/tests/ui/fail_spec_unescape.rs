use registry_core::op;

#[op(attr = r"mode: {'a\q', 'b'}")]
pub struct BadEscape;

fn main() {}

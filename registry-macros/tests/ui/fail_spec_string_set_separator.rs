use registry_core::op;

#[op(attr = "mode: {'a' 'b'}")]
pub struct NoStringComma;

fn main() {}

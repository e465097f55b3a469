use registry_core::op;

#[op(attr = "T: {float int32}")]
pub struct NoComma;

fn main() {}

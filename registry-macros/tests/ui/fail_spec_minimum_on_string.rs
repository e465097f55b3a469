use registry_core::op;

#[op(attr = "s: string >= 2")]
pub struct StringMinimum;

fn main() {}

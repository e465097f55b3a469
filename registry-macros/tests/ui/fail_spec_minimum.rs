use registry_core::op;

#[op(attr = "N: int >= two")]
pub struct BadMinimum;

fn main() {}

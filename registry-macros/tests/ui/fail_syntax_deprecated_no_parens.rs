use registry_core::op;

#[op(deprecated, deprecated = 3)]
pub struct BareDeprecated;

fn main() {}

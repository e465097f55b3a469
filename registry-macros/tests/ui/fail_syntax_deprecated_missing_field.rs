use registry_core::op;

#[op(deprecated(version = 3))]
pub struct NoExplanation;

#[op(deprecated(explanation = "Use New"))]
pub struct NoVersion;

fn main() {}

use registry_core::op;

#[op(deprecated(versoin = 3, explanation = "Use New"))]
pub struct FieldTypo;

#[op(deprecated(version = "3", explanation = "Use New"))]
pub struct StringVersion;

#[op(deprecated(version = 3000000000, explanation = "Use New"))]
pub struct HugeVersion;

#[op(deprecated(version = 3, explanation = Use))]
pub struct BareExplanation;

fn main() {}

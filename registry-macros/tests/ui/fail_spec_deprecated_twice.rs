use registry_core::op;

#[op(
    deprecated(version = 3, explanation = "Use New"),
    deprecated(version = 4, explanation = "Really, use New"),
)]
pub struct Old;

fn main() {}

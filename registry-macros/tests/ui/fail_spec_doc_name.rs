use registry_core::op;

/// Adds things.
///
/// x: The first input.
/// z: Not an input of this op.
#[op(attr = "T: type", input = "x: T", output = "y: T")]
pub struct DocMismatch;

fn main() {}

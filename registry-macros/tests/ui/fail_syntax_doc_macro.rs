use registry_core::op;

#[doc = concat!("Computes ", "things.")]
#[op(input = "x: float")]
pub struct MacroDoc;

fn main() {}

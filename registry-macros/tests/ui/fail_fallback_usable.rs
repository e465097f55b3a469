use registry_core::{Op, op};

#[op(input = "x: T", output = "y: T", attr = "T: {flaot}")]
pub struct Abs;

// The spec above is wrong, but `Abs` still exists and implements `Op`, so
// only the spec error is reported, not these uses.
const NAME: &str = Abs::NAME;

fn takes_op<O: Op>() -> usize {
    O::SIGNATURE.inputs.len() + O::OP_DEF_BYTES.len()
}

fn main() {
    let _ = (NAME, takes_op::<Abs>(), Abs);
}

use registry_core::op;

#[op(attr = "padding: {'SAME', 'VALID'} = 'FULL'")]
pub struct DefaultString;

fn main() {}

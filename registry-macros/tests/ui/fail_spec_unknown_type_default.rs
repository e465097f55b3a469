use registry_core::op;

#[op(attr = "T: type = DT_FLAOT")]
pub struct BadDefaultType;

fn main() {}

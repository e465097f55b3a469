use registry_core::op;

#[op(attr = "dims: list(int) >= 2 = [1]")]
pub struct ShortDefault;

fn main() {}

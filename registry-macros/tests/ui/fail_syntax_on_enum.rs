use registry_core::op;

#[op(input = "x: float")]
pub enum NotAStruct {
    A,
}

fn main() {}

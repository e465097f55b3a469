use registry_core::op;

fn not_a_shape_fn(_: i32) -> bool {
    true
}

#[op(input = "x: float", shape_fn = not_a_shape_fn)]
pub struct WrongShape;

fn main() {}

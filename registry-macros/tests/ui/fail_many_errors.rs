use registry_core::op;

/// Does many wrong things.
///
/// q: Not an arg.
#[op(
    input = "x: T",
    input = "y: Ref(T",
    output = "z: U",
    attr = "T: {flaot, int32}",
    attr = "N: int >= many",
    stateful = yes,
    inputs = "w: float",
)]
pub struct ManyErrors;

fn main() {}

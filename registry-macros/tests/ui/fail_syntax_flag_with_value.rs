use registry_core::op;

#[op(stateful = true, commutative(yes))]
pub struct FlagValue;

fn main() {}

use registry_core::{Op, op};

/// A struct with fields is fine: the op is named after it.
#[op(output = "y: float")]
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct WithFields {
    pub scale: f32,
}

// serde's string form of `crate = ...` works too.
#[op(output = "y: float", crate = "::registry_core")]
pub struct Tuple(pub u8);

fn main() {
    assert_eq!(WithFields::NAME, "WithFields");
    assert_eq!(Tuple::NAME, "Tuple");
    assert_eq!(WithFields::default().scale, 0.0);
    assert_eq!(Tuple(3).0, 3);
}

use registry_core::proto::DataType;
use registry_core::{Op, op};

#[op(input = "x: T", output = "y: T", attr = "T: <float, int32>")]
pub struct AngleSquare;

#[op(input = "x: T", output = "y: T", attr = "T: {float, int32}")]
pub struct SquareBraces;

fn main() {
    assert!(AngleSquare::SIGNATURE.allows_type("T", DataType::DtInt32));
    assert!(!AngleSquare::SIGNATURE.allows_type("T", DataType::DtDouble));
    assert_eq!(AngleSquare::SIGNATURE.attrs, SquareBraces::SIGNATURE.attrs);
    let mut angle = AngleSquare::op_def();
    angle.name = "SquareBraces".into();
    assert_eq!(angle, SquareBraces::op_def());
}

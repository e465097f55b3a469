use registry_core::proto::DataType;
use registry_core::{Op, op};

#[op(input = "x: T", output = "y: T", attr = "T: <float, int32>")]
pub struct Square;

#[op(input = "x: T", output = "y: T", attr = "T: {float, int32}")]
pub struct SquareBraces;

fn main() {
    assert!(Square::SIGNATURE.allows_type("T", DataType::DtInt32));
    assert!(!Square::SIGNATURE.allows_type("T", DataType::DtDouble));
    assert_eq!(Square::SIGNATURE.attrs, SquareBraces::SIGNATURE.attrs);
    let mut angle = Square::op_def();
    angle.name = "SquareBraces".into();
    assert_eq!(angle, SquareBraces::op_def());
}

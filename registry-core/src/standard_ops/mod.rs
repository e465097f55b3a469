//! The standard op set: TensorFlow 2.21's definitions, byte for byte, of the
//! ops every opreg backend defines and runs (the list in `graphs/README.md`).
//!
//! Each op is declared with [`op`](macro@crate::op) from the same spec strings as
//! TensorFlow's `REGISTER_OP` (TF's source strings where they give TF 2.21's
//! OpDef, otherwise TF 2.21's registry written back as strings), with the same
//! name and flags. The doc comment of each op is its TF Doc text (summary and
//! description). `tests/standard_ops.rs` compares every OpDef with TF 2.21's
//! registry.
//!
//! The module is compiled with the `standard-ops` feature (on by default).
//! Every op is re-exported here:
//!
//! ```
//! use registry_core::{standard_ops::MatMul, Op};
//!
//! assert_eq!(MatMul::NAME, "MatMul");
//! assert_eq!(MatMul::op_def().input_arg.len(), 2);
//! ```

pub mod array;
pub mod control;
pub mod logic;
pub mod math;
pub mod nn;
pub mod reduce;

pub use array::*;
pub use control::*;
pub use logic::*;
pub use math::*;
pub use nn::*;
pub use reduce::*;

/// The names of the standard ops, sorted (the list of `graphs/README.md`).
///
/// ```
/// use registry_core::{OpRegistry, standard_ops::NAMES};
/// assert_eq!(NAMES.len(), 54);
/// assert!(NAMES.iter().all(|name| OpRegistry::global().look_up(name).is_ok()));
/// ```
pub const NAMES: [&str; 54] = [
    "Abs",
    "AddN",
    "AddV2",
    "ArgMax",
    "BiasAdd",
    "Cast",
    "ConcatV2",
    "Const",
    "Conv2D",
    "Equal",
    "Exp",
    "ExpandDims",
    "Floor",
    "FloorDiv",
    "FloorMod",
    "FusedBatchNormV3",
    "GatherV2",
    "Greater",
    "Identity",
    "Log",
    "LogicalAnd",
    "MatMul",
    "Max",
    "MaxPool",
    "Maximum",
    "Mean",
    "Minimum",
    "Mul",
    "Neg",
    "NoOp",
    "OneHot",
    "Pack",
    "Pad",
    "Placeholder",
    "Pow",
    "RealDiv",
    "Relu",
    "Reshape",
    "Rsqrt",
    "Select",
    "SelectV2",
    "Sigmoid",
    "Slice",
    "Softmax",
    "Sqrt",
    "Square",
    "SquaredDifference",
    "Squeeze",
    "StridedSlice",
    "Sub",
    "Sum",
    "Tanh",
    "Tile",
    "Transpose",
];

//! The standard op set: TensorFlow 2.21's definitions, byte for byte, of the
//! ops every opreg backend defines and runs: the list in `graphs/README.md`
//! and the array ops added to it since (identities, shapes, fills, ranges,
//! splits, reversals, gathers, band parts, top-k, paddings, space/batch/depth
//! rearrangements), the TensorList ops (lists of tensors in `DT_VARIANT`
//! handles), and the control flow and functional ops the runtime runs itself
//! (`Enter`, `Switch`, `Merge`, `While`, `If`, `PartitionedCall`...; see
//! [`NAMES`]).
//!
//! Each op is declared with [`op`](macro@registry_core::op) from the same spec strings as
//! TensorFlow's `REGISTER_OP` (TF's source strings where they give TF 2.21's
//! OpDef, otherwise TF 2.21's registry written back as strings), with the same
//! name and flags. The doc comment of each op is its TF Doc text (summary and
//! description). `tests/standard_ops.rs` compares every OpDef with TF 2.21's
//! registry.
//!
//! Every op has a shape function ([`shape`]), checked against TensorFlow's
//! shapes; the geometry and checks they share with the CPU and GPU kernels
//! are `opreg-op-logic`'s. Every op is re-exported at the crate root:
//!
//! ```
//! use opreg_standard_ops::MatMul;
//! use registry_core::Op;
//!
//! assert_eq!(MatMul::NAME, "MatMul");
//! assert_eq!(MatMul::op_def().input_arg.len(), 2);
//! ```
//!
//! The ops register themselves (through `inventory`) in every program that
//! links this crate; name it once ([`link`], or any item of it) so the
//! linker keeps it.

pub mod ops;
pub mod shape;

pub use ops::array::*;
pub use ops::control::*;
pub use ops::lists::*;
pub use ops::logic::*;
pub use ops::math::*;
pub use ops::nn::*;
pub use ops::reduce::*;

/// Makes sure this crate (and so its op registrations) is linked into the
/// binary. Returns the number of standard ops the global registry holds.
///
/// ```
/// assert_eq!(opreg_standard_ops::link(), opreg_standard_ops::NAMES.len());
/// ```
pub fn link() -> usize {
    let registry = registry_core::OpRegistry::global();
    NAMES.iter().filter(|name| registry.contains(name)).count()
}

/// The names of the standard ops, sorted: the list of `graphs/README.md`,
/// the array ops added since and the TensorList ops.
///
/// ```
/// use opreg_standard_ops::NAMES;
/// use registry_core::OpRegistry;
/// assert_eq!(NAMES.len(), 154);
/// assert!(NAMES.iter().all(|name| OpRegistry::global().look_up(name).is_ok()));
/// ```
pub const NAMES: [&str; 154] = [
    "Abs",
    "AddN",
    "AddV2",
    "All",
    "Any",
    "ArgMax",
    "ArgMin",
    "AvgPool",
    "AvgPool3D",
    "BatchMatMulV2",
    "BatchMatMulV3",
    "BatchToSpaceND",
    "BiasAdd",
    "BroadcastTo",
    "Case",
    "Cast",
    "Ceil",
    "ClipByValue",
    "ConcatV2",
    "Const",
    "Conv2D",
    "Conv2DBackpropInput",
    "Conv3D",
    "Cos",
    "Cumsum",
    "DepthToSpace",
    "DepthwiseConv2dNative",
    "Einsum",
    "Elu",
    "EmptyTensorList",
    "Enter",
    "Equal",
    "Erf",
    "Erfc",
    "Exit",
    "Exp",
    "ExpandDims",
    "Expm1",
    "Fill",
    "Floor",
    "FloorDiv",
    "FloorMod",
    "FusedBatchNormV3",
    "GatherNd",
    "GatherV2",
    "Greater",
    "GreaterEqual",
    "Identity",
    "IdentityN",
    "If",
    "LeakyRelu",
    "Less",
    "LessEqual",
    "Log",
    "Log1p",
    "LogSoftmax",
    "LogicalAnd",
    "LogicalNot",
    "LogicalOr",
    "LoopCond",
    "MatMul",
    "MatrixBandPart",
    "Max",
    "MaxPool",
    "MaxPool3D",
    "Maximum",
    "Mean",
    "Merge",
    "Min",
    "Minimum",
    "MirrorPad",
    "Mul",
    "Neg",
    "NextIteration",
    "NoOp",
    "NotEqual",
    "OneHot",
    "OnesLike",
    "Pack",
    "Pad",
    "PadV2",
    "PartitionedCall",
    "Placeholder",
    "Pow",
    "PreventGradient",
    "Prod",
    "Range",
    "Rank",
    "RealDiv",
    "Reciprocal",
    "Relu",
    "Relu6",
    "Reshape",
    "ResizeBilinear",
    "ResizeNearestNeighbor",
    "ReverseV2",
    "Round",
    "Rsqrt",
    "Select",
    "SelectV2",
    "Selu",
    "Shape",
    "ShapeN",
    "Sigmoid",
    "Sign",
    "Sin",
    "Size",
    "Slice",
    "Snapshot",
    "Softmax",
    "Softplus",
    "Softsign",
    "SpaceToBatchND",
    "SpaceToDepth",
    "Split",
    "SplitV",
    "Sqrt",
    "Square",
    "SquaredDifference",
    "Squeeze",
    "StatefulPartitionedCall",
    "StatelessCase",
    "StatelessIf",
    "StatelessWhile",
    "StopGradient",
    "StridedSlice",
    "Sub",
    "Sum",
    "Switch",
    "Tanh",
    "TensorListConcatV2",
    "TensorListElementShape",
    "TensorListFromTensor",
    "TensorListGather",
    "TensorListGetItem",
    "TensorListLength",
    "TensorListPopBack",
    "TensorListPushBack",
    "TensorListReserve",
    "TensorListResize",
    "TensorListScatterIntoExistingList",
    "TensorListSetItem",
    "TensorListSplit",
    "TensorListStack",
    "Tile",
    "TopKV2",
    "Transpose",
    "Unpack",
    "While",
    "ZerosLike",
    "_FusedConv2D",
    "_FusedDepthwiseConv2dNative",
    "_FusedMatMul",
    "_SwitchN",
];

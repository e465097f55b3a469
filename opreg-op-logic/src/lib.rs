//! Op-level logic that is neither CPU nor GPU: the checks, attrs and
//! geometry of the standard ops, shared by their shape functions
//! (`opreg-standard-ops`), their CPU kernels (`kernels-cpu`) and their GPU
//! kernels (`kernels-cuda`), so each rule (and each of TensorFlow's error
//! messages) is written once. Nothing here touches tensor memory beyond
//! reading host-side integer inputs.
//!
//! - [`unary`]: the element-wise unary functions, one table for every
//!   device ([`unary_functions!`]).
//! - [`broadcast`]: TF's broadcasting (`BCast`).
//! - [`index`]: integer host inputs as `i64`, shape helpers (TF's
//!   `MakeShape`).
//! - [`format`](mod@format): numbers written as TF's messages write them.
//! - [`reshape`]: the shapes of `Reshape`, `ExpandDims` and `Squeeze`.
//! - [`transpose`]: `Transpose`'s permutation.
//! - [`concat`](mod@concat): `ConcatV2`'s and `Pack`'s checks and layout.
//! - [`strided_slice`]: `StridedSlice`'s masks and begin/end/strides.
//! - [`slice`](mod@slice): `Slice`'s begin and size checks and offsets.
//! - [`window`]: data formats, padding and window sizes (Conv2D, MaxPool).
//! - [`conv`]: `Conv2D`'s attrs and geometry.
//! - [`pool`]: `MaxPool`'s attrs and geometry.
//! - [`volume`]: `Conv3D`'s and the 3-D poolings' attrs and geometry.
//! - [`axes`]: reduction axes (Sum, Mean, Max, ArgMax).
//! - [`strided`]: the strided gather behind the layout ops, proved in bounds.
//! - [`gather`]: `GatherV2`'s checks and geometry.
//! - [`pad`]: `Pad`'s, `PadV2`'s and `MirrorPad`'s paddings and output
//!   shape, the mirror modes.
//! - [`tile`]: `Tile`'s multiples and output shape.
//! - [`one_hot`]: `OneHot`'s checks and geometry.
//! - [`constant`]: `Const`'s value checked against its dtype.
//! - [`add_n`]: `AddN`'s input checks and summation order.
//! - [`select`]: `Select`'s condition rules, `SelectV2`'s broadcast error.
//! - [`batch_norm`]: `FusedBatchNormV3`'s attrs and shape checks.
//! - [`batch_matmul`]: `BatchMatMulV2`/`V3`'s checks and broadcast batches.
//! - [`einsum`]: `Einsum`'s equation, its plan on concrete shapes and its
//!   contraction.
//! - [`clip_cumsum`]: `ClipByValue`'s bound shapes, `Cumsum`'s scan axis.
//! - [`range`]: `Range`'s checks and size (kernel and shape function).
//! - [`shape_of`]: the values of `Shape`, `ShapeN`, `Size`, `Rank`.
//! - [`fill`]: `Fill`'s checks and output shape.
//! - [`broadcast_to`]: `BroadcastTo`'s checks and copy layout.
//! - [`split`]: `Split`'s, `SplitV`'s and `Unpack`'s checks and parts.
//! - [`reverse`]: `ReverseV2`'s axes.
//! - [`gather_nd`]: `GatherNd`'s checks, geometry and index policy.
//! - [`band_part`]: `MatrixBandPart`'s checks and band.
//! - [`top_k`]: `TopKV2`'s checks and geometry.
//! - [`space_batch`]: `SpaceToBatchND`'s and `BatchToSpaceND`'s checks and
//!   block geometry.
//! - [`depth_space`]: `DepthToSpace`'s and `SpaceToDepth`'s checks and
//!   geometry.

pub mod add_n;
pub mod axes;
pub mod band_part;
pub mod batch_matmul;
pub mod batch_norm;
pub mod broadcast;
pub mod broadcast_to;
pub mod clip_cumsum;
pub mod concat;
pub mod constant;
pub mod conv;
pub mod depth_space;
pub mod einsum;
pub mod fill;
pub mod format;
pub mod gather;
pub mod gather_nd;
pub mod index;
pub mod one_hot;
pub mod pad;
pub mod pool;
pub mod range;
pub mod reshape;
pub mod reverse;
pub mod select;
pub mod shape_of;
pub mod slice;
pub mod space_batch;
pub mod split;
pub mod strided;
pub mod strided_slice;
pub mod tile;
pub mod top_k;
pub mod transpose;
pub mod unary;
pub mod volume;
pub mod window;

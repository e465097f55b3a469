//! Array kernels: constants and placeholders, identity, reshaping, layout and
//! data-movement ops (TF's `array_ops`).
//!
//! These ops move elements without looking at them, so every kernel is
//! written once over element "units" and registered, non-generic, for every
//! type TensorFlow's CPU kernel has (strings and quantized types included):
//! `elements` runs an algorithm on `[u8; N]` units for fixed-size dtypes of
//! `N` bytes, on `bool` (whose bytes must stay 0 or 1) and on the byte
//! strings of `DT_STRING`.
//!
//! - `constant`: `Const`, `Placeholder`, `Identity`, `NoOp`.
//! - `forward`: `StopGradient`, `PreventGradient`, `IdentityN` (zero-copy)
//!   and `Snapshot` (zero-copy unless the input's buffer is shared).
//! - `reshape`: `Reshape`, `ExpandDims`, `Squeeze` (zero-copy).
//! - `transpose`: `Transpose`.
//! - `concat`: `ConcatV2`, `Pack`.
//! - `slice`: `Slice`; `strided_slice`: `StridedSlice`.
//! - `gather`: `GatherV2`; `tile`: `Tile`; `pad`: `Pad`, `PadV2`,
//!   `MirrorPad`; `one_hot`: `OneHot`.
//! - `shape`: `Shape`, `ShapeN`, `Size`, `Rank` (host-memory outputs).
//! - `fill`: `Fill`, `ZerosLike`, `OnesLike`; `range`: `Range`;
//!   `broadcast_to`: `BroadcastTo`.
//! - `split`: `Split`, `SplitV`, `Unpack`; `reverse`: `ReverseV2`;
//!   `gather_nd`: `GatherNd`; `band_part`: `MatrixBandPart`;
//!   `top_k`: `TopKV2` (an `nn_ops` op, kept with the array kernels).
//! - `space_batch`: `SpaceToBatchND`, `BatchToSpaceND`; `depth_space`:
//!   `DepthToSpace`, `SpaceToDepth`.
//!
//! Shared machinery: `elements` (dtype dispatch), `strided` (the strided
//! gather behind `Transpose`, `Slice`, `StridedSlice` and `Tile`),
//! `rows` (the row gather behind `Pad`, `PadV2`, `MirrorPad`,
//! `SpaceToBatchND`, `BatchToSpaceND` and `GatherNd`),
//! `parallel` (rayon chunking) and `index` (the index element types of
//! `GatherV2` and `OneHot`). Reading integer inputs and the shape checks
//! the GPU kernels share are in [`opreg_op_logic`] (`index`, `reshape`,
//! `transpose`, `concat`, `strided_slice`).

mod band_part;
mod broadcast_to;
mod concat;
mod constant;
mod depth_space;
pub(crate) mod elements;
mod fill;
mod forward;
mod gather;
mod gather_nd;
mod index;
mod one_hot;
mod pad;
mod parallel;
mod range;
mod reshape;
mod reverse;
mod rows;
mod shape;
mod slice;
mod space_batch;
mod split;
pub(crate) mod strided;
mod strided_slice;
mod tile;
mod top_k;
mod transpose;

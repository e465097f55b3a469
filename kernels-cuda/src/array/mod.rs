//! GPU array kernels: constants, identity, reshaping, layout and
//! data-movement ops (TF's `array_ops`), for the fixed-size dtypes TF's GPU
//! kernels have (bool, half, bfloat16, float, double, complex64,
//! complex128, int8 ... int64, uint8 ... uint64).
//!
//! - `constant`: `Const` (uploaded once when the kernel is built; every
//!   output shares it), `Identity` and the other identities, `Snapshot`
//!   (its input forwarded, or copied when shared), `NoOp`.
//! - `reshape`: `Reshape`, `ExpandDims`, `Squeeze` (metadata only: the
//!   output shares the input's device buffer).
//! - `transpose`: `Transpose`; `slice`: `Slice`; `strided_slice`:
//!   `StridedSlice` (every mask, negative strides) — all three through one
//!   strided-copy kernel.
//! - `concat`: `ConcatV2`, `Pack`; `tile`: `Tile`; `pad`: `Pad` (zeros);
//!   `gather`: `GatherV2` (out-of-range indices give zeros, as TF's GPU
//!   kernel); `one_hot`: `OneHot`.
//!
//! The kernels only move elements, so they are compiled once per element
//! size, not per dtype ([`move_source`]: 1, 2, 4, 8 and 16-byte units).
//! Shapes, axes, permutations, begin/end/strides, multiples, paddings and
//! `depth` are host-memory args (read on the host, as TF's GPU kernels do);
//! the validation and messages are the CPU kernels' (TF's). Layouts are
//! simplified on the host (`plan`: size-1 dimensions dropped, contiguous
//! ones merged, every address of a strided copy proved in bounds); a copy
//! that still has more than 8 dimensions is refused (Unimplemented).

mod concat;
mod constant;
mod gather;
mod mover;
mod one_hot;
mod pad;
mod plan;
mod reshape;
mod slice;
mod source;
mod strided_slice;
mod tile;
mod transpose;

pub use concat::{ConcatV2Gpu, PackGpu};
pub use constant::ConstGpu;
pub use gather::GatherV2Gpu;
pub use mover::mover_sources;
pub use one_hot::OneHotGpu;
pub use pad::PadGpu;
pub use reshape::SqueezeGpu;
pub use slice::SliceGpu;
pub use source::{UNIT_SIZES, move_source};
pub use strided_slice::StridedSliceGpu;
pub use tile::TileGpu;
pub use transpose::TransposeGpu;

// What Einsum (`linalg`, with `reduce`) uses of the layout kernels.
#[cfg(all(feature = "linalg", feature = "reduce"))]
pub(crate) use mover::Mover;
#[cfg(all(feature = "linalg", feature = "reduce"))]
pub(crate) use plan::{StridedPlan, strided_parts};
#[cfg(all(feature = "linalg", feature = "reduce"))]
pub(crate) use source::entry;

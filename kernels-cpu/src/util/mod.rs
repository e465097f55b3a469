//! Helpers shared by the kernels: broadcasting, element-wise loops, and the
//! host-side shape checks and planning of the shape, layout, pooling and
//! reduction ops, which the GPU kernels of `kernels-cuda` call too (these
//! modules hold no kernels and are compiled whatever the feature groups).
//!
//! - [`broadcast`], [`elementwise`]: TF's broadcasting and the loops over it.
//! - [`index`]: integer host inputs as `i64`, shape helpers.
//! - [`reshape`]: the shapes of `Reshape`, `ExpandDims` and `Squeeze`.
//! - [`transpose`]: `Transpose`'s permutation.
//! - [`concat`](mod@concat): `ConcatV2`'s and `Pack`'s checks and layout.
//! - [`strided_slice`]: `StridedSlice`'s masks and begin/end/strides.
//! - [`slice`]: `Slice`'s begin and size checks and offsets.
//! - [`window`]: data formats, padding and window sizes (Conv2D, MaxPool).
//! - [`conv`]: `Conv2D`'s attrs and geometry.
//! - [`pool`]: `MaxPool`'s attrs and geometry.
//! - [`axes`]: reduction axes (Sum, Mean, Max, ArgMax).

pub mod axes;
pub mod broadcast;
pub mod concat;
pub mod conv;
pub mod elementwise;
pub mod index;
pub mod pool;
pub mod reshape;
pub mod slice;
pub mod strided_slice;
pub mod transpose;
pub mod window;

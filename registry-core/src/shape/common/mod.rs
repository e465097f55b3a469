//! TensorFlow's common shape functions (`common_shape_fns.cc`), each a
//! [`ShapeFn`](super::ShapeFn) that several ops share.
//!
//! | function | output shape |
//! |---|---|
//! | [`unchanged_shape`] | input 0's |
//! | [`unchanged_shape_with_rank_at_least_1`] | input 0's, which must have rank >= 1 |
//! | [`unknown_shape`] | unknown, for every output |
//! | [`scalar_shape`] | `[]` |
//! | [`no_outputs`] | none (the op has no outputs) |
//! | [`merge_inputs`] | all inputs merged into one shape (AddN) |
//! | [`broadcast_binary_op`] | inputs 0 and 1 broadcast |
//! | [`matmul`] | `[rows(a), cols(b)]` with `transpose_a`/`transpose_b` |
//! | [`bias_add`] | the value's shape, the bias merged into its channel dim |
//! | [`reduction`] | input 0 reduced over the axes of input 1 (`keep_dims`) |
//! | [`conv2d`] | 2-D convolution (`strides`, `padding`, `dilations`, `data_format`) |
//! | [`max_pool`] | 2-D pooling (`ksize`, `strides`, `padding`, `data_format`) |
//! | [`concat_v2`] | inputs `values` joined along the `axis` input |

mod conv;
mod elementwise;
mod matmul;
mod reduce;

pub use conv::{conv2d, max_pool};
pub use elementwise::{
    broadcast_binary_op, merge_inputs, no_outputs, scalar_shape, unchanged_shape,
    unchanged_shape_with_rank_at_least_1, unknown_shape,
};
pub use matmul::{bias_add, matmul};
pub use reduce::{concat_v2, reduction};

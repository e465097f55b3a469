//! The op-specific shape functions of the standard ops (TF's
//! `array_ops.cc`, `math_ops.cc`, `nn_ops.cc`). Ops whose shape function is
//! a shared one use [`common`](super::common) directly:
//!
//! | ops | shape function |
//! |---|---|
//! | Abs, Cast, Exp, Floor, Identity, Log, Neg, Relu, Rsqrt, Sigmoid, Sqrt, Square, Tanh | [`common::unchanged_shape`](super::common::unchanged_shape) |
//! | AddV2, Equal, FloorDiv, FloorMod, Greater, LogicalAnd, Maximum, Minimum, Mul, Pow, RealDiv, SquaredDifference, Sub | [`common::broadcast_binary_op`](super::common::broadcast_binary_op) |
//! | AddN | [`common::merge_inputs`](super::common::merge_inputs) |
//! | Softmax | [`common::unchanged_shape_with_rank_at_least_1`](super::common::unchanged_shape_with_rank_at_least_1) |
//! | NoOp | [`common::no_outputs`](super::common::no_outputs) |
//! | MatMul, BiasAdd, Conv2D, MaxPool, ConcatV2 | [`common::matmul`](super::common::matmul), [`common::bias_add`](super::common::bias_add), [`common::conv2d`](super::common::conv2d), [`common::max_pool`](super::common::max_pool), [`common::concat_v2`](super::common::concat_v2) |
//! | Max, Mean, Sum | [`common::reduction`](super::common::reduction) |
//! | the others | this module, one function per op |

mod array;
mod math;
mod nn;
mod strided_slice;

pub use array::{
    const_op, expand_dims, gather_v2, one_hot, pack, pad, placeholder, reshape, slice, squeeze,
    tile, transpose,
};
pub use math::{arg_max, select, select_v2};
pub use nn::fused_batch_norm_v3;
pub use strided_slice::strided_slice;

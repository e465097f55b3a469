//! The shape functions of the standard ops (TF's `array_ops.cc`,
//! `math_ops.cc`, `nn_ops.cc` and the op-specific part of
//! `common_shape_fns.cc`). Ops whose shape function is one of the
//! framework's element-wise ones use [`registry_core::shape::common`]:
//!
//! | ops | shape function |
//! |---|---|
//! | Abs, Cast, Ceil, ClipByValue, Cos, Cumsum, Elu, Erf, Erfc, Exp, Expm1, Floor, Identity, LeakyRelu, Log, Log1p, LogicalNot, Neg, OnesLike, PreventGradient, Reciprocal, Relu, Relu6, Round, Rsqrt, Selu, Sigmoid, Sign, Sin, Snapshot, Softplus, Softsign, Sqrt, Square, StopGradient, Tanh, ZerosLike | [`common::unchanged_shape`](registry_core::shape::common::unchanged_shape) |
//! | AddV2, Equal, FloorDiv, FloorMod, Greater, GreaterEqual, Less, LessEqual, LogicalAnd, LogicalOr, NotEqual, Maximum, Minimum, Mul, Pow, RealDiv, SquaredDifference, Sub | [`common::broadcast_binary_op`](registry_core::shape::common::broadcast_binary_op) |
//! | Abs, Cast, Exp, Floor, Identity, Log, MatrixBandPart, Neg, OnesLike, PreventGradient, Relu, Rsqrt, Sigmoid, Snapshot, Sqrt, Square, StopGradient, Tanh, ZerosLike | [`common::unchanged_shape`](registry_core::shape::common::unchanged_shape) |
//! | AddV2, Equal, FloorDiv, FloorMod, Greater, LogicalAnd, Maximum, Minimum, Mul, Pow, RealDiv, SquaredDifference, Sub | [`common::broadcast_binary_op`](registry_core::shape::common::broadcast_binary_op) |
//! | AddN | [`common::merge_inputs`](registry_core::shape::common::merge_inputs) |
//! | Softmax, LogSoftmax | [`common::unchanged_shape_with_rank_at_least_1`](registry_core::shape::common::unchanged_shape_with_rank_at_least_1) |
//! | Rank, Size | [`common::scalar_shape`](registry_core::shape::common::scalar_shape) |
//! | Shape, ShapeN | [`shape_n`] |
//! | NoOp | [`common::no_outputs`](registry_core::shape::common::no_outputs) |
//! | Exit, NextIteration | [`common::unchanged_shape`](registry_core::shape::common::unchanged_shape) |
//! | Enter, Switch, _SwitchN, Merge, LoopCond | [`enter`], [`switch`], [`switch`], [`merge`], [`loop_cond`] |
//! | While, StatelessWhile; If, StatelessIf, Case, StatelessCase | [`while_loop`]; [`functional_outputs`] |
//! | PartitionedCall, StatefulPartitionedCall | [`common::unknown_shape`](registry_core::shape::common::unknown_shape) |
//! | MatMul, BiasAdd, Conv2D, MaxPool, ConcatV2 | [`matmul`], [`bias_add`], [`conv2d`], [`max_pool`], [`concat_v2`] |
//! | BatchMatMulV2, BatchMatMulV3, Einsum | [`batch_matmul_v2`], [`einsum`] |
//! | DepthwiseConv2dNative, Conv2DBackpropInput, AvgPool | [`depthwise_conv2d_native`], [`conv2d_backprop_input`], [`avg_pool`] |
//! | Conv3D, MaxPool3D, AvgPool3D | [`conv3d`], [`pool3d`] |
//! | ResizeBilinear, ResizeNearestNeighbor | [`resize`] |
//! | All, Any, Max, Mean, Min, Prod, Sum | [`reduction`] |
//! | Pad, PadV2, MirrorPad | [`pad`] |
//! | SpaceToBatchND, BatchToSpaceND, DepthToSpace, SpaceToDepth | [`space_to_batch_nd`], [`batch_to_space_nd`], [`depth_to_space`], [`space_to_depth`] |
//! | ArgMax, ArgMin | [`arg_max`] |
//! | the TensorList ops | [`list_handle`], [`list_get_item`], [`list_stack`], ... |
//! | the others | this module, one function per op |

mod array;
mod control;
mod conv;
mod einsum;
mod lists;
mod math;
mod matmul;
mod nn;
mod reduce;
mod space;
mod strided_slice;

pub use control::{enter, functional_outputs, loop_cond, merge, switch, while_loop};
pub use conv::{
    avg_pool, conv2d, conv2d_backprop_input, conv3d, depthwise_conv2d_native, max_pool, pool3d,
};
pub use einsum::einsum;
pub use lists::{
    list_concat_v2, list_element_shape, list_gather, list_get_item, list_handle, list_length,
    list_pop_back, list_resize, list_scatter_into_existing_list, list_split, list_stack,
};
pub use matmul::{batch_matmul_v2, bias_add, matmul};
pub use reduce::{concat_v2, reduction};
pub use space::{batch_to_space_nd, depth_to_space, space_to_batch_nd, space_to_depth};

pub use array::{
    broadcast_to, const_op, expand_dims, fill, gather_nd, gather_v2, identity_n, one_hot, pack,
    pad, placeholder, reshape, resize, reverse_v2, shape_n, slice, split, split_v, squeeze, tile,
    transpose, unpack,
};
pub use math::{arg_max, range, select, select_v2};
pub use nn::{fused_batch_norm_v3, top_k_v2};
pub use strided_slice::strided_slice;

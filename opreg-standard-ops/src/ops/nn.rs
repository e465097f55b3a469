//! Neural-network ops (TF's `nn_ops.cc`): [`BiasAdd`], [`Conv2D`],
//! [`FusedBatchNormV3`], [`MaxPool`], [`Relu`], [`Softmax`], [`TopKV2`].

use registry_core::op;

/// Adds `bias` to `value`.
///
/// A special case of `Add` where `bias` is 1-D and matches the channel
/// dimension of `value` (the last one for NHWC, the third-to-last for NCHW).
/// Broadcasting is supported, so `value` may have any number of dimensions.
#[op(
    input = "value: T",
    input = "bias: T",
    output = "output: T",
    attr = "T: {float, double, int32, uint8, int16, int8, complex64, int64, qint8, quint8, qint32, bfloat16, qint16, quint16, uint16, complex128, half, uint32, uint64}",
    attr = "data_format: {'NHWC', 'NCHW'} = 'NHWC'",
    shape_fn = crate::shape::bias_add
)]
pub struct BiasAdd;

/// Computes a 2-D convolution given 4-D `input` and `filter` tensors.
///
/// The `filter` has shape [filter_height, filter_width, in_channels,
/// out_channels]. For each output position the op extracts an image patch,
/// multiplies it by the filter and sums, with the window moved by `strides`,
/// spread by `dilations` and padded as `padding` says.
#[op(
    input = "input: T",
    input = "filter: T",
    output = "output: T",
    attr = "T: {half, bfloat16, float, double, int32}",
    attr = "strides: list(int)",
    attr = "use_cudnn_on_gpu: bool = true",
    attr = "padding: {'SAME', 'VALID', 'EXPLICIT'}",
    attr = "explicit_paddings: list(int) = []",
    attr = "data_format: {'NHWC', 'NCHW'} = 'NHWC'",
    attr = "dilations: list(int) = [1, 1, 1, 1]",
    shape_fn = crate::shape::conv2d
)]
pub struct Conv2D;

/// Batch normalization.
///
/// Normalizes `x` with the given `mean` and `variance` (or, when
/// `is_training` is true, the moments of the batch), then scales it by
/// `scale` and shifts it by `offset`. The data format of `x` is NHWC or NCHW
/// (NDHWC or NCDHW for 5-D inputs).
#[op(
    input = "x: T",
    input = "scale: U",
    input = "offset: U",
    input = "mean: U",
    input = "variance: U",
    output = "y: T",
    output = "batch_mean: U",
    output = "batch_variance: U",
    output = "reserve_space_1: U",
    output = "reserve_space_2: U",
    output = "reserve_space_3: U",
    attr = "T: {half, bfloat16, float}",
    attr = "U: {bfloat16, float}",
    attr = "epsilon: float = 1e-04",
    attr = "exponential_avg_factor: float = 1.0",
    attr = "data_format: {'NHWC', 'NCHW', 'NDHWC', 'NCDHW'} = 'NHWC'",
    attr = "is_training: bool = true",
    shape_fn = crate::shape::fused_batch_norm_v3
)]
pub struct FusedBatchNormV3;

/// Performs max pooling on the input.
///
/// Each output element is the maximum of a `ksize` window of `input`, with
/// the window moved by `strides` and the input padded as `padding` says.
#[op(
    input = "input: T",
    output = "output: T",
    attr = "T: {half, bfloat16, float, double, int32, int64, uint8, int16, int8, uint16, qint8} = DT_FLOAT",
    attr = "ksize: list(int) >= 4",
    attr = "strides: list(int) >= 4",
    attr = "padding: {'SAME', 'VALID', 'EXPLICIT'}",
    attr = "explicit_paddings: list(int) = []",
    attr = "data_format: {'NHWC', 'NCHW', 'NCHW_VECT_C'} = 'NHWC'",
    shape_fn = crate::shape::max_pool
)]
pub struct MaxPool;

/// Computes rectified linear: `max(features, 0)`.
///
/// Negative elements of `features` become zero, the others pass unchanged.
#[op(
    input = "features: T",
    output = "activations: T",
    attr = "T: {float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, uint32, uint64, qint8}",
    shape_fn = registry_core::shape::common::unchanged_shape
)]
pub struct Relu;

/// Computes softmax activations.
///
/// For each batch `i` and class `j` the result is
/// exp(logits[i, j]) / sum_j(exp(logits[i, j])), over the last dimension of
/// `logits`.
#[op(
    input = "logits: T",
    output = "softmax: T",
    attr = "T: {half, bfloat16, float, double}",
    shape_fn = registry_core::shape::common::unchanged_shape_with_rank_at_least_1
)]
pub struct Softmax;

/// Computes a 2-D depthwise convolution given 4-D `input` and `filter` tensors.
///
/// The `filter` has shape [filter_height, filter_width, in_channels,
/// channel_multiplier]. Each input channel is convolved with its own
/// `channel_multiplier` filters, so the output has
/// `in_channels * channel_multiplier` channels: output channel
/// `k * channel_multiplier + q` is input channel `k` convolved with
/// `filter[:, :, k, q]`.
#[op(
    input = "input: T",
    input = "filter: T",
    output = "output: T",
    attr = "T: {half, bfloat16, float, double}",
    attr = "strides: list(int)",
    attr = "padding: {'SAME', 'VALID', 'EXPLICIT'}",
    attr = "explicit_paddings: list(int) = []",
    attr = "data_format: {'NHWC', 'NCHW'} = 'NHWC'",
    attr = "dilations: list(int) = [1, 1, 1, 1]",
    shape_fn = crate::shape::depthwise_conv2d_native
)]
pub struct DepthwiseConv2dNative;

/// Performs a 2-D convolution followed by the ops of `fused_ops`.
///
/// `fused_ops` is `[BiasAdd]` or `[BiasAdd, <activation>]` (TensorFlow's
/// remapper makes such nodes; here the session's `fusion` rewrite);
/// `args` are the fused ops' arguments (the bias), `host_args` those of
/// quantized variants. Internal to TensorFlow, with TensorFlow's
/// definition.
#[op(
    name = "_FusedConv2D",
    input = "input: T",
    input = "filter: T",
    input = "args: TArgs",
    input = "host_args: num_host_args * float",
    output = "output: T",
    attr = "T: {half, float, double, int8, qint8}",
    attr = "TArgs: list(type) >= 1",
    attr = "num_args: int >= 0",
    attr = "num_host_args: int >= 0 = 0",
    attr = "strides: list(int)",
    attr = "padding: {'SAME', 'VALID', 'EXPLICIT'}",
    attr = "explicit_paddings: list(int) = []",
    attr = "data_format: {'NHWC', 'NCHW', 'NCHW_VECT_C'} = 'NHWC'",
    attr = "filter_format: {'HWIO', 'OIHW', 'OIHW_VECT_I'} = 'HWIO'",
    attr = "dilations: list(int) = [1, 1, 1, 1]",
    attr = "use_cudnn_on_gpu: bool = true",
    attr = "fused_ops: list(string) = []",
    attr = "epsilon: float = 1e-04",
    attr = "leakyrelu_alpha: float = 0.2",
    shape_fn = crate::shape::conv2d
)]
pub struct FusedConv2D;

/// Performs a depthwise 2-D convolution followed by the ops of `fused_ops`.
///
/// `fused_ops` is `[BiasAdd]` or `[BiasAdd, <activation>]`, `args` their
/// arguments (the bias). Internal to TensorFlow, with TensorFlow's
/// definition.
#[op(
    name = "_FusedDepthwiseConv2dNative",
    input = "input: T",
    input = "filter: T",
    input = "args: num_args * T",
    output = "output: T",
    attr = "T: {half, bfloat16, float, double}",
    attr = "num_args: int >= 0",
    attr = "strides: list(int)",
    attr = "padding: {'SAME', 'VALID'}",
    attr = "data_format: {'NHWC', 'NCHW'} = 'NHWC'",
    attr = "dilations: list(int) = [1, 1, 1, 1]",
    attr = "fused_ops: list(string) = []",
    attr = "epsilon: float = 1e-04",
    attr = "leakyrelu_alpha: float = 0.2",
    shape_fn = crate::shape::depthwise_conv2d_native
)]
pub struct FusedDepthwiseConv2dNative;

/// Computes the gradients of a 2-D convolution with respect to its input.
///
/// `input_sizes` is the shape of the convolution's input (4 integers, or the
/// 2 spatial ones), `filter` the filter and `out_backprop` the gradient of
/// the convolution's output. Keras' `Conv2DTranspose` is this op: each
/// element of `out_backprop` scatters the filter, scaled by it, into the
/// output window it came from.
#[op(
    input = "input_sizes: int32",
    input = "filter: T",
    input = "out_backprop: T",
    output = "output: T",
    attr = "T: {half, bfloat16, float, double, int32}",
    attr = "strides: list(int)",
    attr = "use_cudnn_on_gpu: bool = true",
    attr = "padding: {'SAME', 'VALID', 'EXPLICIT'}",
    attr = "explicit_paddings: list(int) = []",
    attr = "data_format: {'NHWC', 'NCHW'} = 'NHWC'",
    attr = "dilations: list(int) = [1, 1, 1, 1]",
    shape_fn = crate::shape::conv2d_backprop_input
)]
pub struct Conv2DBackpropInput;

/// Computes the exponential linear function.
///
/// `x` where `x > 0`, `exp(x) - 1` elsewhere.
#[op(
    input = "features: T",
    output = "activations: T",
    attr = "T: {half, bfloat16, float, double}",
    shape_fn = registry_core::shape::common::unchanged_shape
)]
pub struct Elu;

/// Computes rectified linear with a leak: `x` where `x > 0`, `alpha * x` elsewhere.
///
/// The default `alpha` is 0.2.
#[op(
    input = "features: T",
    output = "activations: T",
    attr = "alpha: float = 0.2",
    attr = "T: {half, bfloat16, float, double} = DT_FLOAT",
    shape_fn = registry_core::shape::common::unchanged_shape
)]
pub struct LeakyRelu;

/// Computes log softmax activations.
///
/// For each batch `i` and class `j` the result is
/// `logits[i, j] - log(sum_j(exp(logits[i, j])))`, over the last dimension of
/// `logits`.
#[op(
    input = "logits: T",
    output = "logsoftmax: T",
    attr = "T: {half, bfloat16, float, double}",
    shape_fn = registry_core::shape::common::unchanged_shape_with_rank_at_least_1
)]
pub struct LogSoftmax;

/// Computes rectified linear 6: `min(max(features, 0), 6)`.
///
/// NaN stays NaN.
#[op(
    input = "features: T",
    output = "activations: T",
    attr = "T: {float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, uint32, uint64}",
    shape_fn = registry_core::shape::common::unchanged_shape
)]
pub struct Relu6;

/// Computes the scaled exponential linear function.
///
/// `scale * x` where `x > 0`, `scale * alpha * (exp(x) - 1)` elsewhere, with
/// `alpha = 1.6732632423543772848170429916717` and
/// `scale = 1.0507009873554804934193349852946`.
#[op(
    input = "features: T",
    output = "activations: T",
    attr = "T: {half, bfloat16, float, double}",
    shape_fn = registry_core::shape::common::unchanged_shape
)]
pub struct Selu;

/// Computes softplus: `log(exp(features) + 1)`.
///
/// Large inputs give the input itself and very negative ones `exp(x)`, so
/// the result neither overflows nor loses precision.
#[op(
    input = "features: T",
    output = "activations: T",
    attr = "T: {half, bfloat16, float, double}",
    shape_fn = registry_core::shape::common::unchanged_shape
)]
pub struct Softplus;

/// Computes softsign: `features / (abs(features) + 1)`.
///
/// The result is in the open interval (-1, 1).
#[op(
    input = "features: T",
    output = "activations: T",
    attr = "T: {half, bfloat16, float, double}",
    shape_fn = registry_core::shape::common::unchanged_shape
)]
pub struct Softsign;

/// Performs average pooling on the input.
///
/// Each output element is the mean of a `ksize` window of `value` moved by
/// `strides`; with SAME padding only the elements inside the input count.
#[op(
    input = "value: T",
    output = "output: T",
    attr = "ksize: list(int) >= 4",
    attr = "strides: list(int) >= 4",
    attr = "padding: {'SAME', 'VALID'}",
    attr = "data_format: {'NHWC', 'NCHW'} = 'NHWC'",
    attr = "T: {half, bfloat16, float, double}",
    shape_fn = crate::shape::avg_pool
)]
pub struct AvgPool;

/// Finds values and indices of the `k` largest entries for the last dimension.
///
/// For each vector along the last dimension of `input` (of size at least
/// `k`), `values` holds its `k` largest entries and `indices` their
/// positions in it. With `sorted`, they come in descending order; equal
/// entries are ordered by position (the lower index first).
#[op(
    input = "input: T",
    input = "k: Tk",
    output = "values: T",
    output = "indices: index_type",
    attr = "sorted: bool = true",
    attr = "T: {float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, uint32, uint64}",
    attr = "Tk: {int16, int32, int64} = DT_INT32",
    attr = "index_type: {int16, int32, int64} = DT_INT32",
    shape_fn = crate::shape::top_k_v2
)]
pub struct TopKV2;

/// Computes a 3-D convolution given 5-D `input` and `filter` tensors.
///
/// The `filter` has shape [filter_depth, filter_height, filter_width,
/// in_channels, out_channels]; `input` is `[batch, in_depth, in_height,
/// in_width, in_channels]` (NDHWC) or channels-first (NCDHW). Each output
/// element sums a window of the input times the filter, the window moved by
/// `strides` and padded as `padding` says.
#[op(
    input = "input: T",
    input = "filter: T",
    output = "output: T",
    attr = "T: {half, bfloat16, float, double}",
    attr = "strides: list(int) >= 5",
    attr = "padding: {'SAME', 'VALID'}",
    attr = "data_format: {'NDHWC', 'NCDHW'} = 'NDHWC'",
    attr = "dilations: list(int) = [1, 1, 1, 1, 1]",
    shape_fn = crate::shape::conv3d
)]
pub struct Conv3D;

/// Performs 3-D average pooling on the input.
///
/// Each output element is the mean of a `ksize` window of the 5-D input
/// (`[batch, depth, rows, cols, channels]` for NDHWC), moved by `strides`;
/// padding elements are not counted.
#[op(
    input = "input: T",
    output = "output: T",
    attr = "ksize: list(int) >= 5",
    attr = "strides: list(int) >= 5",
    attr = "padding: {'SAME', 'VALID'}",
    attr = "data_format: {'NDHWC', 'NCDHW'} = 'NDHWC'",
    attr = "T: {half, bfloat16, float, double}",
    shape_fn = crate::shape::pool3d
)]
pub struct AvgPool3D;

/// Performs 3-D max pooling on the input.
///
/// Each output element is the maximum of a `ksize` window of the 5-D input
/// (`[batch, depth, rows, cols, channels]` for NDHWC), moved by `strides`.
#[op(
    input = "input: T",
    output = "output: T",
    attr = "ksize: list(int) >= 5",
    attr = "strides: list(int) >= 5",
    attr = "padding: {'SAME', 'VALID'}",
    attr = "data_format: {'NDHWC', 'NCDHW'} = 'NDHWC'",
    attr = "T: {half, bfloat16, float}",
    shape_fn = crate::shape::pool3d
)]
pub struct MaxPool3D;

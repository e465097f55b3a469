//! GPU kernels of the neural-network ops: Conv2D, DepthwiseConv2dNative,
//! Conv2DBackpropInput and AvgPool (cuDNN; the Conv2Ds that are matrix
//! products on cuBLAS), and MaxPool, Softmax, LogSoftmax, BiasAdd, LeakyRelu
//! and FusedBatchNormV3 (NVRTC kernels with the CPU kernels' and TensorFlow's
//! semantics). `Relu` and the other activations are entries
//! of the unary table ([`crate::math::unary`]).
//!
//! Registered types (TF 2.21's GPU kernels, within what each op allows):
//!
//! | op | T |
//! |---|---|
//! | Conv2D | half, float, double |
//! | DepthwiseConv2dNative | half, float, double |
//! | Conv2DBackpropInput | half, float, double |
//! | AvgPool | half, float, double |
//! | MaxPool | half, bfloat16, float, double |
//! | Softmax | half, bfloat16, float, double |
//! | LogSoftmax | half, bfloat16, float, double |
//! | Relu | half, bfloat16, float, double |
//! | LeakyRelu | half, bfloat16, float, double |
//! | BiasAdd | half, bfloat16, float, double, int32 |
//! | FusedBatchNormV3 | half, bfloat16, float (U = float) |

mod avg_pool;
mod batch_norm;
mod bias_add;
mod conv2d;
mod conv2d_backprop_input;
mod depthwise;
mod leaky_relu;
mod max_pool;
mod softmax;
pub mod sources;

pub use avg_pool::{AvgPoolGpu, CudnnPoolDims};
pub use batch_norm::FusedBatchNormV3Gpu;
pub use bias_add::BiasAddGpu;
pub use conv2d::{Conv2DGpu, ConvElement, CudnnHalf};
pub use conv2d_backprop_input::{Conv2DBackpropInputGpu, backprop_input_crop};
pub use depthwise::{DepthwiseConv2dNativeGpu, depthwise_as_grouped};
pub use leaky_relu::LeakyReluGpu;
pub use max_pool::{MaxPoolGpu, PoolGeometryArg};
pub use softmax::SoftmaxGpu;

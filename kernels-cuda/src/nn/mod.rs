//! GPU kernels of the neural-network ops: Conv2D (cuDNN), and MaxPool,
//! Softmax, BiasAdd and FusedBatchNormV3 (NVRTC kernels with the CPU
//! kernels' and TensorFlow's semantics). `Relu` is an entry of the unary
//! table ([`crate::math::unary`]).
//!
//! Registered types (TF 2.21's GPU kernels, within what each op allows):
//!
//! | op | T |
//! |---|---|
//! | Conv2D | half, float, double |
//! | MaxPool | half, bfloat16, float, double |
//! | Softmax | half, bfloat16, float, double |
//! | Relu | half, bfloat16, float, double |
//! | BiasAdd | half, bfloat16, float, double, int32 |
//! | FusedBatchNormV3 | half, bfloat16, float (U = float) |

mod batch_norm;
mod bias_add;
mod conv2d;
mod max_pool;
mod softmax;
pub mod sources;

pub use batch_norm::FusedBatchNormV3Gpu;
pub use bias_add::BiasAddGpu;
pub use conv2d::{Conv2DGpu, ConvElement, CudnnHalf};
pub use max_pool::{MaxPoolGpu, PoolGeometryArg};
pub use softmax::SoftmaxGpu;

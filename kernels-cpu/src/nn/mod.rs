//! Neural-network kernels: Conv2D, Conv3D, DepthwiseConv2dNative,
//! Conv2DBackpropInput, MaxPool, MaxPool3D, AvgPool, AvgPool3D, BiasAdd, Softmax, LogSoftmax, LeakyRelu and
//! FusedBatchNormV3 (`Relu`, an entry of the unary table, is in
//! [`crate::math::unary`]). Data formats, padding, window sizes and the checks of
//! Conv2D and MaxPool are in [`opreg_op_logic::window`], [`opreg_op_logic::conv`],
//! [`opreg_op_logic::pool`] and [`opreg_op_logic::volume`] (shared with the GPU kernels).

// Conv2D multiplies with the matrix-product engine of `linalg`; when that
// group is compiled out, the same source is compiled here.
#[cfg(feature = "linalg")]
use crate::linalg::gemm;
// (MatMul-only helpers such as transposed views are then unused.)
#[cfg(not(feature = "linalg"))]
#[path = "../linalg/gemm/mod.rs"]
#[allow(dead_code)]
mod gemm;

/// What runs on each finished span of whole output pixels while it is in
/// cache (a fused op's bias, addition and activation): called with the
/// index of the span's first element in the output, and the span.
type RowEpilogue<'a, T> = &'a (dyn Fn(usize, &mut [T]) + Sync);

/// A contraction's output when nothing is summed into it (an empty input,
/// only padding): zeros, then the epilogue.
fn zeros_then<T: Default + Copy>(out: &mut [T], epilogue: Option<RowEpilogue<'_, T>>) {
    out.fill(T::default());
    if let Some(epilogue) = epilogue {
        epilogue(0, out);
    }
}

mod conv2d;
mod conv2d_backprop_input;
mod conv3d;
mod depthwise;
mod depthwise_vector;
mod direct_conv;
mod fused;
mod im2col;

pub use conv2d::Conv2DKernel;
pub use conv2d_backprop_input::Conv2DBackpropInputKernel;
pub use conv3d::Conv3DKernel;
pub use depthwise::DepthwiseConv2dNativeKernel;
pub use fused::{FusedConv2DKernel, FusedDepthwiseConv2dNativeKernel, FusedMatMulKernel};
mod avg_pool;
mod batch_norm;
mod bias_add;
mod leaky_relu;
mod max_pool;
mod resize;
mod softmax;

pub use avg_pool::{AvgPool3DKernel, AvgPoolKernel};
pub use batch_norm::FusedBatchNormV3Kernel;
pub use bias_add::BiasAddKernel;
pub use leaky_relu::LeakyReluKernel;
pub use max_pool::{MaxPool3DKernel, MaxPoolKernel};
pub use resize::{ResizeBilinearKernel, ResizeNearestNeighborKernel};

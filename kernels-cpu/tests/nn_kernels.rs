//! The nn kernels through the public API (`create_op_kernel` +
//! `KernelInstance::compute`): Conv2D, DepthwiseConv2dNative, MaxPool, BiasAdd, Relu, Softmax and
//! FusedBatchNormV3, with hand-computed cases, naive references, TF's
//! reference graphs and the CPU type coverage. One module per op.
#![cfg(feature = "nn")]

use crate::nn_support as support;

#[path = "nn_kernels/batch_norm.rs"]
mod batch_norm;
#[path = "nn_kernels/bias_add.rs"]
mod bias_add;
#[path = "nn_kernels/conv2d.rs"]
mod conv2d;
#[path = "nn_kernels/coverage.rs"]
mod coverage;
#[path = "nn_kernels/depthwise.rs"]
mod depthwise;
#[path = "nn_kernels/graphs.rs"]
mod graphs;
#[path = "nn_kernels/max_pool.rs"]
mod max_pool;
#[path = "nn_kernels/relu.rs"]
mod relu;
#[path = "nn_kernels/softmax.rs"]
mod softmax;

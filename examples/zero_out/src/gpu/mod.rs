//! GPU kernels of the crate's ops (the `cuda` feature), through opreg's
//! CUDA runtime (`opreg-cuda`, the standard GPU kernels' runtime): each
//! kernel gets its device from its context, its CUDA C is compiled by NVRTC
//! for that device when a node's kernel is built (and attached to its
//! registration, `sources = ...`), and it launches on the device's stream
//! into outputs the context allocates.

mod weighted_sum;
mod zero_out;

pub use weighted_sum::weighted_sum_source;
pub use zero_out::zero_out_source;

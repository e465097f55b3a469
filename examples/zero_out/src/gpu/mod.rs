//! GPU kernels of the crate's ops (the `cuda` feature), on the device of
//! `kernels-cuda`: their CUDA C is compiled by NVRTC when a node's kernel
//! is built, and launched on the device's stream.

mod weighted_sum;
mod zero_out;

use opreg_cuda::KernelSource;

pub use weighted_sum::weighted_sum_source;
pub use zero_out::zero_out_source;

/// Every GPU kernel source of the crate, for checking that they compile
/// (`opreg_cuda::check_compiles`).
pub fn sources() -> Vec<KernelSource> {
    let mut sources = vec![zero_out_source()];
    sources.extend(
        weighted_sum::TYPES
            .iter()
            .filter_map(|&t| weighted_sum_source(t)),
    );
    sources
}

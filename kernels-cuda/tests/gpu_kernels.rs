//! The GPU kernels' tests, one binary (one link of the kernel libraries, and
//! one binary for `scripts/gpu-verify.sh` to carry). Tests that need a GPU
//! are `#[ignore = "needs a GPU"]`; `cargo test -p kernels-cuda --features
//! cuda --test gpu_kernels math_gpu::` runs one module.

// Shared by the modules below.
#[cfg(feature = "cuda")]
mod common;

#[path = "array_gpu.rs"]
mod array_gpu;

#[path = "math_gpu.rs"]
mod math_gpu;

#[path = "matmul_gpu.rs"]
mod matmul_gpu;

#[path = "nn_gpu.rs"]
mod nn_gpu;

#[path = "prelude.rs"]
mod prelude;

#[path = "reduce_gpu.rs"]
mod reduce_gpu;

#[path = "sources.rs"]
mod sources;

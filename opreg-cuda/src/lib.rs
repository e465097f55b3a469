//! opreg's CUDA runtime: the GPU device and what every GPU kernel shares,
//! device memory, NVRTC compilation with a per-device cache, launch
//! configuration and typed access to kernel inputs and outputs.
//!
//! It is apart from the standard GPU kernels (`kernels-cuda`) so that any
//! op library registers GPU kernels through the same device, memory and
//! compiled-kernel cache as the standard ones (`examples/zero_out` does).
//! CUDA's libraries are loaded at run time (`cudarc`'s dynamic loading), so
//! this crate builds on machines without CUDA; there, opening the device
//! answers "no GPU device: ..." and nothing panics.

mod compile;
mod device;
mod io;
mod launch;
mod memory;
mod probe;

pub use compile::{PRELUDE, REQUIRE_NVRTC_ENV, check_compiles, compile_ptx, cuda_type, program};
pub use device::GpuDevice;
pub use io::{
    GpuContext, GpuTensors, gpu_error, gpu_input_ptr, gpu_ptr, gpu_ptr_mut, gpu_slice,
    gpu_slice_mut,
};
pub use launch::{BLOCK, MAX_RANK, ShapeArg, grid_for};
pub use memory::GpuMemory;
pub use probe::probe_libraries;

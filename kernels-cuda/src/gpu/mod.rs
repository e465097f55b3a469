//! The CUDA device and what every GPU kernel shares: device memory,
//! NVRTC compilation with a per-device cache, launch configuration and
//! typed access to kernel inputs and outputs.

mod compile;
mod device;
mod io;
mod launch;
mod memory;
mod probe;

pub use compile::{KernelSource, PRELUDE, check_compiles, compile_ptx, cuda_type};
pub use device::GpuDevice;
pub use io::{GpuKernelIo, gpu_bytes, gpu_error};
pub use launch::{BLOCK, MAX_RANK, ShapeArg, grid_for};
pub use memory::GpuMemory;
pub use probe::probe_libraries;

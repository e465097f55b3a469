//! GPU kernels of opreg's standard ops, on CUDA through `cudarc`: NVRTC for
//! element-wise, reduction and layout kernels (compiled once per device and
//! dtype, cached), cuBLAS for MatMul, cuDNN for convolution, pooling and
//! softmax.
//!
//! Everything is behind the `cuda` feature. CUDA's libraries are loaded at
//! run time (`cudarc`'s dynamic loading), so the crate builds on machines
//! without CUDA; there [`gpu_device`] (and `opreg run --device gpu`) answer
//! "no GPU device: ..." and nothing panics. Without the feature the crate
//! is empty.
//!
//! The device registers itself for the device type `"GPU"` with
//! [`registry_core::device`]: the executor opens it for sessions that list
//! `GPU` in their devices, keeps tensors in its memory between GPU kernels,
//! and copies them to and from the host at the edges with CPU kernels and
//! for host-memory args (shapes, axes).
//!
//! ```
//! // Always true: without the `cuda` feature, or without a GPU, no GPU
//! // kernels are linked or none can run, and the answer says why.
//! match kernels_cuda::gpu_available() {
//!     Ok(description) => println!("GPU: {description}"),
//!     Err(why) => println!("no GPU: {why}"),
//! }
//! ```

#[cfg(all(feature = "cuda", feature = "array"))]
pub mod array;
#[cfg(all(feature = "cuda", any(feature = "linalg", feature = "nn")))]
pub mod gemm;
#[cfg(all(feature = "cuda", feature = "linalg"))]
pub mod linalg;
// The unary table's kernels are in `math`, each in its own group (`Relu`
// is in `nn`).
#[cfg(all(feature = "cuda", any(feature = "math", feature = "nn")))]
pub mod math;
#[cfg(all(feature = "cuda", feature = "nn"))]
pub mod nn;
#[cfg(all(feature = "cuda", feature = "reduce"))]
pub mod reduce;

/// The sources of a registration whose kernel compiles `source(dtype)`
/// for each type its constraint on `attr` lists (one, as `#[kernel]`
/// registers them). Used by every kernel group but `linalg` (cuBLAS alone).
#[cfg(all(
    feature = "cuda",
    any(
        feature = "array",
        feature = "math",
        feature = "nn",
        feature = "reduce"
    )
))]
pub(crate) fn sources_of_type(
    reg: &registry_core::kernel::KernelRegistration,
    attr: &str,
    source: impl Fn(
        registry_core::proto::DataType,
    )
        -> Result<registry_core::kernel::KernelSource, registry_core::kernel::KernelError>,
) -> Result<Vec<registry_core::kernel::KernelSource>, registry_core::kernel::KernelError> {
    registry_core::kernel::constraint_types(reg, attr)
        .unwrap_or(&[])
        .iter()
        .map(|&dtype| source(dtype))
        .collect()
}

/// Makes sure this crate (and so its kernel and device registrations) is
/// linked into the binary. Returns the number of GPU kernel registrations
/// the global registry holds (0 without the `cuda` feature).
///
/// ```
/// let n = kernels_cuda::link();
/// assert_eq!(n > 0, cfg!(feature = "cuda"));
/// ```
pub fn link() -> usize {
    registry_core::KernelRegistry::global()
        .all()
        .iter()
        .filter(|r| r.device == registry_core::device::DEVICE_GPU)
        .count()
}

/// A description of the GPU the kernels would run on, or why there is none
/// (the crate was built without `cuda`, the driver or a library is missing,
/// or the machine has no GPU). Never panics.
pub fn gpu_available() -> Result<String, String> {
    #[cfg(feature = "cuda")]
    {
        opreg_cuda::GpuDevice::get()
            .map(|d| registry_core::device::Device::description(&*d))
            .map_err(|e| e.to_string())
    }
    #[cfg(not(feature = "cuda"))]
    {
        Err("no GPU device: kernels-cuda was built without its `cuda` feature".to_owned())
    }
}

/// The GPU as a [`registry_core::device::Device`], or why there is none.
#[cfg(feature = "cuda")]
pub fn gpu_device()
-> Result<std::sync::Arc<opreg_cuda::GpuDevice>, registry_core::device::DeviceError> {
    opreg_cuda::GpuDevice::get()
}

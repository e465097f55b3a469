//! Finding CUDA's libraries before calling into them: `cudarc` loads each
//! library on first use and panics when it is missing, so every library is
//! checked here first and a missing one becomes an error.

/// The libraries the GPU kernels load, with the `cudarc` module that loads
/// each: the driver (`libcuda.so`), NVRTC, cuBLAS and cuDNN.
///
/// Returns the names of the missing ones (empty when all are present).
/// The driver is required to open the device at all; NVRTC, cuBLAS and
/// cuDNN are required by the kernels that use them, which report their
/// absence when they are built for a node.
pub fn probe_libraries() -> Vec<&'static str> {
    let mut missing = Vec::new();
    // SAFETY: each `is_culib_present` only tries `dlopen` on the library's
    // candidate names and closes what it opened; no CUDA function is called.
    unsafe {
        if !cudarc::driver::sys::is_culib_present() {
            missing.push("libcuda (the NVIDIA driver)");
        }
        if !cudarc::nvrtc::sys::is_culib_present() {
            missing.push("libnvrtc (NVRTC)");
        }
        if !cudarc::cublas::sys::is_culib_present() {
            missing.push("libcublas (cuBLAS)");
        }
        if !cudarc::cudnn::sys::is_culib_present() {
            missing.push("libcudnn (cuDNN)");
        }
    }
    missing
}

/// True when the NVRTC library can be loaded (it needs no GPU: kernel
/// sources can be compiled on any machine that has it).
pub(crate) fn nvrtc_present() -> bool {
    // SAFETY: as in `probe_libraries`: only `dlopen`/`dlclose`.
    unsafe { cudarc::nvrtc::sys::is_culib_present() }
}

/// True when the driver library can be loaded.
pub(crate) fn driver_present() -> bool {
    // SAFETY: as in `probe_libraries`: only `dlopen`/`dlclose`.
    unsafe { cudarc::driver::sys::is_culib_present() }
}

/// True when cuBLAS can be loaded.
pub(crate) fn cublas_present() -> bool {
    // SAFETY: as in `probe_libraries`: only `dlopen`/`dlclose`.
    unsafe { cudarc::cublas::sys::is_culib_present() }
}

/// True when cuDNN can be loaded.
pub(crate) fn cudnn_present() -> bool {
    // SAFETY: as in `probe_libraries`: only `dlopen`/`dlclose`.
    unsafe { cudarc::cudnn::sys::is_culib_present() }
}

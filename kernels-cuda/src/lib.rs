//! CUDA kernels of opreg's standard ops (cudarc: NVRTC, cuBLAS, cuDNN).
//!
//! Not written yet: they arrive with the "CUDA kernels" issue, behind a
//! `cuda` feature with dynamic loading, so the crate builds without CUDA.

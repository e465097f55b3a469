//! The prelude every GPU kernel source starts with compiles with NVRTC
//! (which needs no GPU; the test skips, saying so, when the library is not
//! found: `scripts/install-nvrtc.sh` installs it).
#![cfg(feature = "cuda")]

use opreg_cuda::check_compiles;
use registry_core::kernel::KernelSource;

#[test]
fn prelude_and_a_kernel_using_it_compile() {
    let source = KernelSource::new(
        "test/prelude",
        r#"
template <typename T>
__device__ void scale(const T* x, T* y, index_t n, shape_arg s) {
    GRID_STRIDE(i, n) { y[i] = store<T>(load(x[i]) * (typename compute_t<T>::type)s.d[0]); }
}
extern "C" __global__ void scale_f16(const f16_t* x, f16_t* y, index_t n, shape_arg s) { scale(x, y, n, s); }
extern "C" __global__ void scale_bf16(const bf16_t* x, bf16_t* y, index_t n, shape_arg s) { scale(x, y, n, s); }
extern "C" __global__ void scale_f32(const float* x, float* y, index_t n, shape_arg s) { scale(x, y, n, s); }
extern "C" __global__ void scale_i64(const i64* x, i64* y, index_t n, shape_arg s) { scale(x, y, n, s); }
"#,
        ["scale_f16", "scale_bf16", "scale_f32", "scale_i64"],
    );
    match check_compiles(&source) {
        Ok(true) => {}
        Ok(false) => {
            eprintln!("skipped: NVRTC (libnvrtc.so) not found; run scripts/install-nvrtc.sh")
        }
        Err(log) => panic!("the prelude does not compile:\n{log}"),
    }
}

#[test]
fn a_broken_source_reports_nvrtc_log() {
    let source = KernelSource::new(
        "test/broken",
        "extern \"C\" __global__ void k() { undefined_name; }",
        ["k"],
    );
    match check_compiles(&source) {
        Ok(true) => panic!("a broken source compiled"),
        Ok(false) => {
            eprintln!("skipped: NVRTC (libnvrtc.so) not found; run scripts/install-nvrtc.sh")
        }
        Err(log) => assert!(log.contains("undefined_name"), "{log}"),
    }
}

//! CUDA C sources of GPU kernels and their compilation with NVRTC.
//!
//! Every source is compiled after [`PRELUDE`], which defines fixed-width
//! integer names, `f16_t`/`bf16_t` (half floats kept as bits and computed in
//! `float`, as TensorFlow's Eigen does), and `load`/`store` between an
//! element type and its compute type. No CUDA header is needed, so NVRTC
//! alone compiles them (on any machine that has it, GPU or not).

use cudarc::nvrtc::{CompileOptions, Ptx};
use registry_core::kernel::KernelSource;
use registry_core::proto::DataType;

/// The whole program NVRTC compiles for `source`: the [`PRELUDE`], then the
/// source's code.
pub fn program(source: &KernelSource) -> String {
    format!(
        "{PRELUDE}\n// ---- {} ----\n{}",
        source.key(),
        source.code()
    )
}

/// The CUDA C type of a dtype's elements in kernel sources, or `None` for
/// dtypes GPU kernels do not handle (strings, complex, quantized).
///
/// ```
/// use opreg_cuda::cuda_type;
/// use registry_core::proto::DataType;
/// assert_eq!(cuda_type(DataType::DtFloat), Some("float"));
/// assert_eq!(cuda_type(DataType::DtHalf), Some("f16_t"));
/// assert_eq!(cuda_type(DataType::DtString), None);
/// ```
pub fn cuda_type(dtype: DataType) -> Option<&'static str> {
    use DataType::*;
    Some(match dtype {
        DtFloat => "float",
        DtDouble => "double",
        DtHalf => "f16_t",
        DtBfloat16 => "bf16_t",
        DtInt8 => "i8",
        DtUint8 => "u8",
        DtInt16 => "i16",
        DtUint16 => "u16",
        DtInt32 => "i32",
        DtUint32 => "u32",
        DtInt64 => "i64",
        DtUint64 => "u64",
        DtBool => "bool",
        _ => return None,
    })
}

/// Definitions every kernel source can use.
///
/// - `i8` ... `u64`: fixed-width integers.
/// - `f16_t`, `bf16_t`: 16-bit floats as bits; `load` widens them to
///   `float` and `store` rounds to nearest even (PTX `cvt.rn`), as Eigen's
///   half arithmetic does.
/// - `compute_t<T>::type`: what arithmetic on `T` is done in (`float` for
///   the half types, `T` otherwise); `load(T)` and `store<T>(compute)`.
/// - `index_t`: 64-bit element index; `GRID_STRIDE(i, n)` loops `i` over
///   `0..n` across the whole grid.
pub const PRELUDE: &str = r#"
typedef signed char i8;
typedef unsigned char u8;
typedef short i16;
typedef unsigned short u16;
typedef int i32;
typedef unsigned int u32;
typedef long long i64;
typedef unsigned long long u64;
typedef long long index_t;

struct __align__(2) f16_t { unsigned short bits; };
struct __align__(2) bf16_t { unsigned short bits; };

template <typename T> struct compute_t { typedef T type; };
template <> struct compute_t<f16_t> { typedef float type; };
template <> struct compute_t<bf16_t> { typedef float type; };

template <typename T> __device__ __forceinline__ typename compute_t<T>::type load(T x) { return x; }
__device__ __forceinline__ float load(f16_t x) {
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(x.bits));
    return f;
}
__device__ __forceinline__ float load(bf16_t x) {
    return __uint_as_float(((unsigned int)x.bits) << 16);
}

template <typename T> __device__ __forceinline__ T store(typename compute_t<T>::type x) { return (T)x; }
template <> __device__ __forceinline__ f16_t store<f16_t>(float x) {
    f16_t h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h.bits) : "f"(x));
    return h;
}
template <> __device__ __forceinline__ bf16_t store<bf16_t>(float x) {
    bf16_t h;
    unsigned int u = __float_as_uint(x);
    if ((u & 0x7fffffffu) > 0x7f800000u) {
        h.bits = (unsigned short)((u >> 16) | 0x40u);  // quiet NaN
    } else {
        u += 0x7fffu + ((u >> 16) & 1u);  // round to nearest even
        h.bits = (unsigned short)(u >> 16);
    }
    return h;
}

// Dimension sizes or strides passed by value (opreg_cuda::ShapeArg).
struct shape_arg { index_t rank; index_t d[8]; };

#define GRID_STRIDE(i, n) \
    for (index_t i = (index_t)blockIdx.x * blockDim.x + threadIdx.x; i < (index_t)(n); \
         i += (index_t)blockDim.x * gridDim.x)
"#;

/// The NVRTC architecture for a compute capability (PTX for the virtual
/// architecture, which the driver compiles for the exact GPU).
fn arch(compute_capability: (i32, i32)) -> Option<&'static str> {
    Some(match compute_capability {
        (10, _) => "compute_100",
        (9, _) => "compute_90",
        (8, 9) => "compute_89",
        (8, 6) => "compute_86",
        (8, _) => "compute_80",
        (7, 5) => "compute_75",
        (7, _) => "compute_70",
        _ => return None,
    })
}

/// Compiles `source` (after the prelude) to PTX for a device of
/// `compute_capability` (`(9, 0)`: Hopper). Needs only the NVRTC library,
/// not a GPU; errors carry NVRTC's log.
///
/// Single-precision code flushes denormals to zero (`--ftz=true`), as
/// TensorFlow's own GPU kernels are built (`-nvcc_options=ftz=true` in its
/// `cuda_default_copts`); double precision keeps them, on the GPU as in TF.
pub fn compile_ptx(source: &KernelSource, compute_capability: (i32, i32)) -> Result<Ptx, String> {
    let options = CompileOptions {
        arch: arch(compute_capability),
        name: Some(format!("{}.cu", source.key().replace('/', "_"))),
        options: vec!["--std=c++17".to_owned()],
        ftz: Some(true),
        ..Default::default()
    };
    // NVRTC can abort through cudarc on an unloadable library; callers
    // check that it is present first.
    std::panic::catch_unwind(|| cudarc::nvrtc::compile_ptx_with_opts(program(source), options))
        .map_err(|p| registry_core::kernel::KernelError::from_panic(&*p).to_string())?
        .map_err(|e| compile_error_text(&e))
}

fn compile_error_text(e: &cudarc::nvrtc::CompileError) -> String {
    match e {
        cudarc::nvrtc::CompileError::CompileError { log, .. } => {
            format!("NVRTC: {}", log.to_string_lossy())
        }
        other => format!("NVRTC: {other:?}"),
    }
}

/// The environment variable that makes a missing NVRTC an error for
/// [`check_compiles`] (`.ci/run` sets it: CI installs NVRTC, so every
/// kernel source must really be compiled there).
pub const REQUIRE_NVRTC_ENV: &str = "OPREG_REQUIRE_NVRTC";

/// Compiles `source` for Hopper (compute 9.0) when the NVRTC library can be
/// loaded: `Ok(true)` when it compiled, `Err(log)` when it did not. When
/// NVRTC is absent, `Ok(false)` (nothing was checked), or an error when
/// [`REQUIRE_NVRTC_ENV`] is `1`. For tests of kernel sources on machines
/// without a GPU.
pub fn check_compiles(source: &KernelSource) -> Result<bool, String> {
    if !super::probe::nvrtc_present() {
        if std::env::var(REQUIRE_NVRTC_ENV).is_ok_and(|v| v == "1") {
            return Err(format!(
                "NVRTC (libnvrtc.so) is not on the library path, but {REQUIRE_NVRTC_ENV}=1 \
                 asks for every kernel source to be compiled"
            ));
        }
        return Ok(false);
    }
    compile_ptx(source, (9, 0)).map(|_| true)
}

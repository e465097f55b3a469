//! The CUDA C sources of the element-wise kernels: one source per (op,
//! dtype), generated from a few templates ([`COMMON`] plus a family body)
//! with the op's scalar expression spliced in. Each is compiled with NVRTC
//! (after the GPU [`PRELUDE`](opreg_cuda::PRELUDE)) when a kernel is built.
//!
//! Every kernel loops with `GRID_STRIDE`. The flat paths (same shapes, or
//! one scalar operand) move 16 bytes per operand per step through aligned
//! `pack` loads when every pointer is aligned (always, for the pool's
//! allocations) and finish the tail element by element; broadcasting walks
//! the output index through up to [`MAX_RANK`](opreg_cuda::MAX_RANK)
//! merged dimensions, in 32-bit arithmetic when the output has fewer than
//! 2^31 elements.
//!
//! Scalar semantics (the CPU kernels' and TF's):
//! - integers wrap (two's complement, computed in unsigned arithmetic, so no
//!   signed overflow happens in the kernel);
//! - `half` and `bfloat16` compute in `float` and round to nearest even
//!   after each operation TF's `Eigen::half` arithmetic rounds after (the
//!   quotient of `FloorDiv`, the difference of `SquaredDifference`, each
//!   sum of `AddN`); the transcendental functions round once;
//! - `Maximum`/`Minimum` propagate NaN (the first NaN operand) and pick
//!   among equal values (`0`, `-0`) as TF's CPU kernels do;
//! - integer `FloorDiv`/`FloorMod` round toward negative infinity; `MIN / -1`
//!   is `MIN` and `MIN % -1` is 0. A zero divisor, an error on the CPU
//!   (which checks the divisor before computing) cannot be reported by a GPU
//!   kernel without reading the divisor back, so it gives a defined value,
//!   as XLA defines it: `x / 0 = -1` (all bits set for unsigned types) and
//!   `x % 0 = x`;
//! - integer `Pow` with a negative exponent (also a CPU error) gives the
//!   integer part of `1 / x^-y`: 1 for `x = 1`, ±1 for `x = -1`, else 0;
//! - `Cast` from a float to an integer truncates toward zero through PTX's
//!   `cvt.rzi` to a 32-bit (`int8`..`int32`, `uint8`..`uint32`) or 64-bit
//!   integer, which is what nvcc emits for TF's C++ casts: out-of-range
//!   values saturate to that 32- or 64-bit type's range, then narrower types
//!   keep the low bits; NaN gives 0 through 32 bits, and `i64::MIN` to
//!   `int64` and `2^63` to `uint64` (measured on an H200). (The CPU kernels follow x86 instead,
//!   so NaN and out-of-range values differ; in-range values agree.)

use registry_core::kernel::KernelError;
use registry_core::proto::{DataType, DataTypeExt};
use registry_core::tensor::element_size;

use opreg_cuda::cuda_type;
use registry_core::kernel::KernelSource;

/// Device code every element-wise source shares (after the GPU prelude):
/// aligned packs, wrapping integer arithmetic, integer floor division,
/// modulo and power, NaN-propagating max/min, float helpers and the
/// float-to-integer conversions.
pub const COMMON: &str = r#"
// ---- element-wise common ----
template <typename E, int V> struct alignas(sizeof(E) * V) pack { E v[V]; };

__device__ __forceinline__ bool is_aligned(const void* p, unsigned long long a) {
    return ((unsigned long long)p & (a - 1ull)) == 0ull;
}

template <typename T> struct int_traits { static const bool is_signed = false; };
template <> struct int_traits<i8> { static const bool is_signed = true; };
template <> struct int_traits<i16> { static const bool is_signed = true; };
template <> struct int_traits<i32> { static const bool is_signed = true; };
template <> struct int_traits<i64> { static const bool is_signed = true; };

// Unsigned arithmetic wide enough that no operand is promoted to `int`.
template <typename T> struct wide_unsigned { typedef unsigned int type; };
template <> struct wide_unsigned<i64> { typedef unsigned long long type; };
template <> struct wide_unsigned<u64> { typedef unsigned long long type; };

template <typename T> __device__ __forceinline__ T wrap_add(T a, T b) {
    typedef typename wide_unsigned<T>::type W;
    return (T)((W)a + (W)b);
}
template <typename T> __device__ __forceinline__ T wrap_sub(T a, T b) {
    typedef typename wide_unsigned<T>::type W;
    return (T)((W)a - (W)b);
}
template <typename T> __device__ __forceinline__ T wrap_mul(T a, T b) {
    typedef typename wide_unsigned<T>::type W;
    return (T)((W)a * (W)b);
}
template <typename T> __device__ __forceinline__ T wrap_neg(T a) {
    typedef typename wide_unsigned<T>::type W;
    return (T)((W)0 - (W)a);
}
template <typename T> __device__ __forceinline__ T wrap_abs(T a) {
    if constexpr (int_traits<T>::is_signed) {
        return a < (T)0 ? wrap_neg(a) : a;
    } else {
        return a;
    }
}

// floor(a / b); a zero divisor gives -1 (all bits set), MIN / -1 wraps to MIN.
template <typename T> __device__ __forceinline__ T floor_div_int(T a, T b) {
    if (b == (T)0) return (T)(-1);
    if constexpr (int_traits<T>::is_signed) {
        if (b == (T)(-1)) return wrap_neg(a);
        T q = (T)(a / b);
        T r = (T)(a - q * b);
        if (r != (T)0 && ((r < (T)0) != (b < (T)0))) q = (T)(q - (T)1);
        return q;
    } else {
        return (T)(a / b);
    }
}

// a - floor(a / b) * b, with the sign of b; a zero divisor gives a.
template <typename T> __device__ __forceinline__ T floor_mod_int(T a, T b) {
    if (b == (T)0) return a;
    if constexpr (int_traits<T>::is_signed) {
        if (b == (T)(-1)) return (T)0;
        T r = (T)(a % b);
        if (r != (T)0 && ((r < (T)0) != (b < (T)0))) r = (T)(r + b);
        return r;
    } else {
        return (T)(a % b);
    }
}

// a^b by squaring, wrapping; a negative exponent gives trunc(1 / a^-b).
template <typename T> __device__ __forceinline__ T pow_int(T a, T b) {
    if constexpr (int_traits<T>::is_signed) {
        if (b < (T)0) {
            if (a == (T)1) return (T)1;
            if (a == (T)(-1)) return (b & (T)1) ? (T)(-1) : (T)1;
            return (T)0;
        }
    }
    T acc = (T)1;
    T base = a;
    T e = b;
    while (e != (T)0) {
        if (e & (T)1) acc = wrap_mul(acc, base);
        e = (T)(e >> 1);
        if (e != (T)0) base = wrap_mul(base, base);
    }
    return acc;
}

template <typename C> __device__ __forceinline__ bool nan_of(C) { return false; }
__device__ __forceinline__ bool nan_of(float v) { return isnan(v); }
__device__ __forceinline__ bool nan_of(double v) { return isnan(v); }

// Maximum and Minimum as TF 2.21's CPU kernels answer: a NaN operand is the
// result (the first one); of two equal values (0 and -0) the second for
// float, double and integers, the first for half and bfloat16 (T narrower
// than the compute type C).
template <typename T, typename C> __device__ __forceinline__ C max_nan(C a, C b) {
    if (sizeof(T) < sizeof(C)) return nan_of(a) ? a : ((nan_of(b) || a < b) ? b : a);
    return (nan_of(a) || a > b) ? a : b;
}
template <typename T, typename C> __device__ __forceinline__ C min_nan(C a, C b) {
    if (sizeof(T) < sizeof(C)) return nan_of(a) ? a : ((nan_of(b) || b < a) ? b : a);
    return (nan_of(a) || a < b) ? a : b;
}
// Relu as TF 2.21's CPU kernels answer: float and double give +0 for -0
// (x > 0 or NaN keeps x), half and bfloat16 keep -0 (x < 0 gives 0).
template <typename T, typename C> __device__ __forceinline__ C relu_of(C x) {
    if (sizeof(T) < sizeof(C)) return x < (C)0 ? (C)0 : x;
    return (x > (C)0 || nan_of(x)) ? x : (C)0;
}

__device__ __forceinline__ float floor_fmod(float a, float b) {
    float m = fmodf(a, b);
    return (m != 0.0f && ((b < 0.0f) != (m < 0.0f))) ? m + b : m;
}
__device__ __forceinline__ double floor_fmod(double a, double b) {
    double m = fmod(a, b);
    return (m != 0.0 && ((b < 0.0) != (m < 0.0))) ? m + b : m;
}

// e / (1 + e) with e = exp(x), and 1 where e overflows: Eigen's generic
// logistic, each step rounded to T (as the CPU kernels).
__device__ __forceinline__ float exp_of(float x) { return expf(x); }
__device__ __forceinline__ double exp_of(double x) { return exp(x); }
template <typename T, typename C> __device__ __forceinline__ C sigmoid_of(C x) {
    const C e = load(store<T>(exp_of(x)));
    if (isinf(e)) return (C)1;
    const C d = load(store<T>((C)1 + e));
    return e / d;
}

// Relu6 as relu_of, then capped at 6 (NaN stays NaN).
template <typename T, typename C> __device__ __forceinline__ C relu6_of(C x) {
    const C r = relu_of<T, C>(x);
    return r > (C)6 ? (C)6 : r;
}
// Elu and Selu: x < 0 selects exp(x) - 1 (so -0 and NaN take the linear
// branch), each step rounded to T.
template <typename T, typename C> __device__ __forceinline__ C elu_of(C x) {
    if (!(x < (C)0)) return x;
    return load(store<T>(exp_of(x))) - (C)1;
}
template <typename T, typename C> __device__ __forceinline__ C selu_of(C x) {
    if (!(x < (C)0)) return load(store<T>((C)1.0507009873554804934193349852946)) * x;
    const C m = load(store<T>(load(store<T>(exp_of(x))) - (C)1));
    return load(store<T>((C)1.7580993408473768599402175208123)) * m;
}
// Softplus with TF's thresholds: log(epsilon) + 2 of T (float's for half).
template <typename T> struct softplus_threshold { static constexpr float value = -13.942385f; };
template <> struct softplus_threshold<double> { static constexpr double value = -34.04365338911715; };
template <> struct softplus_threshold<bf16_t> { static constexpr float value = -2.8520303f; };
template <typename T, typename C> __device__ __forceinline__ C softplus_of(C x) {
    const C t = (C)softplus_threshold<T>::value;
    if (x > -t) return x;
    if (x < t) return exp_of(x);
    return sizeof(C) == 4 ? (C)log1pf((float)exp_of(x)) : (C)log1p((double)exp_of(x));
}
template <typename T, typename C> __device__ __forceinline__ C softsign_of(C x) {
    return x / load(store<T>((x < (C)0 ? -x : x) + (C)1));
}
// Sign: -1, 0 or 1; NaN stays NaN, -0 gives +0.
template <typename C> __device__ __forceinline__ C sign_of(C x) {
    return nan_of(x) ? x : (C)((x > (C)0) - (x < (C)0));
}

// (a - b)^2 with the difference rounded to T first (as T's own arithmetic
// does: half and bfloat16 round after every operation).
template <typename T, typename C> __device__ __forceinline__ C squared_difference_of(C a, C b) {
    const C d = load(store<T>(a - b));
    return d * d;
}

// Float to integer as nvcc compiles C++ casts: PTX cvt.rzi (truncation;
// out-of-range values saturate) to 32 or 64 bits. NaN gives 0 to 32 bits,
// and 0x8000000000000000 to 64 bits (seen on an H200, sm_90).
__device__ __forceinline__ i32 cvt_s32(float v) { i32 r; asm("cvt.rzi.s32.f32 %0, %1;" : "=r"(r) : "f"(v)); return r; }
__device__ __forceinline__ i32 cvt_s32(double v) { i32 r; asm("cvt.rzi.s32.f64 %0, %1;" : "=r"(r) : "d"(v)); return r; }
__device__ __forceinline__ u32 cvt_u32(float v) { u32 r; asm("cvt.rzi.u32.f32 %0, %1;" : "=r"(r) : "f"(v)); return r; }
__device__ __forceinline__ u32 cvt_u32(double v) { u32 r; asm("cvt.rzi.u32.f64 %0, %1;" : "=r"(r) : "d"(v)); return r; }
__device__ __forceinline__ i64 cvt_s64(float v) { i64 r; asm("cvt.rzi.s64.f32 %0, %1;" : "=l"(r) : "f"(v)); return r; }
__device__ __forceinline__ i64 cvt_s64(double v) { i64 r; asm("cvt.rzi.s64.f64 %0, %1;" : "=l"(r) : "d"(v)); return r; }
__device__ __forceinline__ u64 cvt_u64(float v) { u64 r; asm("cvt.rzi.u64.f32 %0, %1;" : "=l"(r) : "f"(v)); return r; }
__device__ __forceinline__ u64 cvt_u64(double v) { u64 r; asm("cvt.rzi.u64.f64 %0, %1;" : "=l"(r) : "d"(v)); return r; }

// TF's Truncate: zero the low mantissa bits the narrower type cannot hold
// (NaN is kept as is).
__device__ __forceinline__ float zero_low_bits(float v, int bits) {
    return isnan(v) ? v : __int_as_float(__float_as_int(v) & (int)(0xffffffffu << bits));
}
__device__ __forceinline__ double zero_low_bits(double v, int bits) {
    return isnan(v) ? v
                    : __longlong_as_double(__double_as_longlong(v) &
                                           (long long)(0xffffffffffffffffull << bits));
}
"#;

/// The element-wise binary functions (with TF's broadcasting).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BinaryFn {
    /// `x + y`.
    AddV2,
    /// `x - y`.
    Sub,
    /// `x * y`.
    Mul,
    /// `x / y` (floats).
    RealDiv,
    /// `floor(x / y)`.
    FloorDiv,
    /// `x - floor(x / y) * y`.
    FloorMod,
    /// The larger operand (NaN propagates).
    Maximum,
    /// The smaller operand (NaN propagates).
    Minimum,
    /// `x ^ y`.
    Pow,
    /// `(x - y)^2`.
    SquaredDifference,
    /// `x == y`, a `bool`.
    Equal,
    /// `x > y`, a `bool`.
    Greater,
    /// `x && y` on `bool`s.
    LogicalAnd,
    /// `x != y`, a `bool`.
    NotEqual,
    /// `x < y`, a `bool`.
    Less,
    /// `x <= y`, a `bool`.
    LessEqual,
    /// `x >= y`, a `bool`.
    GreaterEqual,
    /// `x || y` on `bool`s.
    LogicalOr,
}

impl BinaryFn {
    /// Every binary function.
    pub const ALL: [BinaryFn; 18] = [
        Self::AddV2,
        Self::Sub,
        Self::Mul,
        Self::RealDiv,
        Self::FloorDiv,
        Self::FloorMod,
        Self::Maximum,
        Self::Minimum,
        Self::Pow,
        Self::SquaredDifference,
        Self::Equal,
        Self::Greater,
        Self::LogicalAnd,
        Self::NotEqual,
        Self::Less,
        Self::LessEqual,
        Self::GreaterEqual,
        Self::LogicalOr,
    ];

    /// The op's name.
    pub fn op_name(self) -> &'static str {
        match self {
            Self::AddV2 => "AddV2",
            Self::Sub => "Sub",
            Self::Mul => "Mul",
            Self::RealDiv => "RealDiv",
            Self::FloorDiv => "FloorDiv",
            Self::FloorMod => "FloorMod",
            Self::Maximum => "Maximum",
            Self::Minimum => "Minimum",
            Self::Pow => "Pow",
            Self::SquaredDifference => "SquaredDifference",
            Self::Equal => "Equal",
            Self::Greater => "Greater",
            Self::LogicalAnd => "LogicalAnd",
            Self::NotEqual => "NotEqual",
            Self::Less => "Less",
            Self::LessEqual => "LessEqual",
            Self::GreaterEqual => "GreaterEqual",
            Self::LogicalOr => "LogicalOr",
        }
    }

    /// Whether the output is `bool` (comparisons) rather than the inputs'
    /// type.
    pub fn bool_output(self) -> bool {
        matches!(
            self,
            Self::Equal
                | Self::NotEqual
                | Self::Greater
                | Self::GreaterEqual
                | Self::Less
                | Self::LessEqual
        )
    }

    /// Whether the op is defined on `bool`s only (no `T` attr).
    pub fn logical(self) -> bool {
        matches!(self, Self::LogicalAnd | Self::LogicalOr)
    }

    /// The function of `a` and `b` (values of the compute type), or `None`
    /// when not computed for this kind of element.
    fn expr(self, kind: Kind) -> Option<String> {
        use Kind::*;
        let s = |e: &str| Some(e.to_owned());
        match (self, kind) {
            (Self::AddV2, Float | Double) => s("a + b"),
            (Self::Sub, Float | Double) => s("a - b"),
            (Self::Mul, Float | Double) => s("a * b"),
            (Self::AddV2, Signed | Unsigned) => s("wrap_add(a, b)"),
            (Self::Sub, Signed | Unsigned) => s("wrap_sub(a, b)"),
            (Self::Mul, Signed | Unsigned) => s("wrap_mul(a, b)"),
            (Self::RealDiv, Float | Double) => s("a / b"),
            (Self::FloorDiv, Float) => s("floorf(load(store<T>(a / b)))"),
            (Self::FloorDiv, Double) => s("floor(a / b)"),
            (Self::FloorDiv, Signed | Unsigned) => s("floor_div_int(a, b)"),
            (Self::FloorMod, Float | Double) => s("floor_fmod(a, b)"),
            (Self::FloorMod, Signed | Unsigned) => s("floor_mod_int(a, b)"),
            (Self::Maximum, Float | Double | Signed | Unsigned) => s("max_nan<T>(a, b)"),
            (Self::Minimum, Float | Double | Signed | Unsigned) => s("min_nan<T>(a, b)"),
            (Self::Pow, Float) => s("powf(a, b)"),
            (Self::Pow, Double) => s("pow(a, b)"),
            (Self::Pow, Signed) => s("pow_int(a, b)"),
            (Self::SquaredDifference, Float | Double) => s("squared_difference_of<T>(a, b)"),
            (Self::SquaredDifference, Signed | Unsigned) => {
                s("wrap_mul(wrap_sub(a, b), wrap_sub(a, b))")
            }
            (Self::Equal, _) => s("a == b"),
            (Self::NotEqual, _) => s("a != b"),
            (Self::Greater, Float | Double | Signed | Unsigned) => s("a > b"),
            (Self::GreaterEqual, Float | Double | Signed | Unsigned) => s("a >= b"),
            (Self::Less, Float | Double | Signed | Unsigned) => s("a < b"),
            (Self::LessEqual, Float | Double | Signed | Unsigned) => s("a <= b"),
            (Self::LogicalAnd, Bool) => s("a && b"),
            (Self::LogicalOr, Bool) => s("a || b"),
            _ => None,
        }
    }
}

/// How an element type computes (the kinds of the unary table's GPU
/// expressions).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// In `float`: `half`, `bfloat16`, `float`.
    Float,
    /// In `double`.
    Double,
    /// Signed integers.
    Signed,
    /// Unsigned integers.
    Unsigned,
    /// `bool`.
    Bool,
}

/// The kind of `dtype`'s elements, or `None` for dtypes the GPU kernels do
/// not handle.
pub fn kind(dtype: DataType) -> Option<Kind> {
    use DataType::*;
    Some(match dtype {
        DtHalf | DtBfloat16 | DtFloat => Kind::Float,
        DtDouble => Kind::Double,
        DtInt8 | DtInt16 | DtInt32 | DtInt64 => Kind::Signed,
        DtUint8 | DtUint16 | DtUint32 | DtUint64 => Kind::Unsigned,
        DtBool => Kind::Bool,
        _ => return None,
    })
}

/// The size in bytes of a dtype's elements on the GPU (`None` for dtypes
/// the GPU kernels do not handle).
pub fn gpu_element_size(dtype: DataType) -> Option<usize> {
    kind(dtype).and(element_size(dtype))
}

/// Elements per thread on the flat paths: 16 bytes of the widest operand.
pub fn vector_width(dtypes: &[DataType]) -> usize {
    let widest = dtypes
        .iter()
        .filter_map(|&d| gpu_element_size(d))
        .max()
        .unwrap_or(1);
    16 / widest
}

/// The error for `what` on a dtype the GPU kernels do not handle.
pub(crate) fn unsupported(what: &str, dtype: DataType) -> KernelError {
    KernelError::unimplemented(format!(
        "{what} has no GPU kernel for {}",
        dtype.type_name()
    ))
}

/// The CUDA C type of `dtype`'s elements, or the error for `what`.
pub(crate) fn c_type(what: &str, dtype: DataType) -> Result<&'static str, KernelError> {
    match (cuda_type(dtype), kind(dtype)) {
        (Some(t), Some(_)) => Ok(t),
        _ => Err(unsupported(what, dtype)),
    }
}

/// The entry points of a binary source.
pub mod binary_entry {
    /// Both operands have the output's shape: `(x, y, z, n)`.
    pub const SAME: &str = "binary_same";
    /// `x` is one element: `(x, y, z, n)`.
    pub const SCALAR_X: &str = "binary_scalar_x";
    /// `y` is one element: `(x, y, z, n)`.
    pub const SCALAR_Y: &str = "binary_scalar_y";
    /// Broadcasting, fewer than 2^31 output elements:
    /// `(x, y, z, n, dims, x_strides, y_strides)`.
    pub const BCAST32: &str = "binary_bcast32";
    /// Broadcasting, any size: same arguments as [`BCAST32`].
    pub const BCAST64: &str = "binary_bcast64";
}

/// The source of binary `op` on `dtype` (entries in [`binary_entry`]);
/// the output may be one of the inputs when it has the output's shape.
pub fn binary_source(op: BinaryFn, dtype: DataType) -> Result<KernelSource, KernelError> {
    let name = op.op_name();
    let t = c_type(name, dtype)?;
    let expr = kind(dtype)
        .and_then(|k| op.expr(k))
        .ok_or_else(|| unsupported(name, dtype))?;
    let (out, ret) = if op.bool_output() {
        ("bool", format!("({expr})"))
    } else {
        ("T", format!("store<T>({expr})"))
    };
    let code = format!(
        r#"{COMMON}
typedef {t} T;
typedef {out} O;
typedef compute_t<T>::type C;
__device__ __forceinline__ O op(T va, T vb) {{
    const C a = load(va);
    const C b = load(vb);
    return {ret};
}}
static constexpr int V = 16 / sizeof(T);
typedef pack<T, V> PT;
typedef pack<O, V> PO;

// MODE 0: same shapes; 1: x is a scalar; 2: y is a scalar.
template <int MODE>
__device__ __forceinline__ void flat(const T* x, const T* y, O* z, index_t n) {{
    T x0 = x[0];
    T y0 = y[0];
    const bool vec = (MODE == 1 || is_aligned(x, sizeof(PT))) &&
                     (MODE == 2 || is_aligned(y, sizeof(PT))) && is_aligned(z, sizeof(PO));
    index_t done = 0;
    if (vec) {{
        const index_t nv = n / V;
        GRID_STRIDE(i, nv) {{
            PT a;
            PT b;
            PO c;
            if constexpr (MODE != 1) a = reinterpret_cast<const PT*>(x)[i];
            if constexpr (MODE != 2) b = reinterpret_cast<const PT*>(y)[i];
#pragma unroll
            for (int k = 0; k < V; ++k) {{
                c.v[k] = op(MODE == 1 ? x0 : a.v[k], MODE == 2 ? y0 : b.v[k]);
            }}
            reinterpret_cast<PO*>(z)[i] = c;
        }}
        done = nv * V;
    }}
    GRID_STRIDE(j, n - done) {{
        const index_t i = done + j;
        z[i] = op(MODE == 1 ? x0 : x[i], MODE == 2 ? y0 : y[i]);
    }}
}}

extern "C" __global__ void binary_same(const T* x, const T* y, O* z, index_t n) {{ flat<0>(x, y, z, n); }}
extern "C" __global__ void binary_scalar_x(const T* x, const T* y, O* z, index_t n) {{ flat<1>(x, y, z, n); }}
extern "C" __global__ void binary_scalar_y(const T* x, const T* y, O* z, index_t n) {{ flat<2>(x, y, z, n); }}

template <typename I>
__device__ __forceinline__ void bcast(const T* x, const T* y, O* z, index_t n,
                                      const shape_arg& dims, const shape_arg& sx,
                                      const shape_arg& sy) {{
    const int rank = (int)dims.rank;
    const I total = (I)n;
    const I step = (I)blockDim.x * (I)gridDim.x;
    for (I i = (I)blockIdx.x * (I)blockDim.x + (I)threadIdx.x; i < total; i += step) {{
        I rem = i;
        I ox = 0;
        I oy = 0;
        for (int d = rank - 1; d > 0; --d) {{
            const I size = (I)dims.d[d];
            const I q = rem / size;
            const I c = rem - q * size;
            ox += c * (I)sx.d[d];
            oy += c * (I)sy.d[d];
            rem = q;
        }}
        ox += rem * (I)sx.d[0];
        oy += rem * (I)sy.d[0];
        z[i] = op(x[ox], y[oy]);
    }}
}}

extern "C" __global__ void binary_bcast32(const T* x, const T* y, O* z, index_t n, shape_arg dims,
                                          shape_arg sx, shape_arg sy) {{
    bcast<unsigned int>(x, y, z, n, dims, sx, sy);
}}
extern "C" __global__ void binary_bcast64(const T* x, const T* y, O* z, index_t n, shape_arg dims,
                                          shape_arg sx, shape_arg sy) {{
    bcast<index_t>(x, y, z, n, dims, sx, sy);
}}
"#
    );
    Ok(KernelSource::new(
        format!("binary/{name}/{}", dtype.type_name()),
        code,
        [
            binary_entry::SAME,
            binary_entry::SCALAR_X,
            binary_entry::SCALAR_Y,
            binary_entry::BCAST32,
            binary_entry::BCAST64,
        ],
    ))
}

/// The mantissa bits TF's `Truncate` zeroes before a cast from `src` to
/// `dst` (`CAST_FUNCTORS` in TF's `cast_op.h`), for the pairs it applies to.
pub fn truncation_bits(src: DataType, dst: DataType) -> Option<u32> {
    use DataType::*;
    // Mantissa widths with the hidden bit: f64 53, f32 24, f16 11, bf16 8.
    Some(match (src, dst) {
        (DtDouble, DtFloat) => 53 - 24,
        (DtDouble, DtHalf) => 53 - 11,
        (DtFloat, DtHalf) => 24 - 11,
        (DtFloat, DtBfloat16) => 24 - 8,
        _ => return None,
    })
}

/// The conversion of `v` (the source's compute type) to `dst`.
fn cast_expr(src: DataType, dst: DataType) -> Option<String> {
    use Kind::*;
    let (sk, dk) = (kind(src)?, kind(dst)?);
    let d = cuda_type(dst)?;
    Some(match dk {
        Bool => "(bool)(v != 0)".to_owned(),
        _ if matches!(dst, DataType::DtHalf | DataType::DtBfloat16) => {
            format!("store<{d}>((float)v)")
        }
        Float | Double => format!("({d})v"),
        Signed | Unsigned if matches!(sk, Float | Double) => {
            let cvt = match dst {
                DataType::DtInt8 | DataType::DtInt16 | DataType::DtInt32 => "cvt_s32",
                DataType::DtUint8 | DataType::DtUint16 | DataType::DtUint32 => "cvt_u32",
                DataType::DtInt64 => "cvt_s64",
                DataType::DtUint64 => "cvt_u64",
                _ => return None,
            };
            format!("({d}){cvt}(v)")
        }
        Signed | Unsigned => format!("({d})v"),
    })
}

/// The source of `Cast` from `src` to `dst` (`truncate`: TF's `Truncate`
/// attr, which matters only for the pairs of [`truncation_bits`]): entry
/// `cast(const S* x, D* y, index_t n)`.
pub fn cast_source(
    src: DataType,
    dst: DataType,
    truncate: bool,
) -> Result<KernelSource, KernelError> {
    let not_supported = || {
        KernelError::unimplemented(format!(
            "Cast {} to {} is not supported",
            src.type_name(),
            dst.type_name()
        ))
    };
    let (s, d) = match (cuda_type(src), cuda_type(dst)) {
        (Some(s), Some(d)) if kind(src).is_some() && kind(dst).is_some() => (s, d),
        _ => return Err(not_supported()),
    };
    let expr = cast_expr(src, dst).ok_or_else(not_supported)?;
    let bits = if truncate {
        truncation_bits(src, dst)
    } else {
        None
    };
    let truncation = match bits {
        Some(b) => format!("v = zero_low_bits(v, {b});"),
        None => String::new(),
    };
    let code = format!(
        r#"{COMMON}
typedef {s} S;
typedef {d} D;
__device__ __forceinline__ D conv(S x) {{
    typename compute_t<S>::type v = load(x);
    {truncation}
    return {expr};
}}
static constexpr int V = 16 / (sizeof(S) > sizeof(D) ? sizeof(S) : sizeof(D));
typedef pack<S, V> PS;
typedef pack<D, V> PD;

extern "C" __global__ void cast(const S* x, D* y, index_t n) {{
    index_t done = 0;
    if (is_aligned(x, sizeof(PS)) && is_aligned(y, sizeof(PD))) {{
        const index_t nv = n / V;
        GRID_STRIDE(i, nv) {{
            const PS a = reinterpret_cast<const PS*>(x)[i];
            PD b;
#pragma unroll
            for (int k = 0; k < V; ++k) b.v[k] = conv(a.v[k]);
            reinterpret_cast<PD*>(y)[i] = b;
        }}
        done = nv * V;
    }}
    GRID_STRIDE(j, n - done) {{ y[done + j] = conv(x[done + j]); }}
}}
"#
    );
    let suffix = if bits.is_some() { "/truncate" } else { "" };
    Ok(KernelSource::new(
        format!("cast/{}/{}{suffix}", src.type_name(), dst.type_name()),
        code,
        ["cast"],
    ))
}

/// The entry points of a ternary source (`ternary_source`: `Select`,
/// `SelectV2`, `ClipByValue`).
pub mod ternary_entry {
    /// The three operands and the output of one shape: `(a, b, c, out, n)`.
    pub const SAME: &str = "ternary_same";
    /// Broadcasting, fewer than 2^31 output elements:
    /// `(a, b, c, out, n, dims, a_strides, b_strides, c_strides)`.
    pub const BCAST32: &str = "ternary_bcast32";
    /// Broadcasting, any size: same arguments as [`BCAST32`].
    pub const BCAST64: &str = "ternary_bcast64";
}

/// An element-wise function of three operands with TF's broadcasting: the
/// source (key `key`, entries in [`ternary_entry`]) of `out[i] = f(a, b,
/// c)` where `f` is `expr`, a CUDA expression of the operands `a`, `b`,
/// `c` (of the C types `types[0..3]`: `TA`, `TB`, `TC`) giving a value of
/// the output's type (`types[3]`: `TO`). `defs` is device code the
/// expression uses.
/// The flat entry moves 16 bytes of the widest operand per step through
/// aligned packs; the output may be an operand of its shape and type, each
/// of whose elements is read before being written, by the same thread.
fn ternary_source(
    key: String,
    [ta, tb, tc, to]: [&str; 4],
    defs: &str,
    expr: &str,
) -> KernelSource {
    let code = format!(
        r#"{COMMON}
typedef {ta} TA;
typedef {tb} TB;
typedef {tc} TC;
typedef {to} TO;
{defs}
__device__ __forceinline__ TO op(TA a, TB b, TC c) {{ return {expr}; }}
template <int P, int Q> struct wider {{ static constexpr int value = P > Q ? P : Q; }};
static constexpr int V =
    16 / wider<wider<sizeof(TA), sizeof(TB)>::value, wider<sizeof(TC), sizeof(TO)>::value>::value;
typedef pack<TA, V> PA;
typedef pack<TB, V> PB;
typedef pack<TC, V> PC;
typedef pack<TO, V> PO;

extern "C" __global__ void ternary_same(const TA* a, const TB* b, const TC* c, TO* out, index_t n) {{
    index_t done = 0;
    if (is_aligned(a, sizeof(PA)) && is_aligned(b, sizeof(PB)) && is_aligned(c, sizeof(PC)) &&
        is_aligned(out, sizeof(PO))) {{
        const index_t nv = n / V;
        GRID_STRIDE(i, nv) {{
            const PA av = reinterpret_cast<const PA*>(a)[i];
            const PB bv = reinterpret_cast<const PB*>(b)[i];
            const PC cv = reinterpret_cast<const PC*>(c)[i];
            PO o;
#pragma unroll
            for (int k = 0; k < V; ++k) o.v[k] = op(av.v[k], bv.v[k], cv.v[k]);
            reinterpret_cast<PO*>(out)[i] = o;
        }}
        done = nv * V;
    }}
    GRID_STRIDE(j, n - done) {{
        const index_t i = done + j;
        out[i] = op(a[i], b[i], c[i]);
    }}
}}

template <typename I>
__device__ __forceinline__ void bcast(const TA* a, const TB* b, const TC* c, TO* out, index_t n,
                                      const shape_arg& dims, const shape_arg& sa,
                                      const shape_arg& sb, const shape_arg& sc) {{
    const int rank = (int)dims.rank;
    const I total = (I)n;
    const I step = (I)blockDim.x * (I)gridDim.x;
    for (I i = (I)blockIdx.x * (I)blockDim.x + (I)threadIdx.x; i < total; i += step) {{
        I rem = i;
        I oa = 0;
        I ob = 0;
        I oc = 0;
        for (int d = rank - 1; d > 0; --d) {{
            const I size = (I)dims.d[d];
            const I q = rem / size;
            const I r = rem - q * size;
            oa += r * (I)sa.d[d];
            ob += r * (I)sb.d[d];
            oc += r * (I)sc.d[d];
            rem = q;
        }}
        oa += rem * (I)sa.d[0];
        ob += rem * (I)sb.d[0];
        oc += rem * (I)sc.d[0];
        out[i] = op(a[oa], b[ob], c[oc]);
    }}
}}

extern "C" __global__ void ternary_bcast32(const TA* a, const TB* b, const TC* c, TO* out, index_t n,
                                           shape_arg dims, shape_arg sa, shape_arg sb, shape_arg sc) {{
    bcast<unsigned int>(a, b, c, out, n, dims, sa, sb, sc);
}}
extern "C" __global__ void ternary_bcast64(const TA* a, const TB* b, const TC* c, TO* out, index_t n,
                                           shape_arg dims, shape_arg sa, shape_arg sb, shape_arg sc) {{
    bcast<index_t>(a, b, c, out, n, dims, sa, sb, sc);
}}
"#
    );
    KernelSource::new(
        key,
        code,
        [
            ternary_entry::SAME,
            ternary_entry::BCAST32,
            ternary_entry::BCAST64,
        ],
    )
}

/// The source of `Select`/`SelectV2` on `dtype` (`ternary_source` of
/// `cond ? t : e`, the condition `bool`); the output may be `t` or `e` when
/// it has the output's shape.
pub fn select_source(dtype: DataType) -> Result<KernelSource, KernelError> {
    let t = c_type("Select", dtype)?;
    Ok(ternary_source(
        format!("select/{}", dtype.type_name()),
        ["bool", t, t, t],
        "",
        "a ? b : c",
    ))
}

/// The source of `ClipByValue` on `dtype` (`ternary_source` of `(t, lo,
/// hi)`): `m = hi < t ? hi : t`, then `m < lo ? lo : m`, compared in the
/// compute type, as Eigen's `cwiseMin(hi).cwiseMax(lo)`
/// and the CPU kernel (a NaN `t` stays NaN, a NaN bound is ignored); the
/// chosen element is returned as it is, bits included. The output may be
/// any operand of its shape.
pub fn clip_source(dtype: DataType) -> Result<KernelSource, KernelError> {
    let t = c_type("ClipByValue", dtype)?;
    if !matches!(
        kind(dtype),
        Some(Kind::Float | Kind::Double | Kind::Signed | Kind::Unsigned)
    ) {
        return Err(unsupported("ClipByValue", dtype));
    }
    Ok(ternary_source(
        format!("clip/{}", dtype.type_name()),
        [t, t, t, t],
        r#"template <typename E> __device__ __forceinline__ E clip_of(E t, E lo, E hi) {
    const E m = load(hi) < load(t) ? hi : t;
    return load(m) < load(lo) ? lo : m;
}"#,
        "clip_of(a, b, c)",
    ))
}

/// The C type of `dtype` and the expression adding two of its elements `a`
/// and `b` (of type `T`) in the element type, as TF's kernels add: integers
/// wrap, `half` and `bfloat16` round after the addition; or the error for
/// `what` on a type without addition.
fn element_add(what: &str, dtype: DataType) -> Result<(&'static str, &'static str), KernelError> {
    let t = c_type(what, dtype)?;
    let add = match kind(dtype) {
        Some(Kind::Float | Kind::Double) => "store<T>(load(a) + load(b))",
        Some(Kind::Signed | Kind::Unsigned) => "wrap_add(a, b)",
        _ => return Err(unsupported(what, dtype)),
    };
    Ok((t, add))
}

/// The source of `Cumsum` on `dtype`: entry `cumsum(const T* x, T* y,
/// index_t outer, index_t len, index_t inner, i32 exclusive, i32 reverse)`
/// scans `[outer, len, inner]` along the middle dimension, one thread per
/// `(outer, inner)` column walking it in order (backward when `reverse`),
/// the running sum in `T` as the CPU kernel keeps it: integers wrap,
/// `half` and `bfloat16` round to `T` after each addition. `exclusive`
/// writes the sum before each element. `y` may be `x`: each element is
/// read before being written, by the same thread.
pub fn cumsum_source(dtype: DataType) -> Result<KernelSource, KernelError> {
    let (t, add) = element_add("Cumsum", dtype)?;
    let code = format!(
        r#"{COMMON}
typedef {t} T;
__device__ __forceinline__ T add(T a, T b) {{ return {add}; }}

extern "C" __global__ void cumsum(const T* x, T* y, index_t outer, index_t len, index_t inner,
                                  i32 exclusive, i32 reverse) {{
    GRID_STRIDE(col, outer * inner) {{
        const index_t o = col / inner;
        const index_t base = o * len * inner + (col - o * inner);
        T acc = store<T>((typename compute_t<T>::type)0);
        for (index_t step = 0; step < len; ++step) {{
            const index_t k = reverse ? len - 1 - step : step;
            const index_t at = base + k * inner;
            const T v = x[at];
            if (exclusive) {{
                y[at] = acc;
                acc = add(acc, v);
            }} else {{
                acc = add(acc, v);
                y[at] = acc;
            }}
        }}
    }}
}}
"#
    );
    Ok(KernelSource::new(
        format!("cumsum/{}", dtype.type_name()),
        code,
        ["cumsum"],
    ))
}

/// Summands one `AddN` launch reads (the `ptr_arg` struct's length).
pub const ADD_N_BATCH: usize = 8;

/// The source of `AddN` on `dtype`: entry `add_n(ptr_arg in, i32 count,
/// i32 accumulate, T* out, index_t n)`, which sets `out` to `in[0] + ... +
/// in[count - 1]`, or adds them to `out` when `accumulate` is nonzero, left
/// to right in the element type (so `half` rounds after each addition).
pub fn add_n_source(dtype: DataType) -> Result<KernelSource, KernelError> {
    let (t, add) = element_add("AddN", dtype)?;
    let code = format!(
        r#"{COMMON}
typedef {t} T;
struct ptr_arg {{ const T* p[{ADD_N_BATCH}]; }};
__device__ __forceinline__ T add(T a, T b) {{ return {add}; }}
static constexpr int V = 16 / sizeof(T);
typedef pack<T, V> P;

extern "C" __global__ void add_n(ptr_arg in, i32 count, i32 accumulate, T* out, index_t n) {{
    bool vec = is_aligned(out, sizeof(P));
    for (int j = 0; j < count; ++j) vec = vec && is_aligned(in.p[j], sizeof(P));
    const int first = accumulate ? 0 : 1;
    index_t done = 0;
    if (vec) {{
        const index_t nv = n / V;
        GRID_STRIDE(i, nv) {{
            P acc = accumulate ? reinterpret_cast<const P*>(out)[i]
                               : reinterpret_cast<const P*>(in.p[0])[i];
            for (int j = first; j < count; ++j) {{
                const P b = reinterpret_cast<const P*>(in.p[j])[i];
#pragma unroll
                for (int k = 0; k < V; ++k) acc.v[k] = add(acc.v[k], b.v[k]);
            }}
            reinterpret_cast<P*>(out)[i] = acc;
        }}
        done = nv * V;
    }}
    GRID_STRIDE(jj, n - done) {{
        const index_t i = done + jj;
        T acc = accumulate ? out[i] : in.p[0][i];
        for (int j = first; j < count; ++j) acc = add(acc, in.p[j][i]);
        out[i] = acc;
    }}
}}
"#
    );
    Ok(KernelSource::new(
        format!("add_n/{}", dtype.type_name()),
        code,
        ["add_n"],
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_name_family_op_and_types() {
        let s = binary_source(BinaryFn::Equal, DataType::DtHalf).unwrap();
        assert_eq!(s.key(), "binary/Equal/half");
        assert!(s.code().contains("typedef bool O;"));
        let s = cast_source(DataType::DtFloat, DataType::DtHalf, true).unwrap();
        assert_eq!(s.key(), "cast/float/half/truncate");
        assert!(s.code().contains("zero_low_bits(v, 13)"));
        let s = cast_source(DataType::DtInt32, DataType::DtHalf, true).unwrap();
        assert_eq!(
            s.key(),
            "cast/int32/half",
            "Truncate only applies to float narrowing"
        );
        assert_eq!(
            select_source(DataType::DtBool).unwrap().key(),
            "select/bool"
        );
        assert_eq!(
            add_n_source(DataType::DtInt64).unwrap().key(),
            "add_n/int64"
        );
        let s = clip_source(DataType::DtBfloat16).unwrap();
        assert_eq!(s.key(), "clip/bfloat16");
        assert!(s.code().contains("typedef bf16_t TA;"));
        assert_eq!(
            cumsum_source(DataType::DtUint16).unwrap().key(),
            "cumsum/uint16"
        );
    }

    #[test]
    fn unsupported_combinations_are_errors() {
        assert!(binary_source(BinaryFn::RealDiv, DataType::DtInt64).is_err());
        assert!(binary_source(BinaryFn::LogicalAnd, DataType::DtFloat).is_err());
        assert!(binary_source(BinaryFn::AddV2, DataType::DtComplex64).is_err());
        let e = cast_source(DataType::DtString, DataType::DtFloat, false).unwrap_err();
        assert!(
            e.to_string()
                .contains("Cast string to float is not supported"),
            "{e}"
        );
        assert!(add_n_source(DataType::DtBool).is_err());
        assert!(clip_source(DataType::DtBool).is_err());
        assert!(cumsum_source(DataType::DtBool).is_err());
        assert!(cumsum_source(DataType::DtComplex64).is_err());
    }

    #[test]
    fn cast_conversions_follow_tf_rules() {
        use DataType::*;
        assert_eq!(cast_expr(DtFloat, DtBool).unwrap(), "(bool)(v != 0)");
        assert_eq!(cast_expr(DtDouble, DtInt8).unwrap(), "(i8)cvt_s32(v)");
        assert_eq!(cast_expr(DtHalf, DtUint16).unwrap(), "(u16)cvt_u32(v)");
        assert_eq!(cast_expr(DtFloat, DtUint64).unwrap(), "(u64)cvt_u64(v)");
        assert_eq!(
            cast_expr(DtInt64, DtHalf).unwrap(),
            "store<f16_t>((float)v)"
        );
        assert_eq!(cast_expr(DtInt64, DtInt8).unwrap(), "(i8)v");
        assert_eq!(cast_expr(DtBool, DtDouble).unwrap(), "(double)v");
    }

    #[test]
    fn vector_width_is_sixteen_bytes_of_the_widest() {
        use DataType::*;
        assert_eq!(vector_width(&[DtFloat]), 4);
        assert_eq!(vector_width(&[DtHalf, DtBool]), 8);
        assert_eq!(vector_width(&[DtDouble, DtHalf]), 2);
        assert_eq!(vector_width(&[DtBool]), 16);
    }
}

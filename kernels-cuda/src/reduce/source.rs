//! CUDA C sources of the reductions: one per (op, dtype) for `Sum`, `Mean`
//! and `Max`, one per (dtype, index type) for `ArgMax`.
//!
//! A reduction sees its input as `[outer, r, inner]` and reduces the middle
//! dimension. Each source defines the op (`op_init`, `op_lift`,
//! `op_combine`, `op_finish` over an accumulator `acc_t`) and then the
//! shared kernels:
//! - `serial`: one thread per output, reducing in order (short reductions;
//!   reads coalesce across `inner`);
//! - `rows` (`inner` = 1): one block per output (or per part of one),
//!   threads striding the row, then warp shuffles and shared memory;
//! - `cols` (`inner` > 1): a block of 32 columns × 8 lanes of the reduced
//!   dimension (coalesced reads), combined in shared memory;
//! - `rows_part`/`cols_part`: the same over `parts` slices of the reduced
//!   dimension, writing accumulators `[outer, parts, inner]`, which
//!   `serial_acc` then finishes (long reductions with few outputs);
//! - `permute`: a strided gather (reduced axes that are not contiguous are
//!   moved last first).
//!
//! Numerics (TF's, as `kernels-cpu`): half and bfloat16 accumulate in
//! float; integer sums wrap; the int32 mean accumulates in int64 and
//! divides with truncation; float means divide in the compute type (the
//! mean of nothing is NaN, 0 for integers); Max propagates NaN (as
//! `kernels-cpu`'s Max and Eigen's NaN-propagating max) and the max of
//! nothing is -inf (the type's minimum for integers). ArgMax follows
//! Eigen's `ArgMaxPairReducer` as `kernels-cpu` does: the first index of the
//! largest value; NaN never wins; a value not above the type's lowest
//! finite value never wins; a row with no winner gives 0. Parallel partial
//! results combine to exactly that answer (larger value, then smaller
//! index).

use registry_core::proto::{DataType, DataTypeExt};

use opreg_cuda::cuda_type;
use registry_core::kernel::KernelSource;

/// The reductions with sources here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReduceOp {
    /// `Sum`.
    Sum,
    /// `Mean`.
    Mean,
    /// `Max`.
    Max,
}

impl ReduceOp {
    /// The op's name.
    pub fn name(self) -> &'static str {
        match self {
            ReduceOp::Sum => "Sum",
            ReduceOp::Mean => "Mean",
            ReduceOp::Max => "Max",
        }
    }
}

/// The dtypes the GPU reductions are registered for (TF's GPU kernels:
/// `TF_CALL_GPU_NUMBER_TYPES`, int32 and int64).
pub const REDUCE_DTYPES: [DataType; 6] = [
    DataType::DtHalf,
    DataType::DtBfloat16,
    DataType::DtFloat,
    DataType::DtDouble,
    DataType::DtInt32,
    DataType::DtInt64,
];

/// The dtypes `ArgMax` is registered for on the GPU.
pub const ARG_MAX_DTYPES: [DataType; 7] = [
    DataType::DtHalf,
    DataType::DtBfloat16,
    DataType::DtFloat,
    DataType::DtDouble,
    DataType::DtInt32,
    DataType::DtInt64,
    DataType::DtBool,
];

/// `ArgMax`'s index types on the GPU.
pub const ARG_MAX_INDEX_DTYPES: [DataType; 2] = [DataType::DtInt32, DataType::DtInt64];

/// Entry point names of the reduction sources.
pub(crate) mod entry {
    /// One thread per output.
    pub(crate) const SERIAL: &str = "serial";
    /// One thread per output, from accumulators.
    pub(crate) const SERIAL_ACC: &str = "serial_acc";
    /// One block per row.
    pub(crate) const ROWS: &str = "rows";
    /// One block per part of a row, to accumulators.
    pub(crate) const ROWS_PART: &str = "rows_part";
    /// One block per 32 columns.
    pub(crate) const COLS: &str = "cols";
    /// One block per part of 32 columns, to accumulators.
    pub(crate) const COLS_PART: &str = "cols_part";
    /// Strided gather.
    pub(crate) const PERMUTE: &str = "permute";
}

/// `C` literals for the lowest value, as a bit pattern where needed.
const F32_NEG_INF: &str = "__int_as_float(0xff800000)";
const F64_NEG_INF: &str = "__longlong_as_double(0xfff0000000000000LL)";
const I32_MIN: &str = "(-2147483647 - 1)";
const I64_MIN: &str = "(-9223372036854775807LL - 1)";

/// Whether `dtype` is a floating-point type.
fn is_float(dtype: DataType) -> bool {
    matches!(
        dtype,
        DataType::DtHalf | DataType::DtBfloat16 | DataType::DtFloat | DataType::DtDouble
    )
}

/// The op definition (`T`, `acc_t`, `op_*`) of `op` on `dtype`, or `None`
/// for a dtype not in [`REDUCE_DTYPES`].
fn op_definition(op: ReduceOp, dtype: DataType) -> Option<String> {
    if !REDUCE_DTYPES.contains(&dtype) {
        return None;
    }
    let t = cuda_type(dtype)?;
    let compute = match dtype {
        DataType::DtHalf | DataType::DtBfloat16 | DataType::DtFloat => "float",
        DataType::DtDouble => "double",
        DataType::DtInt32 => "i32",
        _ => "i64",
    };
    let float = is_float(dtype);
    // Integer addition wraps (through the unsigned type: signed overflow
    // is undefined in C++).
    let add = match compute {
        "i32" => "(i32)((u32)a + (u32)b)",
        "i64" => "(i64)((u64)a + (u64)b)",
        _ => "a + b",
    };
    let (acc, init, combine, finish) = match op {
        ReduceOp::Sum => (compute, "0", add.to_owned(), "store<T>(a)".to_owned()),
        ReduceOp::Mean if float => (
            compute,
            "0",
            add.to_owned(),
            // The sum rounded to T before the division, as TF's Mean of
            // half and bfloat16 (a sum past the type's range is infinite).
            "store<T>(load(store<T>(a)) / (acc_t)count)".to_owned(),
        ),
        ReduceOp::Mean => (
            "i64",
            "0",
            "(i64)((u64)a + (u64)b)".to_owned(),
            "count == 0 ? (T)0 : (T)(a / (i64)count)".to_owned(),
        ),
        ReduceOp::Max => {
            let lowest = match compute {
                "float" => F32_NEG_INF,
                "double" => F64_NEG_INF,
                "i32" => I32_MIN,
                _ => I64_MIN,
            };
            let combine = if float {
                // NaN propagates: a NaN accumulator stays, a NaN element wins.
                "(a != a || a > b) ? a : b"
            } else {
                "a > b ? a : b"
            };
            (
                compute,
                lowest,
                combine.to_owned(),
                "store<T>(a)".to_owned(),
            )
        }
    };
    Some(format!(
        "typedef {t} T;\n\
         typedef {acc} acc_t;\n\
         __device__ __forceinline__ acc_t op_init() {{ return (acc_t)({init}); }}\n\
         __device__ __forceinline__ acc_t op_lift(T x) {{ return (acc_t)load(x); }}\n\
         __device__ __forceinline__ acc_t op_combine(acc_t a, acc_t b) {{ return {combine}; }}\n\
         __device__ __forceinline__ T op_finish(acc_t a, index_t count) {{ return {finish}; }}\n"
    ))
}

/// The strided gather shared by the sources (`permute`).
const PERMUTE: &str = r#"
extern "C" __global__ void permute(const T* __restrict__ x, T* __restrict__ y, index_t n,
                                   shape_arg dims, shape_arg steps) {
    GRID_STRIDE(i, n) {
        index_t rem = i;
        index_t off = 0;
        _Pragma("unroll") for (int k = 7; k >= 0; --k) {
            if (k < dims.rank) {
                const index_t size = dims.d[k];
                const index_t q = rem / size;
                off += (rem - q * size) * steps.d[k];
                rem = q;
            }
        }
        y[i] = x[off];
    }
}
"#;

/// The reduction kernels over an op definition (see the module doc).
const REDUCE_BODY: &str = r#"
template <bool FROM_ACC> struct src_t;
template <> struct src_t<false> {
    typedef T type;
    static __device__ __forceinline__ acc_t lift(T x) { return op_lift(x); }
};
template <> struct src_t<true> {
    typedef acc_t type;
    static __device__ __forceinline__ acc_t lift(acc_t x) { return x; }
};
template <bool TO_ACC> struct dst_t;
template <> struct dst_t<false> {
    typedef T type;
    static __device__ __forceinline__ T put(acc_t a, index_t count) { return op_finish(a, count); }
};
template <> struct dst_t<true> {
    typedef acc_t type;
    static __device__ __forceinline__ acc_t put(acc_t a, index_t) { return a; }
};

__device__ __forceinline__ index_t min_index(index_t a, index_t b) { return a < b ? a : b; }

// One thread per output (o, i): y[o, i] = reduce_k x[o, k, i].
template <bool FROM_ACC, bool TO_ACC>
__device__ __forceinline__ void reduce_serial(const typename src_t<FROM_ACC>::type* __restrict__ x,
                                              typename dst_t<TO_ACC>::type* __restrict__ y,
                                              index_t outer, index_t r, index_t inner,
                                              index_t count) {
    GRID_STRIDE(j, outer * inner) {
        const index_t o = j / inner;
        const index_t i = j - o * inner;
        const typename src_t<FROM_ACC>::type* p = x + o * r * inner + i;
        acc_t acc = op_init();
        for (index_t k = 0; k < r; ++k) {
            acc = op_combine(acc, src_t<FROM_ACC>::lift(p[k * inner]));
        }
        y[j] = dst_t<TO_ACC>::put(acc, count);
    }
}

// Reduces `v` over the block (blockDim.x a multiple of 32, at most 1024);
// the result is valid in thread 0.
__device__ __forceinline__ acc_t block_reduce(acc_t v) {
    __shared__ acc_t warp_results[32];
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
    _Pragma("unroll") for (int off = 16; off > 0; off >>= 1) {
        v = op_combine(v, __shfl_down_sync(0xffffffffu, v, off));
    }
    if (lane == 0) warp_results[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < (int)(blockDim.x >> 5) ? warp_results[lane] : op_init();
        _Pragma("unroll") for (int off = 16; off > 0; off >>= 1) {
            v = op_combine(v, __shfl_down_sync(0xffffffffu, v, off));
        }
    }
    __syncthreads();  // warp_results is reused by the block's next row
    return v;
}

// inner == 1: block b = (o, p) reduces x[o, p*chunk .. min(r, (p+1)*chunk)]
// into y[b] (y is [outer, parts]).
template <bool FROM_ACC, bool TO_ACC>
__device__ __forceinline__ void reduce_rows(const typename src_t<FROM_ACC>::type* __restrict__ x,
                                            typename dst_t<TO_ACC>::type* __restrict__ y,
                                            index_t outer, index_t r, index_t parts,
                                            index_t chunk, index_t count) {
    for (index_t b = blockIdx.x; b < outer * parts; b += gridDim.x) {
        const index_t o = b / parts;
        const index_t k0 = (b - o * parts) * chunk;
        const index_t k1 = min_index(r, k0 + chunk);
        const typename src_t<FROM_ACC>::type* row = x + o * r;
        acc_t acc = op_init();
        for (index_t k = k0 + threadIdx.x; k < k1; k += blockDim.x) {
            acc = op_combine(acc, src_t<FROM_ACC>::lift(row[k]));
        }
        acc = block_reduce(acc);
        if (threadIdx.x == 0) y[b] = dst_t<TO_ACC>::put(acc, count);
    }
}

// inner > 1, blockDim.x == 256: 32 columns (threadIdx % 32) by 8 lanes of
// the reduced dimension (threadIdx / 32); block b = (o, tile, p) writes
// y[o, p, tile*32 + 0..32] (y is [outer, parts, inner]).
template <bool FROM_ACC, bool TO_ACC>
__device__ __forceinline__ void reduce_cols(const typename src_t<FROM_ACC>::type* __restrict__ x,
                                            typename dst_t<TO_ACC>::type* __restrict__ y,
                                            index_t outer, index_t r, index_t inner,
                                            index_t parts, index_t chunk, index_t count) {
    __shared__ acc_t lanes[8][33];
    const int tx = threadIdx.x & 31;
    const int ty = threadIdx.x >> 5;
    const index_t tiles = (inner + 31) / 32;
    for (index_t b = blockIdx.x; b < outer * tiles * parts; b += gridDim.x) {
        const index_t ot = b / parts;
        const index_t p = b - ot * parts;
        const index_t o = ot / tiles;
        const index_t i = (ot - o * tiles) * 32 + tx;
        const index_t k0 = p * chunk;
        const index_t k1 = min_index(r, k0 + chunk);
        acc_t acc = op_init();
        if (i < inner) {
            const typename src_t<FROM_ACC>::type* col = x + o * r * inner + i;
            for (index_t k = k0 + ty; k < k1; k += 8) {
                acc = op_combine(acc, src_t<FROM_ACC>::lift(col[k * inner]));
            }
        }
        lanes[ty][tx] = acc;
        __syncthreads();
        if (ty == 0 && i < inner) {
            acc_t v = lanes[0][tx];
            _Pragma("unroll") for (int s = 1; s < 8; ++s) v = op_combine(v, lanes[s][tx]);
            y[(o * parts + p) * inner + i] = dst_t<TO_ACC>::put(v, count);
        }
        __syncthreads();
    }
}

extern "C" __global__ void serial(const T* x, T* y, index_t outer, index_t r, index_t inner,
                                  index_t count) {
    reduce_serial<false, false>(x, y, outer, r, inner, count);
}
extern "C" __global__ void serial_acc(const acc_t* x, T* y, index_t outer, index_t r,
                                      index_t inner, index_t count) {
    reduce_serial<true, false>(x, y, outer, r, inner, count);
}
extern "C" __global__ void rows(const T* x, T* y, index_t outer, index_t r, index_t parts,
                                index_t chunk, index_t count) {
    reduce_rows<false, false>(x, y, outer, r, parts, chunk, count);
}
extern "C" __global__ void rows_part(const T* x, acc_t* y, index_t outer, index_t r,
                                     index_t parts, index_t chunk, index_t count) {
    reduce_rows<false, true>(x, y, outer, r, parts, chunk, count);
}
extern "C" __global__ void cols(const T* x, T* y, index_t outer, index_t r, index_t inner,
                                index_t parts, index_t chunk, index_t count) {
    reduce_cols<false, false>(x, y, outer, r, inner, parts, chunk, count);
}
extern "C" __global__ void cols_part(const T* x, acc_t* y, index_t outer, index_t r,
                                     index_t inner, index_t parts, index_t chunk, index_t count) {
    reduce_cols<false, true>(x, y, outer, r, inner, parts, chunk, count);
}
"#;

/// The source of `op` on `dtype` (key `reduce/<Op>/<dtype>`), or `None`
/// for a dtype not in [`REDUCE_DTYPES`].
///
/// ```
/// use kernels_cuda::reduce::{ReduceOp, reduce_source};
/// use registry_core::proto::DataType;
/// let s = reduce_source(ReduceOp::Mean, DataType::DtHalf).unwrap();
/// assert_eq!(s.key(), "reduce/Mean/half");
/// assert!(reduce_source(ReduceOp::Sum, DataType::DtBool).is_none());
/// ```
pub fn reduce_source(op: ReduceOp, dtype: DataType) -> Option<KernelSource> {
    let definition = op_definition(op, dtype)?;
    Some(KernelSource::new(
        format!("reduce/{}/{}", op.name(), dtype.type_name()),
        format!("{definition}{REDUCE_BODY}{PERMUTE}"),
        [
            entry::SERIAL,
            entry::SERIAL_ACC,
            entry::ROWS,
            entry::ROWS_PART,
            entry::COLS,
            entry::COLS_PART,
            entry::PERMUTE,
        ],
    ))
}

/// ArgMax's kernels over `T`, its comparison key `cmp_t` (`key(x)`), the
/// key's floor `KEY_FLOOR` and the index type `I` (see the module doc).
const ARG_MAX_BODY: &str = r#"
struct best_t { cmp_t v; index_t i; };  // i < 0: nothing yet

__device__ __forceinline__ best_t best_none() { best_t b; b.v = KEY_FLOOR; b.i = -1; return b; }
__device__ __forceinline__ best_t best_lift(T x, index_t k) {
    best_t b = best_none();
    const cmp_t v = key(x);
    if (v > KEY_FLOOR) { b.v = v; b.i = k; }  // NaN is never greater
    return b;
}
// The larger value, then the smaller index: order-independent, and the
// answer of an in-order scan that keeps the first strictly greater value.
__device__ __forceinline__ best_t best_combine(best_t a, best_t b) {
    if (b.i < 0) return a;
    if (a.i < 0) return b;
    if (b.v > a.v) return b;
    if (a.v > b.v) return a;
    return b.i < a.i ? b : a;
}
__device__ __forceinline__ best_t best_shfl_down(best_t b, int off) {
    best_t o;
    o.v = __shfl_down_sync(0xffffffffu, b.v, off);
    o.i = __shfl_down_sync(0xffffffffu, b.i, off);
    return o;
}
__device__ __forceinline__ I best_index(best_t b) { return (I)(b.i < 0 ? 0 : b.i); }

extern "C" __global__ void serial(const T* __restrict__ x, I* __restrict__ y, index_t outer,
                                  index_t r, index_t inner) {
    GRID_STRIDE(j, outer * inner) {
        const index_t o = j / inner;
        const index_t i = j - o * inner;
        const T* p = x + o * r * inner + i;
        best_t best = best_none();
        for (index_t k = 0; k < r; ++k) best = best_combine(best, best_lift(p[k * inner], k));
        y[j] = best_index(best);
    }
}

extern "C" __global__ void rows(const T* __restrict__ x, I* __restrict__ y, index_t outer,
                                index_t r) {
    __shared__ best_t warp_results[32];
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
    for (index_t o = blockIdx.x; o < outer; o += gridDim.x) {
        const T* row = x + o * r;
        best_t best = best_none();
        for (index_t k = threadIdx.x; k < r; k += blockDim.x) {
            best = best_combine(best, best_lift(row[k], k));
        }
        _Pragma("unroll") for (int off = 16; off > 0; off >>= 1) {
            best = best_combine(best, best_shfl_down(best, off));
        }
        if (lane == 0) warp_results[warp] = best;
        __syncthreads();
        if (warp == 0) {
            best = lane < (int)(blockDim.x >> 5) ? warp_results[lane] : best_none();
            _Pragma("unroll") for (int off = 16; off > 0; off >>= 1) {
                best = best_combine(best, best_shfl_down(best, off));
            }
            if (lane == 0) y[o] = best_index(best);
        }
        __syncthreads();
    }
}

extern "C" __global__ void cols(const T* __restrict__ x, I* __restrict__ y, index_t outer,
                                index_t r, index_t inner) {
    __shared__ best_t lanes[8][33];
    const int tx = threadIdx.x & 31;
    const int ty = threadIdx.x >> 5;
    const index_t tiles = (inner + 31) / 32;
    for (index_t b = blockIdx.x; b < outer * tiles; b += gridDim.x) {
        const index_t o = b / tiles;
        const index_t i = (b - o * tiles) * 32 + tx;
        best_t best = best_none();
        if (i < inner) {
            const T* col = x + o * r * inner + i;
            for (index_t k = ty; k < r; k += 8) best = best_combine(best, best_lift(col[k * inner], k));
        }
        lanes[ty][tx] = best;
        __syncthreads();
        if (ty == 0 && i < inner) {
            best_t v = lanes[0][tx];
            _Pragma("unroll") for (int s = 1; s < 8; ++s) v = best_combine(v, lanes[s][tx]);
            y[o * inner + i] = best_index(v);
        }
        __syncthreads();
    }
}
"#;

/// `ArgMax`'s source for `dtype` with `index` outputs (key
/// `reduce/ArgMax/<dtype>/<index>`), or `None` outside
/// [`ARG_MAX_DTYPES`] × [`ARG_MAX_INDEX_DTYPES`].
///
/// ```
/// use kernels_cuda::reduce::arg_max_source;
/// use registry_core::proto::DataType;
/// let s = arg_max_source(DataType::DtFloat, DataType::DtInt64).unwrap();
/// assert_eq!(s.key(), "reduce/ArgMax/float/int64");
/// ```
pub fn arg_max_source(dtype: DataType, index: DataType) -> Option<KernelSource> {
    if !ARG_MAX_DTYPES.contains(&dtype) || !ARG_MAX_INDEX_DTYPES.contains(&index) {
        return None;
    }
    let t = cuda_type(dtype)?;
    let i = cuda_type(index)?;
    // Eigen's starting value: the lowest finite value of the type.
    let (cmp_t, key, floor) = match dtype {
        DataType::DtHalf => ("float", "load(x)", "-65504.0f"),
        DataType::DtBfloat16 => ("float", "load(x)", "__int_as_float(0xff7f0000)"),
        DataType::DtFloat => ("float", "x", "__int_as_float(0xff7fffff)"),
        DataType::DtDouble => ("double", "x", "__longlong_as_double(0xffefffffffffffffLL)"),
        DataType::DtInt32 => ("i32", "x", I32_MIN),
        DataType::DtInt64 => ("i64", "x", I64_MIN),
        _ => ("i32", "(i32)x", "0"),
    };
    let code = format!(
        "typedef {t} T;\n\
         typedef {i} I;\n\
         typedef {cmp_t} cmp_t;\n\
         #define KEY_FLOOR ((cmp_t)({floor}))\n\
         __device__ __forceinline__ cmp_t key(T x) {{ return {key}; }}\n\
         {ARG_MAX_BODY}"
    );
    Some(KernelSource::new(
        format!("reduce/ArgMax/{}/{}", dtype.type_name(), index.type_name()),
        code,
        [entry::SERIAL, entry::ROWS, entry::COLS],
    ))
}

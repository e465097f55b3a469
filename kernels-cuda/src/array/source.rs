//! The CUDA C source of the data-movement kernels: one source per element
//! size (1, 2, 4, 8 or 16 bytes), whatever the dtype, since these kernels
//! only move elements. `bool` moves as a 1-byte unit (its bytes stay 0 or
//! 1), `complex128` as a 16-byte one.
//!
//! Entry points (`U` is the unit, `index_t` a 64-bit index):
//! - `strided_copy(x, y, n, base, dims, steps)`: `y[i] = x[base + Σ idx_d · steps_d]`
//!   where `idx` is `i` in row-major order over `dims` (steps of any sign);
//!   `Transpose`, `Slice`, `StridedSlice`, `Einsum`'s layouts.
//! - `strided_scatter(x, y, n, base, dims, steps)`: the converse, `y[base +
//!   Σ idx_d · steps_d] = x[i]` (distinct addresses); `Einsum`'s repeated
//!   output labels (a diagonal of a zero output).
//! - `tile_copy(x, y, n, out_dims, in_dims)`: `y[i] = x[idx mod in_dims]`; `Tile`.
//! - `pad_copy(x, y, n, out_dims, in_dims, before)`: the input inside its box,
//!   zero bytes around it; `Pad`.
//! - `concat_copy(x, y, n, cols, out_cols, offset)`: input `[rows, cols]` into
//!   columns `offset..offset + cols` of `y` `[rows, out_cols]`; `ConcatV2`, `Pack`.
//! - `gather_i32`/`gather_i64(params, indices, y, n, per_batch, outer, limit, inner)`:
//!   `GatherV2` (an index outside `[0, limit)` gives zero bytes, as TF's GPU kernel).
//! - `one_hot_u8`/`one_hot_i32`/`one_hot_i64(indices, on, off, y, n, depth, suffix)`:
//!   `OneHot`.

use registry_core::kernel::KernelSource;

/// The element sizes a [`move_source`] exists for.
pub const UNIT_SIZES: [usize; 5] = [1, 2, 4, 8, 16];

/// Entry point names.
pub(crate) mod entry {
    /// See the module doc.
    pub(crate) const STRIDED: &str = "strided_copy";
    /// See the module doc.
    pub(crate) const SCATTER: &str = "strided_scatter";
    /// See the module doc.
    pub(crate) const TILE: &str = "tile_copy";
    /// See the module doc.
    pub(crate) const PAD: &str = "pad_copy";
    /// See the module doc.
    pub(crate) const CONCAT: &str = "concat_copy";
    /// See the module doc.
    pub(crate) const GATHER_I32: &str = "gather_i32";
    /// See the module doc.
    pub(crate) const GATHER_I64: &str = "gather_i64";
    /// See the module doc.
    pub(crate) const ONE_HOT_U8: &str = "one_hot_u8";
    /// See the module doc.
    pub(crate) const ONE_HOT_I32: &str = "one_hot_i32";
    /// See the module doc.
    pub(crate) const ONE_HOT_I64: &str = "one_hot_i64";
    /// Every entry point.
    pub(crate) const ALL: [&str; 10] = [
        STRIDED,
        SCATTER,
        TILE,
        PAD,
        CONCAT,
        GATHER_I32,
        GATHER_I64,
        ONE_HOT_U8,
        ONE_HOT_I32,
        ONE_HOT_I64,
    ];
}

/// The C type moved for elements of `size` bytes.
fn unit_type(size: usize) -> Option<&'static str> {
    Some(match size {
        1 => "u8",
        2 => "u16",
        4 => "u32",
        8 => "u64",
        16 => "u128_t",
        _ => return None,
    })
}

const BODY: &str = r#"
// 16-byte elements (complex128) as two 8-byte words: 8-byte alignment is
// all a tensor buffer is guaranteed here.
struct __align__(8) u128_t { u64 lo; u64 hi; };

// Splits `i` row-major over `dims` (at most 8 of them); the loop is
// unrolled so that the shape_arg entries stay in parameter space.
#define FOR_EACH_DIM_INNER_FIRST(k, dims) \
    _Pragma("unroll") for (int k = 7; k >= 0; --k) if (k < (dims).rank)

// base + Σ idx_d · steps_d for `i` split row-major over `dims`.
__device__ __forceinline__ index_t strided_offset(index_t i, index_t base, const shape_arg& dims,
                                                  const shape_arg& steps) {
    index_t rem = i;
    index_t off = base;
    FOR_EACH_DIM_INNER_FIRST(k, dims) {
        const index_t size = dims.d[k];
        const index_t q = rem / size;
        off += (rem - q * size) * steps.d[k];
        rem = q;
    }
    return off;
}

extern "C" __global__ void strided_copy(const U* __restrict__ x, U* __restrict__ y, index_t n,
                                        index_t base, shape_arg dims, shape_arg steps) {
    GRID_STRIDE(i, n) { y[i] = x[strided_offset(i, base, dims, steps)]; }
}

extern "C" __global__ void strided_scatter(const U* __restrict__ x, U* __restrict__ y, index_t n,
                                           index_t base, shape_arg dims, shape_arg steps) {
    GRID_STRIDE(i, n) { y[strided_offset(i, base, dims, steps)] = x[i]; }
}

extern "C" __global__ void tile_copy(const U* __restrict__ x, U* __restrict__ y, index_t n,
                                     shape_arg out_dims, shape_arg in_dims) {
    GRID_STRIDE(i, n) {
        index_t rem = i;
        index_t off = 0;
        index_t stride = 1;
        FOR_EACH_DIM_INNER_FIRST(k, out_dims) {
            const index_t size = out_dims.d[k];
            const index_t q = rem / size;
            off += ((rem - q * size) % in_dims.d[k]) * stride;
            stride *= in_dims.d[k];
            rem = q;
        }
        y[i] = x[off];
    }
}

extern "C" __global__ void pad_copy(const U* __restrict__ x, U* __restrict__ y, index_t n,
                                    shape_arg out_dims, shape_arg in_dims, shape_arg before) {
    GRID_STRIDE(i, n) {
        index_t rem = i;
        index_t off = 0;
        index_t stride = 1;
        bool inside = true;
        FOR_EACH_DIM_INNER_FIRST(k, out_dims) {
            const index_t size = out_dims.d[k];
            const index_t q = rem / size;
            const index_t j = (rem - q * size) - before.d[k];
            inside = inside && j >= 0 && j < in_dims.d[k];
            off += j * stride;
            stride *= in_dims.d[k];
            rem = q;
        }
        y[i] = inside ? x[off] : U();
    }
}

extern "C" __global__ void concat_copy(const U* __restrict__ x, U* __restrict__ y, index_t n,
                                       index_t cols, index_t out_cols, index_t offset) {
    GRID_STRIDE(i, n) {
        const index_t r = i / cols;
        y[r * out_cols + offset + (i - r * cols)] = x[i];
    }
}

// y[b, o, m, k] = params[b, o, indices[b, m], k], zero when the index is
// outside [0, limit) (TF's GPU gather does the same: it cannot report it).
template <typename I>
__device__ __forceinline__ void gather(const U* __restrict__ params, const I* __restrict__ indices,
                                       U* __restrict__ y, index_t n, index_t per_batch,
                                       index_t outer, index_t limit, index_t inner) {
    GRID_STRIDE(i, n) {
        const index_t row = i / inner;
        const index_t k = i - row * inner;
        const index_t bo = row / per_batch;  // b * outer + o
        const index_t m = row - bo * per_batch;
        const index_t b = bo / outer;
        const index_t idx = (index_t)indices[b * per_batch + m];
        y[i] = (idx >= 0 && idx < limit) ? params[(bo * limit + idx) * inner + k] : U();
    }
}

extern "C" __global__ void gather_i32(const U* params, const i32* indices, U* y, index_t n,
                                      index_t per_batch, index_t outer, index_t limit,
                                      index_t inner) {
    gather<i32>(params, indices, y, n, per_batch, outer, limit, inner);
}

extern "C" __global__ void gather_i64(const U* params, const i64* indices, U* y, index_t n,
                                      index_t per_batch, index_t outer, index_t limit,
                                      index_t inner) {
    gather<i64>(params, indices, y, n, per_batch, outer, limit, inner);
}

// y[p, d, s] = indices[p, s] == d ? *on : *off.
template <typename I>
__device__ __forceinline__ void one_hot(const I* __restrict__ indices, const U* __restrict__ on,
                                        const U* __restrict__ off, U* __restrict__ y, index_t n,
                                        index_t depth, index_t suffix) {
    const U on_v = *on;
    const U off_v = *off;
    GRID_STRIDE(i, n) {
        const index_t pd = i / suffix;
        const index_t s = i - pd * suffix;
        const index_t p = pd / depth;
        const index_t d = pd - p * depth;
        y[i] = ((index_t)indices[p * suffix + s] == d) ? on_v : off_v;
    }
}

extern "C" __global__ void one_hot_u8(const u8* indices, const U* on, const U* off, U* y,
                                      index_t n, index_t depth, index_t suffix) {
    one_hot<u8>(indices, on, off, y, n, depth, suffix);
}

extern "C" __global__ void one_hot_i32(const i32* indices, const U* on, const U* off, U* y,
                                       index_t n, index_t depth, index_t suffix) {
    one_hot<i32>(indices, on, off, y, n, depth, suffix);
}

extern "C" __global__ void one_hot_i64(const i64* indices, const U* on, const U* off, U* y,
                                       index_t n, index_t depth, index_t suffix) {
    one_hot<i64>(indices, on, off, y, n, depth, suffix);
}
"#;

/// The data-movement source for elements of `size` bytes (`None` for a
/// size not in [`UNIT_SIZES`]). Its key is `array/move/<unit>`.
///
/// ```
/// let s = kernels_cuda::array::move_source(4).unwrap();
/// assert_eq!(s.key(), "array/move/u32");
/// assert!(s.entries().any(|e| e == "strided_copy"));
/// assert!(kernels_cuda::array::move_source(3).is_none());
/// ```
pub fn move_source(size: usize) -> Option<KernelSource> {
    let unit = unit_type(size)?;
    // `U` must name the 16-byte struct, which the body defines first.
    let code = if size == 16 {
        BODY.replacen(
            "struct __align__(8) u128_t { u64 lo; u64 hi; };",
            "struct __align__(8) u128_t { u64 lo; u64 hi; };\ntypedef u128_t U;",
            1,
        )
    } else {
        format!("typedef {unit} U;\n{BODY}")
    };
    Some(KernelSource::new(
        format!("array/move/{unit}"),
        code,
        entry::ALL,
    ))
}

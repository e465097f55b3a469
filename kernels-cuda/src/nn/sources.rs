//! CUDA C sources of the nn kernels, one per (op, dtype), compiled with
//! NVRTC after the [`PRELUDE`](opreg_cuda::PRELUDE). Each starts with
//! `typedef <element> T; typedef compute_t<T>::type C;` and then the op's
//! kernels, written once for every element type.

use registry_core::kernel::{KernelError, KernelRegistration};
use registry_core::proto::DataType;

use opreg_cuda::cuda_type;
use registry_core::kernel::KernelSource;

/// Threads per block of the kernels that reduce within a block (Softmax
/// rows, batch-norm channels); the sources assume exactly this many.
pub const REDUCE_BLOCK: u32 = 256;

/// The element type's C name, or an error for dtypes the GPU kernels do not
/// handle.
fn element(op: &str, dtype: DataType) -> Result<&'static str, KernelError> {
    cuda_type(dtype)
        .ok_or_else(|| KernelError::unimplemented(format!("{op} has no GPU kernel for {dtype:?}")))
}

/// The common head: the element and compute types.
fn head(ctype: &str) -> String {
    format!("typedef {ctype} T;\ntypedef compute_t<T>::type C;\n")
}

fn is_float(dtype: DataType) -> bool {
    matches!(
        dtype,
        DataType::DtHalf | DataType::DtBfloat16 | DataType::DtFloat | DataType::DtDouble
    )
}

/// The unsigned type integers wrap through.
fn unsigned_of(dtype: DataType) -> Option<&'static str> {
    use DataType::*;
    Some(match dtype {
        DtInt8 | DtUint8 => "u8",
        DtInt16 | DtUint16 => "u16",
        DtInt32 | DtUint32 => "u32",
        DtInt64 | DtUint64 => "u64",
        _ => return None,
    })
}

/// `BiasAdd`: entry `bias_add(const T* x, const T* bias, T* y, index_t n,
/// index_t channels, index_t inner)`: `y[i] = x[i] + bias[(i / inner) %
/// channels]`; integers wrap, half floats add in `float` and round once.
pub fn bias_add(dtype: DataType) -> Result<KernelSource, KernelError> {
    let ctype = element("BiasAdd", dtype)?;
    let add = if is_float(dtype) {
        "store<T>(load(a) + load(b))".to_owned()
    } else {
        let u = unsigned_of(dtype).ok_or_else(|| {
            KernelError::unimplemented(format!("BiasAdd has no GPU kernel for {dtype:?}"))
        })?;
        format!("(T)(({u})a + ({u})b)")
    };
    let code = format!(
        r#"{head}
__device__ __forceinline__ T add(T a, T b) {{ return {add}; }}

extern "C" __global__ void bias_add(const T* __restrict__ x, const T* __restrict__ bias,
                                    T* __restrict__ y, index_t n, index_t channels, index_t inner) {{
    GRID_STRIDE(i, n) {{
        y[i] = add(x[i], bias[(i / inner) % channels]);
    }}
}}
"#,
        head = head(ctype)
    );
    Ok(KernelSource::new(
        format!("nn/BiasAdd/{ctype}"),
        code,
        ["bias_add"],
    ))
}

/// `LeakyRelu`: entry `leaky_relu(const T* x, T* y, index_t n, float
/// alpha)` (`x` may equal `y`): `x > 0 ? x : x * alpha`, with `alpha`
/// rounded to T first and the product rounded once (TF's `LeakyReluOp`).
pub fn leaky_relu(dtype: DataType) -> Result<KernelSource, KernelError> {
    if !is_float(dtype) {
        return Err(KernelError::unimplemented(format!(
            "LeakyRelu has no GPU kernel for {dtype:?}"
        )));
    }
    let ctype = element("LeakyRelu", dtype)?;
    let code = format!(
        r#"{head}
extern "C" __global__ void leaky_relu(const T* x, T* y, index_t n, float alpha) {{
    const C a = load(store<T>((C)alpha));
    GRID_STRIDE(i, n) {{
        const T v = x[i];
        const C c = load(v);
        y[i] = c > (C)0 ? v : store<T>(c * a);
    }}
}}
"#,
        head = head(ctype)
    );
    Ok(KernelSource::new(
        format!("nn/LeakyRelu/{ctype}"),
        code,
        ["leaky_relu"],
    ))
}

/// `-inf` of the compute type (`float` or `double`).
fn neg_inf(dtype: DataType) -> &'static str {
    if dtype == DataType::DtDouble {
        "__longlong_as_double(0xfff0000000000000LL)"
    } else {
        "__int_as_float(0xff800000)"
    }
}

/// `Softmax`: entry `softmax(const T* x, T* y, index_t rows, index_t
/// classes)`, one block of [`REDUCE_BLOCK`] threads per row (grid-strided
/// over rows): `exp(x - max) * (1 / sum(exp(x - max)))` in `float`
/// (`double` for double), a NaN anywhere in a row making the max NaN.
pub fn softmax(dtype: DataType) -> Result<KernelSource, KernelError> {
    softmax_of("Softmax", dtype)
}

/// `LogSoftmax`: [`softmax`]'s entry and reductions, writing
/// `(x - max) - log(sum(exp(x - max)))` (TF's `SoftmaxEigenImpl` with
/// `log = true`, and the CPU kernel).
pub fn log_softmax(dtype: DataType) -> Result<KernelSource, KernelError> {
    softmax_of("LogSoftmax", dtype)
}

/// The source of `Softmax` or `LogSoftmax` (`op`) on `dtype`.
fn softmax_of(op: &str, dtype: DataType) -> Result<KernelSource, KernelError> {
    if !is_float(dtype) {
        return Err(KernelError::unimplemented(format!(
            "{op} has no GPU kernel for {dtype:?}"
        )));
    }
    let ctype = element(op, dtype)?;
    let finish = if op == "LogSoftmax" {
        "const C log_sum = log_c(s);
        for (index_t j = threadIdx.x; j < classes; j += BLOCK) {
            yr[j] = store<T>((load(xr[j]) - m) - log_sum);
        }"
    } else {
        "const C inv = (C)1 / s;
        for (index_t j = threadIdx.x; j < classes; j += BLOCK) {
            yr[j] = store<T>(exp_c(load(xr[j]) - m) * inv);
        }"
    };
    let code = format!(
        r#"{head}
#define BLOCK {block}

__device__ __forceinline__ float exp_c(float v) {{ return expf(v); }}
__device__ __forceinline__ double exp_c(double v) {{ return exp(v); }}
__device__ __forceinline__ float log_c(float v) {{ return logf(v); }}
__device__ __forceinline__ double log_c(double v) {{ return log(v); }}

// max that lets NaN win (as the CPU kernel's fold).
__device__ __forceinline__ C nan_max(C m, C v) {{ return (v > m || v != v) ? v : m; }}

__device__ C block_max(C v, C* buf) {{
    buf[threadIdx.x] = v;
    __syncthreads();
    for (int s = BLOCK / 2; s > 0; s >>= 1) {{
        if (threadIdx.x < s) buf[threadIdx.x] = nan_max(buf[threadIdx.x], buf[threadIdx.x + s]);
        __syncthreads();
    }}
    C r = buf[0];
    __syncthreads();
    return r;
}}

__device__ C block_sum(C v, C* buf) {{
    buf[threadIdx.x] = v;
    __syncthreads();
    for (int s = BLOCK / 2; s > 0; s >>= 1) {{
        if (threadIdx.x < s) buf[threadIdx.x] += buf[threadIdx.x + s];
        __syncthreads();
    }}
    C r = buf[0];
    __syncthreads();
    return r;
}}

extern "C" __global__ void softmax(const T* __restrict__ x, T* __restrict__ y, index_t rows,
                                   index_t classes) {{
    __shared__ C buf[BLOCK];
    for (index_t row = blockIdx.x; row < rows; row += gridDim.x) {{
        const T* xr = x + row * classes;
        T* yr = y + row * classes;
        C m = {neg_inf};
        for (index_t j = threadIdx.x; j < classes; j += BLOCK) m = nan_max(m, load(xr[j]));
        m = block_max(m, buf);
        C s = (C)0;
        for (index_t j = threadIdx.x; j < classes; j += BLOCK) s += exp_c(load(xr[j]) - m);
        s = block_sum(s, buf);
        {finish}
    }}
}}
"#,
        head = head(ctype),
        block = REDUCE_BLOCK,
        neg_inf = neg_inf(dtype),
    );
    Ok(KernelSource::new(
        format!("nn/{op}/{ctype}"),
        code,
        ["softmax"],
    ))
}

/// The most negative finite value of `dtype` as a C expression of type `T`
/// (TF initialises max pooling with `NumTraits<T>::lowest()`).
fn lowest(dtype: DataType) -> Option<&'static str> {
    use DataType::*;
    Some(match dtype {
        DtHalf => "f16_t{(unsigned short)0xfbffu}",
        DtBfloat16 => "bf16_t{(unsigned short)0xff7fu}",
        DtFloat => "-3.40282346638528859811704183484516925e+38f",
        DtDouble => "-1.79769313486231570814527423731704357e+308",
        DtInt8 => "(i8)(-128)",
        DtInt16 => "(i16)(-32768)",
        DtInt32 => "(i32)(-2147483647 - 1)",
        DtInt64 => "(i64)(-9223372036854775807LL - 1)",
        DtUint8 | DtUint16 | DtUint32 | DtUint64 => "(T)0",
        _ => return None,
    })
}

/// `MaxPool`: entry `max_pool(const T* x, T* y, index_t n, pool_geometry
/// g)` with `g` laid out as [`PoolGeometryArg`](super::PoolGeometryArg):
/// each output is the maximum of its window (clipped to the input),
/// starting from the lowest finite value; NaN never wins (`v > best`), as
/// TF's GPU kernel without `TF_ENABLE_MAXPOOL_NANPROP`.
pub fn max_pool(dtype: DataType) -> Result<KernelSource, KernelError> {
    let ctype = element("MaxPool", dtype)?;
    let lowest = lowest(dtype).ok_or_else(|| {
        KernelError::unimplemented(format!("MaxPool has no GPU kernel for {dtype:?}"))
    })?;
    let code = format!(
        r#"{head}
struct pool_geometry {{
    index_t batch, in_rows, in_cols, depth, out_rows, out_cols;
    index_t window_rows, window_cols, stride_rows, stride_cols, pad_top, pad_left;
    index_t nchw;
}};

extern "C" __global__ void max_pool(const T* __restrict__ x, T* __restrict__ y, index_t n,
                                    pool_geometry g) {{
    GRID_STRIDE(i, n) {{
        index_t b, c, oh, ow, r;
        if (g.nchw) {{
            ow = i % g.out_cols; r = i / g.out_cols;
            oh = r % g.out_rows; r /= g.out_rows;
            c = r % g.depth; b = r / g.depth;
        }} else {{
            c = i % g.depth; r = i / g.depth;
            ow = r % g.out_cols; r /= g.out_cols;
            oh = r % g.out_rows; b = r / g.out_rows;
        }}
        index_t h0 = oh * g.stride_rows - g.pad_top;
        index_t w0 = ow * g.stride_cols - g.pad_left;
        index_t h1 = h0 + g.window_rows < g.in_rows ? h0 + g.window_rows : g.in_rows;
        index_t w1 = w0 + g.window_cols < g.in_cols ? w0 + g.window_cols : g.in_cols;
        if (h0 < 0) h0 = 0;
        if (w0 < 0) w0 = 0;
        T best = {lowest};
        C best_c = load(best);
        for (index_t h = h0; h < h1; ++h) {{
            for (index_t w = w0; w < w1; ++w) {{
                index_t at = g.nchw ? ((b * g.depth + c) * g.in_rows + h) * g.in_cols + w
                                    : ((b * g.in_rows + h) * g.in_cols + w) * g.depth + c;
                T v = x[at];
                C vc = load(v);
                if (vc > best_c) {{
                    best = v;
                    best_c = vc;
                }}
            }}
        }}
        y[i] = best;
    }}
}}
"#,
        head = head(ctype)
    );
    Ok(KernelSource::new(
        format!("nn/MaxPool/{ctype}"),
        code,
        ["max_pool"],
    ))
}

/// `FusedBatchNormV3` (`U = float`): entries
///
/// - `bn_moments(const T* x, index_t outer, index_t channels, index_t
///   inner, const float* old_mean, const float* old_var, float factor,
///   float adjust, int blend, float* batch_mean, float* batch_var, float*
///   saved_mean, float* saved_var)`: one block of [`REDUCE_BLOCK`] threads
///   per channel (grid-strided), two passes summed in `double` as the CPU
///   kernel; writes the running moments (blended when `blend`, the
///   variance Bessel-corrected by `adjust`) and the batch mean and biased
///   variance;
/// - `bn_normalize(const T* x, T* y, index_t n, index_t channels, index_t
///   inner, const float* mean, const float* var, const float* scale, const
///   float* offset, float epsilon)`: `y = (x - mean) * (1 / sqrt(var +
///   epsilon) * scale) + offset`.
///
/// `x` is seen as `[outer, channels, inner]` (channels last: `inner = 1`).
pub fn batch_norm(dtype: DataType) -> Result<KernelSource, KernelError> {
    if !matches!(
        dtype,
        DataType::DtHalf | DataType::DtBfloat16 | DataType::DtFloat
    ) {
        return Err(KernelError::unimplemented(format!(
            "FusedBatchNormV3 has no GPU kernel for {dtype:?}"
        )));
    }
    let ctype = element("FusedBatchNormV3", dtype)?;
    let code = format!(
        r#"{head}
#define BLOCK {block}

__device__ double block_sum(double v, double* buf) {{
    buf[threadIdx.x] = v;
    __syncthreads();
    for (int s = BLOCK / 2; s > 0; s >>= 1) {{
        if (threadIdx.x < s) buf[threadIdx.x] += buf[threadIdx.x + s];
        __syncthreads();
    }}
    double r = buf[0];
    __syncthreads();
    return r;
}}

extern "C" __global__ void bn_moments(const T* __restrict__ x, index_t outer, index_t channels,
                                      index_t inner, const float* old_mean, const float* old_var,
                                      float factor, float adjust, int blend, float* batch_mean,
                                      float* batch_var, float* saved_mean, float* saved_var) {{
    __shared__ double buf[BLOCK];
    const index_t rest = outer * inner;
    const float inv = 1.0f / (float)rest;
    for (index_t c = blockIdx.x; c < channels; c += gridDim.x) {{
        double s = 0.0;
        for (index_t r = threadIdx.x; r < rest; r += BLOCK) {{
            index_t o = r / inner;
            index_t k = r - o * inner;
            s += (double)load(x[(o * channels + c) * inner + k]);
        }}
        s = block_sum(s, buf);
        const float mean = (float)s * inv;
        double q = 0.0;
        for (index_t r = threadIdx.x; r < rest; r += BLOCK) {{
            index_t o = r / inner;
            index_t k = r - o * inner;
            float d = (float)load(x[(o * channels + c) * inner + k]) - mean;
            q += (double)(d * d);
        }}
        q = block_sum(q, buf);
        const float var = (float)q * inv;
        if (threadIdx.x == 0) {{
            saved_mean[c] = mean;
            saved_var[c] = var;
            if (blend) {{
                batch_mean[c] = (1.0f - factor) * old_mean[c] + factor * mean;
                batch_var[c] = (1.0f - factor) * old_var[c] + (factor * adjust) * var;
            }} else {{
                batch_mean[c] = mean;
                batch_var[c] = var * adjust;
            }}
        }}
    }}
}}

extern "C" __global__ void bn_normalize(const T* __restrict__ x, T* __restrict__ y, index_t n,
                                        index_t channels, index_t inner, const float* mean,
                                        const float* var, const float* scale,
                                        const float* offset, float epsilon) {{
    GRID_STRIDE(i, n) {{
        index_t c = (i / inner) % channels;
        float f = (1.0f / sqrtf(var[c] + epsilon)) * scale[c];
        y[i] = store<T>(((float)load(x[i]) - mean[c]) * f + offset[c]);
    }}
}}
"#,
        head = head(ctype),
        block = REDUCE_BLOCK,
    );
    Ok(KernelSource::new(
        format!("nn/FusedBatchNormV3/{ctype}"),
        code,
        ["bn_moments", "bn_normalize"],
    ))
}

/// `Conv2D`'s layout helpers: entries
///
/// - `permute(const T* x, T* y, index_t n, shape_arg out_dims, shape_arg
///   in_strides)`: `y` (row-major over `out_dims`) gathers `x` through
///   `in_strides` (the filter from HWIO to cuDNN's KCRS or KRSC, data
///   between NHWC and NCHW, the input's part of a padded gradient);
/// - `pad(const T* x, T* y, index_t n, shape_arg out_dims, shape_arg
///   in_dims, shape_arg before)`: `y` is `x` zero-padded, `before[d]`
///   elements before it in dimension `d` (the asymmetric part of SAME or
///   EXPLICIT padding, which cuDNN cannot express).
pub fn conv_layout(dtype: DataType) -> Result<KernelSource, KernelError> {
    let ctype = element("Conv2D", dtype)?;
    let code = format!(
        r#"{head}
extern "C" __global__ void permute(const T* __restrict__ x, T* __restrict__ y, index_t n,
                                   shape_arg out_dims, shape_arg in_strides) {{
    GRID_STRIDE(i, n) {{
        index_t rem = i;
        index_t at = 0;
        for (int d = (int)out_dims.rank - 1; d >= 0; --d) {{
            index_t q = rem / out_dims.d[d];
            at += (rem - q * out_dims.d[d]) * in_strides.d[d];
            rem = q;
        }}
        y[i] = x[at];
    }}
}}

extern "C" __global__ void pad(const T* __restrict__ x, T* __restrict__ y, index_t n,
                               shape_arg out_dims, shape_arg in_dims, shape_arg before) {{
    GRID_STRIDE(i, n) {{
        index_t rem = i;
        index_t at = 0;
        index_t stride = 1;
        bool inside = true;
        for (int d = (int)out_dims.rank - 1; d >= 0; --d) {{
            index_t q = rem / out_dims.d[d];
            index_t src = (rem - q * out_dims.d[d]) - before.d[d];
            rem = q;
            if (src < 0 || src >= in_dims.d[d]) inside = false;
            at += src * stride;
            stride *= in_dims.d[d];
        }}
        y[i] = inside ? x[at] : store<T>((C)0);
    }}
}}
"#,
        head = head(ctype)
    );
    Ok(KernelSource::new(
        format!("nn/Conv2D/{ctype}"),
        code,
        ["permute", "pad"],
    ))
}

/// The NVRTC source the GPU kernel of `op` compiles for `dtype`; errors for
/// ops or dtypes without a GPU kernel here.
///
/// ```
/// use kernels_cuda::nn::sources::source_of;
/// use registry_core::proto::DataType;
/// assert_eq!(source_of("Softmax", DataType::DtHalf).unwrap().key(), "nn/Softmax/f16_t");
/// assert!(source_of("Softmax", DataType::DtString).is_err());
/// ```
pub fn source_of(op: &str, dtype: DataType) -> Result<KernelSource, KernelError> {
    match op {
        "BiasAdd" => bias_add(dtype),
        "LeakyRelu" => leaky_relu(dtype),
        "Softmax" => softmax(dtype),
        "LogSoftmax" => log_softmax(dtype),
        "MaxPool" => max_pool(dtype),
        "FusedBatchNormV3" => batch_norm(dtype),
        "Conv2D" | "DepthwiseConv2dNative" | "Conv2DBackpropInput" => conv_layout(dtype),
        _ => Err(KernelError::unimplemented(format!(
            "{op} is not a GPU nn kernel"
        ))),
    }
}

/// The sources a registration of an nn kernel compiles: its op on its `T`.
pub fn nn_sources(reg: &KernelRegistration) -> Result<Vec<KernelSource>, KernelError> {
    crate::sources_of_type(reg, "T", |dtype| source_of(reg.op, dtype))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_unique_per_op_and_dtype() {
        let mut keys = std::collections::HashSet::new();
        for op in ["BiasAdd", "Softmax", "LogSoftmax", "MaxPool", "Conv2D"] {
            for t in [DataType::DtHalf, DataType::DtFloat, DataType::DtDouble] {
                let s = source_of(op, t).unwrap();
                assert!(keys.insert(s.key().to_owned()), "{}", s.key());
            }
        }
        assert_eq!(keys.len(), 15);
    }

    #[test]
    fn unsupported_dtypes_are_refused() {
        assert!(softmax(DataType::DtInt32).is_err());
        assert!(log_softmax(DataType::DtInt32).is_err());
        let log = log_softmax(DataType::DtFloat).unwrap();
        assert_eq!(log.key(), "nn/LogSoftmax/float");
        assert!(log.code().contains("- log_sum"), "{}", log.code());
        assert!(batch_norm(DataType::DtDouble).is_err());
        assert!(bias_add(DataType::DtComplex64).is_err());
        assert!(leaky_relu(DataType::DtInt32).is_err());
        assert!(max_pool(DataType::DtBool).is_err());
        assert!(source_of("MatMul", DataType::DtFloat).is_err());
    }

    #[test]
    fn integer_bias_add_wraps_through_unsigned() {
        let s = bias_add(DataType::DtInt32).unwrap();
        assert!(s.code().contains("(T)((u32)a + (u32)b)"), "{}", s.code());
        let s = bias_add(DataType::DtHalf).unwrap();
        assert!(s.code().contains("store<T>(load(a) + load(b))"));
    }
}

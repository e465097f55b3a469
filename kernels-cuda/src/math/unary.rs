//! Element-wise unary kernels on the GPU: every entry of the standard ops'
//! unary table ([`opreg_op_logic::unary_functions!`]: `Abs`, `Neg`,
//! `Square`, `Floor`, `Exp`, `Log`, `Sqrt`, `Rsqrt`, `Sigmoid`, `Tanh`,
//! `Relu`, the activations and special functions), for the GPU types the
//! table lists, from the table's CUDA C expression of each; and
//! `LogicalNot` on `bool`s ([`BOOL_UNARY`], outside the table, which has
//! no `bool` entries). The input is updated in place when it can be
//! forwarded; 16 bytes move per thread and step on the aligned path.

use cudarc::driver::{CudaFunction, PushKernelArg};
use registry_core::kernel;
use registry_core::kernel::{
    BuildKernel, KernelError, KernelRegistration, KernelSource, OpKernel, OpKernelConstruction,
    OpKernelContext,
};
use registry_core::proto::{DataType, DataTypeExt};

use super::io::flat_launch;
use super::source::{COMMON, Kind, c_type, kind, unsupported, vector_width};
use opreg_cuda::{GpuContext, GpuTensors, gpu_error};

/// The unary ops on `bool`s (no type attr), with their CUDA C expression
/// of `x`: `LogicalNot`.
pub const BOOL_UNARY: [(&str, &str); 1] = [("LogicalNot", "!x")];

/// The CUDA C expression of unary `op` on elements of `kind`: the table's
/// ([`unary_expression`]), or a [`BOOL_UNARY`] one for `bool`s.
pub fn gpu_expression(op: &str, kind: Kind) -> Option<&'static str> {
    if kind == Kind::Bool {
        return BOOL_UNARY
            .iter()
            .find(|(name, _)| *name == op)
            .map(|&(_, expr)| expr);
    }
    unary_expression(op, kind)
}

/// The sources a registration of [`UnaryGpu`] compiles: its op on its type
/// (`bool` for the [`BOOL_UNARY`] ops).
pub fn unary_sources(reg: &KernelRegistration) -> Result<Vec<KernelSource>, KernelError> {
    if BOOL_UNARY.iter().any(|(name, _)| *name == reg.op) {
        return Ok(vec![unary_source(reg.op, DataType::DtBool)?]);
    }
    reg.constraints
        .iter()
        .filter(|c| c.attr == "T")
        .flat_map(|c| c.types)
        .map(|&dtype| unary_source(reg.op, dtype))
        .collect()
}

/// The source of the unary table's `op` on `dtype`: entry `unary(const T*
/// x, T* y, index_t n)` (`x` may equal `y`).
pub fn unary_source(op: &str, dtype: DataType) -> Result<KernelSource, KernelError> {
    let name = op;
    let t = c_type(name, dtype)?;
    let expr = kind(dtype)
        .and_then(|k| gpu_expression(op, k))
        .ok_or_else(|| unsupported(name, dtype))?;
    let code = format!(
        r#"{COMMON}
typedef {t} T;
typedef compute_t<T>::type C;
__device__ __forceinline__ T op(T v) {{
    const C x = load(v);
    return store<T>({expr});
}}
static constexpr int V = 16 / sizeof(T);
typedef pack<T, V> P;

extern "C" __global__ void unary(const T* x, T* y, index_t n) {{
    if (is_aligned(x, sizeof(P)) && is_aligned(y, sizeof(P))) {{
        const index_t nv = n / V;
        const P* xv = reinterpret_cast<const P*>(x);
        P* yv = reinterpret_cast<P*>(y);
        GRID_STRIDE(i, nv) {{
            P p = xv[i];
#pragma unroll
            for (int k = 0; k < V; ++k) p.v[k] = op(p.v[k]);
            yv[i] = p;
        }}
        const index_t done = nv * V;
        GRID_STRIDE(j, n - done) {{ y[done + j] = op(x[done + j]); }}
    }} else {{
        GRID_STRIDE(i, n) {{ y[i] = op(x[i]); }}
    }}
}}
"#
    );
    Ok(KernelSource::new(
        format!("unary/{name}/{}", dtype.type_name()),
        code,
        ["unary"],
    ))
}

impl BuildKernel for UnaryGpu {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        let dtype = *ctx
            .input_types()
            .first()
            .ok_or_else(|| KernelError::internal("a unary op without an input"))?;
        let source = unary_source(ctx.op(), dtype)?;
        Ok(Self {
            func: ctx.gpu()?.function(&source, "unary")?,
            op: ctx.op().to_owned(),
            dtype,
        })
    }
}

impl OpKernel for UnaryGpu {
    /// `y = op(x)`, in place when input 0 can be forwarded.
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        let x = ctx.gpu_input(0, self.dtype)?;
        let shape = ctx.input(0)?.shape().clone();
        let n = shape.num_elements();
        let forwarded = ctx.forward_input_or_allocate_output(&[0], 0, shape)?;
        if n == 0 {
            return Ok(());
        }
        let y = ctx.gpu_output(0)?;
        let x = if forwarded.is_some() { y } else { x };
        let len = n as i64;
        let mut launch = ctx.gpu()?.stream().launch_builder(&self.func);
        launch.arg(&x).arg(&y).arg(&len);
        // SAFETY: `unary(const T* x, T* y, index_t n)` takes these
        // arguments; both addresses hold n elements of T (the same buffer
        // when the input was forwarded: each element is read before it is
        // written, by one thread).
        unsafe { launch.launch(flat_launch(n, vector_width(&[self.dtype]))) }
            .map_err(|e| gpu_error(&format!("launching {}", self.op), e))?;
        Ok(())
    }
}

/// Registers [`UnaryGpu`] for every entry of the table and its GPU types,
/// and defines [`unary_expression`] from the entries' GPU expressions.
macro_rules! gpu_unary_kernels {
    (@kind $k:ident, $($kind:ident: $gpu:literal),*) => {{
        #[allow(unreachable_patterns)]
        match $k {
            $(gpu_unary_kernels!(@pattern $kind) => Some($gpu),)*
            _ => None,
        }
    }};
    (@pattern float) => { Kind::Float };
    (@pattern double) => { Kind::Double };
    (@pattern signed) => { Kind::Signed };
    (@pattern unsigned) => { Kind::Unsigned };
    ($($(#[$doc:meta])* $op:ident($x:ident) [$group:literal]:
        cpu <$t:ident: $bound:path> $cpu:expr, for [$($ct:ident),*];
        gpu {$($kind:ident: $gpu:literal),*} for [$($gt:ident),*];)*) => {
        /// The CUDA C expression of unary `op` on elements of `kind`, from
        /// the table (`None` when the table has none).
        pub fn unary_expression(op: &str, kind: Kind) -> Option<&'static str> {
            match op {
                $(stringify!($op) => gpu_unary_kernels!(@kind kind, $($kind: $gpu),*),)*
                _ => None,
            }
        }

        /// Every entry of the table on the GPU, and `LogicalNot`
        /// ([`BOOL_UNARY`]), one kernel type for all: built for a node, it
        /// compiles (or finds cached) its op's expression on its dtype.
        $(#[cfg_attr(
            feature = $group,
            kernel(op = opreg_standard_ops::$op, device = GPU, T = [$($gt),*], sources = unary_sources)
        )])*
        #[cfg_attr(
            feature = "math",
            kernel(op = opreg_standard_ops::LogicalNot, device = GPU, sources = unary_sources)
        )]
        #[derive(Debug)]
        pub struct UnaryGpu {
            func: CudaFunction,
            op: String,
            dtype: DataType,
        }
    };
}

opreg_op_logic::unary_functions!(gpu_unary_kernels);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_are_keyed_by_op_and_type() {
        let s = unary_source("Abs", DataType::DtFloat).unwrap();
        assert_eq!(s.key(), "unary/Abs/float");
        assert!(s.code().contains("typedef float T;"));
    }

    #[test]
    fn logical_not_is_a_bool_source() {
        let s = unary_source("LogicalNot", DataType::DtBool).unwrap();
        assert_eq!(s.key(), "unary/LogicalNot/bool");
        assert!(s.code().contains("store<T>(!x)"));
        assert!(unary_source("LogicalNot", DataType::DtFloat).is_err());
        assert!(unary_source("Abs", DataType::DtBool).is_err());
    }

    #[test]
    fn ops_without_an_expression_for_the_type_are_errors() {
        assert!(unary_source("Exp", DataType::DtInt32).is_err());
        assert!(unary_source("Abs", DataType::DtUint8).is_err());
        assert!(unary_source("NoSuchOp", DataType::DtFloat).is_err());
    }
}

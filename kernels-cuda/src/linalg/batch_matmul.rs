//! `BatchMatMulV2` and `BatchMatMulV3` on the GPU through cuBLAS.
//!
//! The shapes, TF's checks and messages, and the broadcasting of the batch
//! dimensions are [`BatchMatMulGeometry`]'s (shared with the CPU kernels).
//! Each output matrix is one product as in `MatMul` ([`GemmPlan`]: the
//! row-major `out = op(x) · op(y)` is the column-major `out^T = op(y)^T ·
//! op(x)^T`), with `adj_x`/`adj_y` as transposes (the types are real).
//!
//! When every output matrix multiplies the matrices of the same index (or
//! an input's single matrix), all of them are one
//! `cublasGemmStridedBatchedEx` call, a single-matrix input having stride
//! 0; other broadcasts run one `cublasGemmEx` per output matrix.

use std::ffi::c_void;
use std::marker::PhantomData;

use cudarc::cublas::result::{CublasError, gemm_ex, gemm_strided_batched_ex};
use cudarc::cublas::sys::cublasGemmAlgo_t;
use opreg_op_logic::batch_matmul::BatchMatMulGeometry;
use opreg_standard_ops::{BatchMatMulV2, BatchMatMulV3};
use registry_core::kernel;
use registry_core::kernel::{
    BuildKernel, KernelError, OpKernel, OpKernelConstruction, OpKernelContext,
};
use registry_core::tensor::TensorShape;

use crate::gemm::{GemmElement, GemmPlan, op};
use opreg_cuda::{GpuContext, GpuDevice, GpuTensors, gpu_error};

/// How a checked batched product runs on cuBLAS.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchedGemmPlan {
    /// The product of one pair of matrices (cuBLAS's first operand is `y`'s
    /// matrix, its second `x`'s).
    pub gemm: GemmPlan,
    /// Elements of one matrix of `x`.
    pub x_len: usize,
    /// Elements of one matrix of `y`.
    pub y_len: usize,
    /// Elements of one output matrix.
    pub out_len: usize,
    /// For one strided batched call: the matrix strides, in elements, of
    /// `y`, `x` and the output (0 for an input with a single matrix).
    /// `None` when the batch broadcasts otherwise: one call per output
    /// matrix ([`BatchMatMulGeometry::x_matrix`], `y_matrix`).
    pub strides: Option<[i64; 3]>,
}

impl BatchedGemmPlan {
    /// Plans `g` (checked from shapes `x` and `y` with `adj_x`, `adj_y`)
    /// for cuBLAS.
    ///
    /// ```
    /// use kernels_cuda::linalg::BatchedGemmPlan;
    /// use opreg_op_logic::batch_matmul::BatchMatMulGeometry;
    /// use registry_core::tensor::TensorShape;
    ///
    /// let x = TensorShape::new([4, 2, 3]).unwrap();
    /// let y = TensorShape::new([3, 5]).unwrap();
    /// let g = BatchMatMulGeometry::new(&x, &y, false, false).unwrap();
    /// let p = BatchedGemmPlan::new(&g, &x, &y, false, false).unwrap();
    /// // y's single matrix is shared: stride 0.
    /// assert_eq!(p.strides, Some([0, 6, 10]));
    /// ```
    pub fn new(
        g: &BatchMatMulGeometry,
        x: &TensorShape,
        y: &TensorShape,
        adj_x: bool,
        adj_y: bool,
    ) -> Result<Self, KernelError> {
        let gemm = GemmPlan::new(&matrix_shape(x)?, &matrix_shape(y)?, adj_x, adj_y)?;
        if (gemm.m, gemm.k, gemm.n) != (g.m, g.k, g.n) {
            return Err(KernelError::internal(
                "BatchMatMul: the matrix product disagrees with the batch geometry",
            ));
        }
        let size = |a: usize, b: usize, what: &str| {
            a.checked_mul(b).ok_or_else(|| {
                KernelError::invalid_argument(format!("BatchMatMul: {what} has too many elements"))
            })
        };
        let x_len = size(g.m, g.k, "a matrix of x")?;
        let y_len = size(g.k, g.n, "a matrix of y")?;
        let out_len = size(g.m, g.n, "an output matrix")?;
        let strides = if g.is_strided() {
            // Matrix 1's index is 1 for an input with a matrix per output,
            // 0 for a single shared matrix.
            let second = 1.min(g.batch.saturating_sub(1));
            let stride = |matrix: usize, len: usize| {
                i64::try_from(matrix * len).map_err(|_| {
                    KernelError::unimplemented(
                        "BatchMatMul on the GPU: a matrix stride exceeds i64",
                    )
                })
            };
            Some([
                stride(g.y_matrix(second), y_len)?,
                stride(g.x_matrix(second), x_len)?,
                stride(usize::from(g.batch > 1), out_len)?,
            ])
        } else {
            None
        };
        Ok(Self {
            gemm,
            x_len,
            y_len,
            out_len,
            strides,
        })
    }
}

/// The last two dimensions of `shape` (checked to be at least a matrix by
/// the geometry).
fn matrix_shape(shape: &TensorShape) -> Result<TensorShape, KernelError> {
    match *shape.dims() {
        [.., rows, cols] => Ok(TensorShape::new([rows, cols])?),
        _ => Err(KernelError::internal(
            "BatchMatMul: an input is not a matrix",
        )),
    }
}

/// Runs the batched product of inputs 0 and 1 (of `T`) into output 0.
fn compute<T: GemmElement>(
    ctx: &mut OpKernelContext<'_>,
    op_name: &str,
    adj_x: bool,
    adj_y: bool,
) -> Result<(), KernelError> {
    let x_ptr = ctx.gpu_input(0, T::DTYPE)?;
    let y_ptr = ctx.gpu_input(1, T::DTYPE)?;
    let (x_shape, y_shape) = (ctx.input(0)?.shape().clone(), ctx.input(1)?.shape().clone());
    let g = BatchMatMulGeometry::new(&x_shape, &y_shape, adj_x, adj_y)?;
    if g.out_shape.num_elements() == 0 || g.k == 0 {
        // Nothing to compute, or sums over k = 0: zeros.
        let out = ctx.gpu()?.zeros(T::DTYPE, g.out_shape.clone())?;
        return ctx.set_output(0, out);
    }
    let plan = BatchedGemmPlan::new(&g, &x_shape, &y_shape, adj_x, adj_y)?;
    plan.gemm.cublas_dims_of(op_name)?;
    // Every GEMM (beta = 0) writes its m * n output elements, and the
    // output matrices cover the output.
    ctx.allocate_output(0, g.out_shape.clone())?;
    let out_ptr = ctx.gpu_output(0)?;
    // SAFETY: x and y are the inputs, of T (checked), whose shapes `g` and
    // `plan` were made from; the output was just allocated with `g`'s
    // output shape, so it overlaps neither.
    unsafe { run_batched::<T>(ctx.gpu()?, &g, &plan, [x_ptr, y_ptr, out_ptr], op_name) }
}

/// Queues the batched product `g` planned as `plan` on `gpu`'s stream:
/// `out[b] = op(x[bx]) · op(y[by])` for every output matrix `b` (one
/// strided batched cuBLAS call, or one call per matrix), writing every
/// element of `out` (`g.k` and the output must not be empty: the callers
/// handle those). `op_name` names the op in errors.
///
/// # Safety
/// `x`, `y` and `out` (`[x, y, out]`) must be device addresses on `gpu`'s
/// context of buffers of `T` of the shapes `g` and `plan` were made from
/// (and `g.out_shape`), written and read on `gpu`'s stream; `out` may not
/// overlap `x` or `y`.
pub(crate) unsafe fn run_batched<T: GemmElement>(
    gpu: &GpuDevice,
    g: &BatchMatMulGeometry,
    plan: &BatchedGemmPlan,
    [x_ptr, y_ptr, out_ptr]: [u64; 3],
    op_name: &str,
) -> Result<(), KernelError> {
    let [m, n, k, lda, ldb, ldc] = plan.gemm.cublas_dims_of(op_name)?;
    let batch_count = i32::try_from(g.batch).map_err(|_| {
        KernelError::unimplemented(format!(
            "{op_name} on the GPU: the batch ({}) exceeds cuBLAS's int range",
            g.batch
        ))
    });
    gpu.context()
        .bind_to_thread()
        .map_err(|e| gpu_error("binding the CUDA context", e))?;
    let (op_first, op_second) = (
        op(plan.gemm.transpose_first),
        op(plan.gemm.transpose_second),
    );
    let (alpha, beta) = (T::ONE, T::ZERO);
    let alpha_ptr = (&alpha as *const T::Scale).cast::<c_void>();
    let beta_ptr = (&beta as *const T::Scale).cast::<c_void>();
    let run_error = |e: CublasError| gpu_error(&format!("running {op_name} with cuBLAS"), e);
    gpu.with_blas(|blas| {
        if let Some([stride_y, stride_x, stride_out]) = plan.strides {
            let batch_count = batch_count?;
            // SAFETY: the handle's stream is the device's stream, where the
            // buffers were written. y, x and the output hold their inputs'
            // and the output's shapes of T, row-major: matrix i of y (x, the
            // output) starts i * stride elements in (stride 0 for a single
            // shared matrix), each read column-major with its stored row
            // length as leading dimension, and batch_count output matrices
            // of m * n fill the output exactly. alpha and beta are host
            // values of the compute type's scale, alive across the call.
            unsafe {
                gemm_strided_batched_ex(
                    *blas.handle(),
                    op_first,
                    op_second,
                    m,
                    n,
                    k,
                    alpha_ptr,
                    y_ptr as *const c_void,
                    T::DATA,
                    lda,
                    stride_y,
                    x_ptr as *const c_void,
                    T::DATA,
                    ldb,
                    stride_x,
                    beta_ptr,
                    out_ptr as *mut c_void,
                    T::DATA,
                    ldc,
                    stride_out,
                    batch_count,
                    T::COMPUTE,
                    cublasGemmAlgo_t::CUBLAS_GEMM_DEFAULT,
                )
            }
            .map_err(run_error)
        } else {
            let size = std::mem::size_of::<T>();
            let at = |base: u64, matrix: usize, len: usize| base + (matrix * len * size) as u64;
            for b in 0..g.batch {
                let y_b = at(y_ptr, g.y_matrix(b), plan.y_len);
                let x_b = at(x_ptr, g.x_matrix(b), plan.x_len);
                let out_b = at(out_ptr, b, plan.out_len);
                // SAFETY: as for the strided call, for one product: the
                // geometry maps output matrix b (< batch) to matrices of x
                // and y inside their inputs (their indices are below each
                // input's matrix count), so each address and the m * k,
                // k * n, m * n elements after it lie in its buffer.
                unsafe {
                    gemm_ex(
                        *blas.handle(),
                        op_first,
                        op_second,
                        m,
                        n,
                        k,
                        alpha_ptr,
                        y_b as *const c_void,
                        T::DATA,
                        lda,
                        x_b as *const c_void,
                        T::DATA,
                        ldb,
                        beta_ptr,
                        out_b as *mut c_void,
                        T::DATA,
                        ldc,
                        T::COMPUTE,
                        cublasGemmAlgo_t::CUBLAS_GEMM_DEFAULT,
                    )
                }
                .map_err(run_error)?;
            }
            Ok(())
        }
    })
}

/// `BatchMatMulV2` on the GPU through cuBLAS (half, bfloat16, float,
/// double; TF's GPU kernel also has complex types): `output[b] =
/// op(x[bx]) · op(y[by])` with the batch dimensions broadcast, `op` the
/// transpose where `adj_x`/`adj_y` is set. `grad_x`/`grad_y` are hints,
/// ignored as on the CPU. `k = 0` gives zeros; an empty output makes no
/// cuBLAS call.
#[kernel(op = BatchMatMulV2, device = GPU, T = [half, bfloat16, float, double])]
pub struct BatchMatMulV2Gpu<T> {
    adj_x: bool,
    adj_y: bool,
    _t: PhantomData<fn() -> T>,
}

impl<T: GemmElement> BuildKernel for BatchMatMulV2Gpu<T> {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        ctx.gpu()?;
        Ok(Self {
            adj_x: ctx.attr("adj_x")?,
            adj_y: ctx.attr("adj_y")?,
            _t: PhantomData,
        })
    }
}

impl<T: GemmElement> OpKernel for BatchMatMulV2Gpu<T> {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        compute::<T>(ctx, "BatchMatMulV2", self.adj_x, self.adj_y)
    }
}

/// `BatchMatMulV3` on the GPU where `Ta`, `Tb` and `Tout` are one type
/// (half, bfloat16, float, double), as [`BatchMatMulV2Gpu`].
#[kernel(op = BatchMatMulV3, device = GPU, Ta = [half], Tb = [half], Tout = [half])]
#[kernel(op = BatchMatMulV3, device = GPU, Ta = [bfloat16], Tb = [bfloat16], Tout = [bfloat16])]
#[kernel(op = BatchMatMulV3, device = GPU, Ta = [float], Tb = [float], Tout = [float])]
#[kernel(op = BatchMatMulV3, device = GPU, Ta = [double], Tb = [double], Tout = [double])]
pub struct BatchMatMulV3Gpu<Tout> {
    adj_x: bool,
    adj_y: bool,
    _t: PhantomData<fn() -> Tout>,
}

impl<Tout: GemmElement> BuildKernel for BatchMatMulV3Gpu<Tout> {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        ctx.gpu()?;
        Ok(Self {
            adj_x: ctx.attr("adj_x")?,
            adj_y: ctx.attr("adj_y")?,
            _t: PhantomData,
        })
    }
}

impl<Tout: GemmElement> OpKernel for BatchMatMulV3Gpu<Tout> {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        compute::<Tout>(ctx, "BatchMatMulV3", self.adj_x, self.adj_y)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(d: &[usize]) -> TensorShape {
        TensorShape::new(d).unwrap()
    }

    fn plan(x: &[usize], y: &[usize], adj_x: bool, adj_y: bool) -> BatchedGemmPlan {
        let (x, y) = (shape(x), shape(y));
        let g = BatchMatMulGeometry::new(&x, &y, adj_x, adj_y).unwrap();
        BatchedGemmPlan::new(&g, &x, &y, adj_x, adj_y).unwrap()
    }

    #[test]
    fn same_batches_are_one_strided_call() {
        let p = plan(&[3, 2, 4], &[3, 4, 5], false, false);
        assert_eq!((p.x_len, p.y_len, p.out_len), (8, 20, 10));
        assert_eq!(p.strides, Some([20, 8, 10]));
        // Adjoints: x [3, 4, 2] read transposed, y [3, 5, 4] transposed.
        let p = plan(&[3, 4, 2], &[3, 5, 4], true, true);
        assert_eq!((p.gemm.m, p.gemm.k, p.gemm.n), (2, 4, 5));
        assert!(p.gemm.transpose_first && p.gemm.transpose_second);
        assert_eq!((p.gemm.ld_first, p.gemm.ld_second), (4, 2));
        assert_eq!(p.strides, Some([20, 8, 10]));
    }

    #[test]
    fn single_matrices_have_stride_zero() {
        assert_eq!(
            plan(&[2, 3], &[4, 3, 5], false, false).strides,
            Some([15, 0, 10])
        );
        assert_eq!(
            plan(&[1, 1, 2, 3], &[3, 4], false, false).strides,
            Some([0, 0, 0])
        );
        // One output matrix: the strides are never used.
        assert_eq!(
            plan(&[1, 2, 3], &[1, 3, 4], false, false).strides,
            Some([0, 0, 0])
        );
    }

    #[test]
    fn other_broadcasts_loop() {
        // [3, 1] x [1, 4] batches: 12 products of mixed matrices.
        let p = plan(&[3, 1, 2, 2], &[1, 4, 2, 2], false, false);
        assert_eq!(p.strides, None);
        let p = plan(&[2, 1, 2, 3], &[2, 5, 3, 4], false, false);
        assert_eq!(p.strides, None);
    }

    #[test]
    fn errors_are_the_geometry_s() {
        let e = BatchMatMulGeometry::new(&shape(&[2, 3, 4]), &shape(&[2, 5, 6]), false, false)
            .unwrap_err();
        assert!(e.to_string().contains("Matrix size-incompatible"), "{e}");
    }
}

//! Row-major matrix products through cuBLAS (`cublasGemmEx`), for the
//! linear-algebra kernels (`MatMul`, `BatchMatMulV2`/`V3`) and for the
//! convolutions that are products (`Conv2D` with a 1x1 filter, or a filter
//! as large as its input, as TF's GPU kernel runs them).
//!
//! cuBLAS is column-major; a row-major matrix is the column-major view of
//! its transpose, so the row-major `C = op(A) op(B)` is computed as the
//! column-major `C^T = op(B)^T op(A)^T`: cuBLAS gets B as its first operand
//! and A as its second, with the same transpose flags.

use std::ffi::c_void;

use cudarc::cublas::result::gemm_ex;
use cudarc::cublas::sys::{
    cublasComputeType_t, cublasGemmAlgo_t, cublasOperation_t, cudaDataType_t,
};
use registry_core::kernel::KernelError;
use registry_core::tensor::{TensorElement, TensorShape, bf16, f16};

use opreg_cuda::{GpuDevice, gpu_error};

/// An element type MatMul runs through `cublasGemmEx`: its cuBLAS data type
/// and compute type, and the type of `alpha`/`beta`.
///
/// Half types accumulate in `float` (`CUBLAS_COMPUTE_32F`, as TF does);
/// float uses `CUBLAS_COMPUTE_32F` without TF32, so results match the CPU
/// kernel to float precision.
pub trait GemmElement: TensorElement {
    /// The matrices' cuBLAS data type.
    const DATA: cudaDataType_t;
    /// The accumulation type.
    const COMPUTE: cublasComputeType_t;
    /// The scaling parameters' type (`float` unless computing in double).
    type Scale: Copy;
    /// `alpha = 1`.
    const ONE: Self::Scale;
    /// `beta = 0`.
    const ZERO: Self::Scale;
}

impl GemmElement for f32 {
    const DATA: cudaDataType_t = cudaDataType_t::CUDA_R_32F;
    const COMPUTE: cublasComputeType_t = cublasComputeType_t::CUBLAS_COMPUTE_32F;
    type Scale = f32;
    const ONE: f32 = 1.0;
    const ZERO: f32 = 0.0;
}

impl GemmElement for f64 {
    const DATA: cudaDataType_t = cudaDataType_t::CUDA_R_64F;
    const COMPUTE: cublasComputeType_t = cublasComputeType_t::CUBLAS_COMPUTE_64F;
    type Scale = f64;
    const ONE: f64 = 1.0;
    const ZERO: f64 = 0.0;
}

impl GemmElement for f16 {
    const DATA: cudaDataType_t = cudaDataType_t::CUDA_R_16F;
    const COMPUTE: cublasComputeType_t = cublasComputeType_t::CUBLAS_COMPUTE_32F;
    type Scale = f32;
    const ONE: f32 = 1.0;
    const ZERO: f32 = 0.0;
}

impl GemmElement for bf16 {
    const DATA: cudaDataType_t = cudaDataType_t::CUDA_R_16BF;
    const COMPUTE: cublasComputeType_t = cublasComputeType_t::CUBLAS_COMPUTE_32F;
    type Scale = f32;
    const ONE: f32 = 1.0;
    const ZERO: f32 = 0.0;
}

/// One MatMul as a column-major cuBLAS call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GemmPlan {
    /// Rows of the output (and of `op(a)`).
    pub m: usize,
    /// Columns of the output (and of `op(b)`).
    pub n: usize,
    /// The contracted dimension.
    pub k: usize,
    /// cuBLAS's first operand (`b`) is transposed.
    pub transpose_first: bool,
    /// cuBLAS's second operand (`a`) is transposed.
    pub transpose_second: bool,
    /// Leading dimension of `b` (its row length, as stored).
    pub ld_first: usize,
    /// Leading dimension of `a` (its row length, as stored).
    pub ld_second: usize,
}

impl GemmPlan {
    /// Checks the operands' shapes as TF (and the CPU kernel) does and
    /// plans the product.
    ///
    /// ```
    /// use kernels_cuda::gemm::GemmPlan;
    /// use registry_core::tensor::TensorShape;
    /// let a = TensorShape::new([2, 3]).unwrap();
    /// let b = TensorShape::new([4, 3]).unwrap();
    /// let p = GemmPlan::new(&a, &b, false, true).unwrap();
    /// assert_eq!((p.m, p.n, p.k), (2, 4, 3));
    /// assert!(GemmPlan::new(&a, &b, false, false).is_err());
    /// ```
    pub fn new(
        a: &TensorShape,
        b: &TensorShape,
        transpose_a: bool,
        transpose_b: bool,
    ) -> Result<Self, KernelError> {
        let (a_dims, b_dims) = (matrix_dims(a, 0)?, matrix_dims(b, 1)?);
        // TF's dim_pair: the contracted dimension of each operand.
        let a_inner = usize::from(!transpose_a);
        let b_inner = usize::from(transpose_b);
        registry_core::kernel_ensure!(
            a_dims[a_inner] == b_dims[b_inner],
            "Matrix size-incompatible: In[0]: {a}, In[1]: {b}"
        );
        Ok(Self {
            m: a_dims[1 - a_inner],
            n: b_dims[1 - b_inner],
            k: a_dims[a_inner],
            transpose_first: transpose_b,
            transpose_second: transpose_a,
            ld_first: b_dims[1],
            ld_second: a_dims[1],
        })
    }

    /// The call's `(m, n, k, lda, ldb, ldc)` for cuBLAS (column-major: `n`
    /// and `m` swapped), or an error when one exceeds cuBLAS's `int`.
    pub fn cublas_dims(&self) -> Result<[i32; 6], KernelError> {
        self.cublas_dims_of("MatMul")
    }

    /// [`Self::cublas_dims`], with errors naming op `op`.
    pub fn cublas_dims_of(&self, op: &str) -> Result<[i32; 6], KernelError> {
        let int = |v: usize, what: &str| {
            i32::try_from(v).map_err(|_| {
                KernelError::unimplemented(format!(
                    "{op} on the GPU: {what} ({v}) exceeds cuBLAS's int range"
                ))
            })
        };
        Ok([
            int(self.n, "the output's columns")?,
            int(self.m, "the output's rows")?,
            int(self.k, "the contracted dimension")?,
            int(self.ld_first.max(1), "b's row length")?,
            int(self.ld_second.max(1), "a's row length")?,
            int(self.n.max(1), "the output's row length")?,
        ])
    }
}

/// The two dimensions of input `index`, or TF's error when it is not a
/// matrix.
fn matrix_dims(shape: &TensorShape, index: usize) -> Result<[usize; 2], KernelError> {
    match *shape.dims() {
        [rows, cols] => Ok([rows, cols]),
        _ => Err(KernelError::invalid_argument(format!(
            "In[{index}] is not a matrix. Instead it has shape {shape}"
        ))),
    }
}

/// cuBLAS's operation for an operand transposed or not.
pub(crate) fn op(transpose: bool) -> cublasOperation_t {
    if transpose {
        cublasOperation_t::CUBLAS_OP_T
    } else {
        cublasOperation_t::CUBLAS_OP_N
    }
}

/// Runs `plan` on `gpu`'s stream: the row-major `c = op(a) · op(b)` with
/// `beta = 0`, so every one of c's `m * n` elements is written (`k > 0`,
/// `m, n > 0`: the callers handle empty products). `what` names the op in
/// errors.
///
/// # Safety
/// `a`, `b` and `c` must be device addresses on `gpu`'s context of
/// buffers holding at least the `m * k`, `k * n` and `m * n` elements of
/// `T` that `plan` addresses (row-major, with `plan`'s row lengths), all
/// written or read on `gpu`'s stream; `c` may not overlap `a` or `b`.
pub(crate) unsafe fn run_gemm<T: GemmElement>(
    gpu: &GpuDevice,
    plan: &GemmPlan,
    a: u64,
    b: u64,
    c: u64,
    what: &str,
) -> Result<(), KernelError> {
    let [m, n, k, lda, ldb, ldc] = plan.cublas_dims_of(what)?;
    gpu.context()
        .bind_to_thread()
        .map_err(|e| gpu_error("binding the CUDA context", e))?;
    gpu.with_blas(|blas| {
        let (alpha, beta) = (T::ONE, T::ZERO);
        // SAFETY: the handle's stream is the device's stream, where the
        // buffers were written; b, a and c hold the k * n, m * k and m * n
        // elements of T (row-major) that cuBLAS reads column-major with
        // these leading dimensions (each a stored row length, >= the rows
        // cuBLAS addresses), by this function's contract; alpha and beta
        // are host values of the compute type's scale, alive across the
        // call.
        unsafe {
            gemm_ex(
                *blas.handle(),
                op(plan.transpose_first),
                op(plan.transpose_second),
                m,
                n,
                k,
                (&alpha as *const T::Scale).cast::<c_void>(),
                b as *const c_void,
                T::DATA,
                lda,
                a as *const c_void,
                T::DATA,
                ldb,
                (&beta as *const T::Scale).cast::<c_void>(),
                c as *mut c_void,
                T::DATA,
                ldc,
                T::COMPUTE,
                cublasGemmAlgo_t::CUBLAS_GEMM_DEFAULT,
            )
        }
        .map_err(|e| gpu_error(&format!("running {what} with cuBLAS"), e))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(d: &[usize]) -> TensorShape {
        TensorShape::new(d).unwrap()
    }

    #[test]
    fn plans_every_transpose_combination() {
        // a: [2, 3] (or [3, 2] transposed), b: [3, 4] (or [4, 3]).
        for (ta, tb, a, b) in [
            (false, false, [2, 3], [3, 4]),
            (true, false, [3, 2], [3, 4]),
            (false, true, [2, 3], [4, 3]),
            (true, true, [3, 2], [4, 3]),
        ] {
            let p = GemmPlan::new(&shape(&a), &shape(&b), ta, tb).unwrap();
            assert_eq!((p.m, p.n, p.k), (2, 4, 3));
            assert_eq!((p.transpose_first, p.transpose_second), (tb, ta));
            assert_eq!((p.ld_first, p.ld_second), (b[1], a[1]));
            // cuBLAS: C^T (4 x 2, ld 4) = op(B)^T (4 x 3) · op(A)^T (3 x 2).
            let [m, n, k, lda, ldb, ldc] = p.cublas_dims().unwrap();
            assert_eq!((m, n, k, ldc), (4, 2, 3, 4));
            // The leading dimension covers the rows cuBLAS addresses.
            assert!(lda >= if tb { k } else { m });
            assert!(ldb >= if ta { n } else { k });
        }
    }

    #[test]
    fn tf_messages() {
        let e = GemmPlan::new(&shape(&[2, 3, 1]), &shape(&[3, 4]), false, false).unwrap_err();
        assert!(
            e.to_string()
                .contains("In[0] is not a matrix. Instead it has shape [2,3,1]"),
            "{e}"
        );
        let e = GemmPlan::new(&shape(&[2, 3]), &shape(&[4]), false, false).unwrap_err();
        assert!(e.to_string().contains("In[1] is not a matrix"), "{e}");
        let e = GemmPlan::new(&shape(&[2, 3]), &shape(&[2, 4]), false, false).unwrap_err();
        assert!(
            e.to_string()
                .contains("Matrix size-incompatible: In[0]: [2,3], In[1]: [2,4]"),
            "{e}"
        );
    }

    #[test]
    fn empty_and_huge_shapes() {
        let p = GemmPlan::new(&shape(&[0, 3]), &shape(&[3, 4]), false, false).unwrap();
        assert_eq!((p.m, p.n, p.k), (0, 4, 3));
        let p = GemmPlan::new(&shape(&[2, 0]), &shape(&[0, 4]), false, false).unwrap();
        assert_eq!(p.k, 0);
        let p = GemmPlan::new(&shape(&[1, 1 << 31]), &shape(&[1 << 31, 1]), false, false).unwrap();
        assert!(p.cublas_dims().is_err());
    }
}

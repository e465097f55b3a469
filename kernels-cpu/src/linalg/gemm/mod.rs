//! Dense matrix products on strided views of slices: `dst = a · b`.
//!
//! [`GemmElement::gemm`] picks the engine per element type:
//! - `f32` on x86-64 with AVX2 and FMA but no AVX-512: [`packed_f32`]'s
//!   BLIS-style blocked product, for products of 128 or more each way;
//! - other `f32`, `f64`, `Complex64`, `Complex128`: the tuned `gemm` crate
//!   (run-time SIMD dispatch, rayon threads above a size threshold), through
//!   the one `unsafe` call in [`raw`];
//! - `f16`, `bf16`: widened to `f32`, multiplied as `f32`, rounded once at
//!   the end (`gemm` has no `bf16` kernel, and its `f16` matrix-vector path
//!   accumulates in `f16`, losing up to a few percent over long sums);
//! - integers: a cache-blocked loop with wrapping arithmetic ([`int`]),
//!   as TensorFlow's two's complement integer products.
//!
//! A constant right-hand operand (a MatMul's or convolution's weights) can
//! be packed once for all its products ([`ConstantRhs`],
//! [`GemmElement::pack_rhs`]): `f32` where [`packed_f32`] runs.
//!
//! Shared by MatMul (`linalg`) and Conv2D (`nn`, im2col).

mod constant;
mod int;
mod packed_f32;
mod raw;
mod view;

pub(crate) use constant::ConstantRhs;
pub(crate) use view::{MatMut, MatRef};

use registry_core::kernel::KernelError;
use registry_core::tensor::{Complex64, Complex128, Tensor, bf16, f16};

use crate::numeric::Element;

/// Which threads a product may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Threads {
    /// rayon's pool, when the product is large enough to gain from it.
    Pool,
    /// The calling thread alone (a caller that already splits its work
    /// over the pool, one product per task).
    Caller,
}

/// Below this many multiply-adds (m·n·k) a floating-point product stays on
/// one thread (gemm's own threshold is 48·48·256); on a thread of the pool,
/// whose other threads are awake, a quarter of it (see [`crate::split`]).
const PARALLEL_THRESHOLD: usize = 48 * 48 * 256;

/// How many threads a floating-point product of `work` multiply-adds uses:
/// 1 for [`Threads::Caller`] or below [`PARALLEL_THRESHOLD`], else rayon's
/// pool's count.
fn thread_count(threads: Threads, work: usize) -> usize {
    if threads == Threads::Caller || work < crate::split::min_parallel_work(PARALLEL_THRESHOLD) {
        1
    } else {
        rayon::current_num_threads().max(1)
    }
}

/// An element type with a matrix product.
pub(crate) trait GemmElement: Element {
    /// Writes `a · b` to `dst` (overwriting it); the shapes must agree
    /// (`a`: m×k, `b`: k×n, `dst`: m×n), else an internal error. `k = 0`
    /// writes zeros. Large products run on rayon's pool.
    fn gemm(
        a: MatRef<'_, Self>,
        b: MatRef<'_, Self>,
        dst: MatMut<'_, Self>,
    ) -> Result<(), KernelError> {
        Self::gemm_on(a, b, dst, Threads::Pool)
    }

    /// [`GemmElement::gemm`] on the given threads.
    fn gemm_on(
        a: MatRef<'_, Self>,
        b: MatRef<'_, Self>,
        dst: MatMut<'_, Self>,
        threads: Threads,
    ) -> Result<(), KernelError>;

    /// `b` packed for many products with it, where this type's products
    /// have a packed form on this machine (`f32` with AVX2 and FMA, no
    /// AVX-512); `None` elsewhere, or when the memory cannot be had.
    fn pack_rhs(b: MatRef<'_, Self>) -> Option<PackedRhs> {
        let _ = b;
        None
    }

    /// [`GemmElement::gemm_on`], given also `b` packed by
    /// [`GemmElement::pack_rhs`] from the same values: the packed form is
    /// used where it applies (its dims match, enough rows, a destination
    /// with contiguous rows), else `b` as given.
    fn gemm_packed_on(
        a: MatRef<'_, Self>,
        b: MatRef<'_, Self>,
        packed: Option<&PackedRhs>,
        dst: MatMut<'_, Self>,
        threads: Threads,
    ) -> Result<(), KernelError> {
        let _ = packed;
        Self::gemm_on(a, b, dst, threads)
    }
}

/// A right-hand operand packed once by [`GemmElement::pack_rhs`] for many
/// products.
#[derive(Debug)]
pub(crate) struct PackedRhs(packed_f32::PackedB);

/// Checks that `a` (m×k), `b` (k×n) and `dst` (m×n) agree; returns (m, n, k).
pub(crate) fn product_dims<T: Copy>(
    a: &MatRef<'_, T>,
    b: &MatRef<'_, T>,
    dst: &MatMut<'_, T>,
) -> Result<(usize, usize, usize), KernelError> {
    let (m, k) = (a.rows(), a.cols());
    let n = b.cols();
    if b.rows() != k || dst.rows() != m || dst.cols() != n {
        return Err(KernelError::internal(format!(
            "matrix product of mismatched views: [{m},{k}] x [{},{n}] -> [{},{}]",
            b.rows(),
            dst.rows(),
            dst.cols()
        )));
    }
    Ok((m, n, k))
}

macro_rules! native_gemm {
    ($($t:ty),*) => {$(
        impl GemmElement for $t {
            fn gemm_on(
                a: MatRef<'_, Self>,
                b: MatRef<'_, Self>,
                dst: MatMut<'_, Self>,
                threads: Threads,
            ) -> Result<(), KernelError> {
                raw::gemm(a, b, dst, threads)
            }
        }
    )*};
}

native_gemm!(f64, Complex64, Complex128);

impl GemmElement for f32 {
    fn gemm_on(
        a: MatRef<'_, Self>,
        b: MatRef<'_, Self>,
        dst: MatMut<'_, Self>,
        threads: Threads,
    ) -> Result<(), KernelError> {
        let (m, n, k) = product_dims(&a, &b, &dst)?;
        if packed_f32::applies(m, n, k, (dst.row_stride(), dst.col_stride())) {
            packed_f32::gemm(a, b, dst, threads)
        } else {
            raw::gemm(a, b, dst, threads)
        }
    }

    fn pack_rhs(b: MatRef<'_, Self>) -> Option<PackedRhs> {
        if !packed_f32::is_faster_here() {
            return None;
        }
        packed_f32::PackedB::new(b).ok().map(PackedRhs)
    }

    fn gemm_packed_on(
        a: MatRef<'_, Self>,
        b: MatRef<'_, Self>,
        packed: Option<&PackedRhs>,
        dst: MatMut<'_, Self>,
        threads: Threads,
    ) -> Result<(), KernelError> {
        let (m, n, k) = product_dims(&a, &b, &dst)?;
        match packed {
            Some(PackedRhs(packed))
                if packed.dims() == (k, n)
                    && packed_f32::applies_packed(m, (dst.row_stride(), dst.col_stride())) =>
            {
                packed_f32::gemm_packed(a, packed, dst, threads)
            }
            _ => Self::gemm_on(a, b, dst, threads),
        }
    }
}

macro_rules! int_gemm {
    ($($t:ty),*) => {$(
        impl GemmElement for $t {
            fn gemm_on(
                a: MatRef<'_, Self>,
                b: MatRef<'_, Self>,
                dst: MatMut<'_, Self>,
                threads: Threads,
            ) -> Result<(), KernelError> {
                int::gemm(a, b, dst, threads)
            }
        }
    )*};
}

int_gemm!(i16, i32, i64);

macro_rules! via_f32_gemm {
    ($($t:ty),*) => {$(
        impl GemmElement for $t {
            fn gemm_on(
                a: MatRef<'_, Self>,
                b: MatRef<'_, Self>,
                mut dst: MatMut<'_, Self>,
                threads: Threads,
            ) -> Result<(), KernelError> {
                let (m, n, _) = product_dims(&a, &b, &dst)?;
                let a32 = a.copy_dense(<$t>::to_f32)?;
                let b32 = b.copy_dense(<$t>::to_f32)?;
                let mut out = dense_buffer::<f32>(m.checked_mul(n))?;
                f32::gemm_on(a32.view(), b32.view(), MatMut::row_major(&mut out, m, n)?, threads)?;
                dst.assign_rows(&out, <$t>::from_f32);
                Ok(())
            }
        }
    )*};
}

via_f32_gemm!(f16, bf16);

/// A zeroed scratch buffer of `len` elements (`None`: the size overflowed);
/// errors instead of aborting when the memory cannot be had.
pub(crate) fn dense_buffer<T: Element>(len: Option<usize>) -> Result<Vec<T>, KernelError> {
    let mut v = empty_buffer(len)?;
    v.resize(len.unwrap_or(0), T::default());
    Ok(v)
}

/// An empty scratch buffer with room for exactly `len` elements (`None`:
/// the size overflowed), for a caller that appends them; errors instead of
/// aborting when the memory cannot be had.
pub(crate) fn empty_buffer<T>(len: Option<usize>) -> Result<Vec<T>, KernelError> {
    let len = len.ok_or_else(|| {
        KernelError::resource_exhausted("matrix scratch buffer size overflows usize")
    })?;
    let mut v = Vec::new();
    v.try_reserve_exact(len).map_err(|_| {
        KernelError::resource_exhausted(format!(
            "could not allocate a matrix scratch buffer of {len} elements"
        ))
    })?;
    Ok(v)
}

/// A `MatMul`'s attrs and its constant `b`, packed once when offered
/// (shared by `MatMul` and `_FusedMatMul`).
#[derive(Debug)]
pub(crate) struct MatMulParams {
    transpose_a: bool,
    transpose_b: bool,
    constant_b: ConstantRhs,
}

impl MatMulParams {
    /// Reads `transpose_a` and `transpose_b`.
    pub(crate) fn from_attrs(
        ctx: &registry_core::kernel::OpKernelConstruction<'_>,
    ) -> Result<Self, KernelError> {
        Ok(Self {
            transpose_a: ctx.attr("transpose_a")?,
            transpose_b: ctx.attr("transpose_b")?,
            constant_b: ConstantRhs::default(),
        })
    }

    /// Packs `b` (input 1) when it is a constant (see
    /// `OpKernel::prepare_constant_input`); other inputs are ignored.
    pub(crate) fn offer_constant<T: GemmElement>(&self, index: usize, value: &Tensor) {
        if index == 1 {
            self.constant_b.offer::<T>(value, |b, elements| {
                operand_view(elements, matrix_dims(b, 1)?, self.transpose_b)
            });
        }
    }

    /// `MatMul` of inputs 0 and 1 (either transposed) into output 0 (also
    /// `_FusedMatMul`'s contraction); returns the product's column count.
    pub(crate) fn multiply<T: GemmElement>(
        &self,
        ctx: &mut registry_core::kernel::OpKernelContext<'_>,
    ) -> Result<usize, KernelError> {
        let (transpose_a, transpose_b) = (self.transpose_a, self.transpose_b);
        let a = ctx.input(0)?.clone();
        let b = ctx.input(1)?.clone();
        let (a_dims, b_dims) = (matrix_dims(&a, 0)?, matrix_dims(&b, 1)?);
        // TF's dim_pair: the contracted dimension of each operand.
        let a_inner = usize::from(!transpose_a);
        let b_inner = usize::from(transpose_b);
        registry_core::kernel_ensure!(
            a_dims[a_inner] == b_dims[b_inner],
            "Matrix size-incompatible: In[0]: {}, In[1]: {}",
            a.shape(),
            b.shape()
        );
        let (m, k, n) = (a_dims[1 - a_inner], a_dims[a_inner], b_dims[1 - b_inner]);
        let out = ctx.allocate_output_to_overwrite(0, [m, n])?;
        if m == 0 || n == 0 || k == 0 {
            // Empty product, or k = 0: zeros are the answer.
            out.as_mut_slice::<T>()?.fill(T::default());
            return Ok(n);
        }
        T::gemm_packed_on(
            operand_view(a.as_slice::<T>()?, a_dims, transpose_a)?,
            operand_view(b.as_slice::<T>()?, b_dims, transpose_b)?,
            self.constant_b.packed_for(&b),
            MatMut::row_major(out.as_mut_slice::<T>()?, m, n)?,
            Threads::Pool,
        )?;
        Ok(n)
    }
}

/// A MatMul operand of `dims` (row-major `elements`) as the product reads
/// it: transposed (through strides, no copy) when `transpose`.
fn operand_view<T: Copy>(
    elements: &[T],
    [rows, cols]: [usize; 2],
    transpose: bool,
) -> Result<MatRef<'_, T>, KernelError> {
    let view = MatRef::row_major(elements, rows, cols)?;
    Ok(if transpose { view.t() } else { view })
}

/// The two dimensions of input `index`, or TF's error when it is not a
/// matrix.
fn matrix_dims(t: &Tensor, index: usize) -> Result<[usize; 2], KernelError> {
    match *t.dims() {
        [rows, cols] => Ok([rows, cols]),
        _ => Err(KernelError::invalid_argument(format!(
            "In[{index}] is not a matrix. Instead it has shape {}",
            t.shape()
        ))),
    }
}

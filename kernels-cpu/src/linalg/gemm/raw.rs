//! The one call into the `gemm` crate (raw pointers and strides), behind a
//! safe function that takes checked views.

use gemm::Parallelism;
use registry_core::kernel::KernelError;
use registry_core::tensor::{Complex64, Complex128};

use super::{MatMut, MatRef, Threads, product_dims, thread_count};

/// An element type the `gemm` crate multiplies natively, with the type it
/// is known as there (same size, alignment and layout).
pub(super) trait Native: Copy + Default + 'static {
    /// The `gemm` crate's type for this element.
    type G: Copy + 'static;
    /// Zero, as `G`.
    const ZERO: Self::G;
    /// One, as `G`.
    const ONE: Self::G;
}

impl Native for f32 {
    type G = f32;
    const ZERO: f32 = 0.0;
    const ONE: f32 = 1.0;
}

impl Native for f64 {
    type G = f64;
    const ZERO: f64 = 0.0;
    const ONE: f64 = 1.0;
}

impl Native for Complex64 {
    type G = gemm::c32;
    const ZERO: gemm::c32 = gemm::c32::new(0.0, 0.0);
    const ONE: gemm::c32 = gemm::c32::new(1.0, 0.0);
}

impl Native for Complex128 {
    type G = gemm::c64;
    const ZERO: gemm::c64 = gemm::c64::new(0.0, 0.0);
    const ONE: gemm::c64 = gemm::c64::new(1.0, 0.0);
}

// Our complex types are `#[repr(C)] { re, im }` like `num_complex::Complex`
// (which `gemm::c32`/`c64` are): same size, alignment and field offsets, so
// a pointer to one may be read as a pointer to the other.
const _: () = {
    use std::mem::{align_of, offset_of, size_of};
    assert!(size_of::<Complex64>() == size_of::<gemm::c32>());
    assert!(align_of::<Complex64>() == align_of::<gemm::c32>());
    assert!(offset_of!(Complex64, re) == offset_of!(gemm::c32, re));
    assert!(offset_of!(Complex64, im) == offset_of!(gemm::c32, im));
    assert!(size_of::<Complex128>() == size_of::<gemm::c64>());
    assert!(align_of::<Complex128>() == align_of::<gemm::c64>());
    assert!(offset_of!(Complex128, re) == offset_of!(gemm::c64, re));
    assert!(offset_of!(Complex128, im) == offset_of!(gemm::c64, im));
};

/// Lowers the `gemm` crate's own threading threshold (48·48·256, checked
/// per block of the product when it is given threads) to the least of
/// ours, once, so that a product this module hands threads to uses them.
/// (The threshold is the crate's, for the whole process.)
fn lower_crate_threshold() {
    static DONE: std::sync::Once = std::sync::Once::new();
    DONE.call_once(|| {
        gemm::set_threading_threshold(crate::split::least_parallel_work(super::PARALLEL_THRESHOLD));
    });
}

/// `dst = a · b` with the `gemm` crate. Shapes are checked; `k = 0` writes
/// zeros; large products run on the rayon pool when `threads` allows.
pub(super) fn gemm<T: Native>(
    a: MatRef<'_, T>,
    b: MatRef<'_, T>,
    mut dst: MatMut<'_, T>,
    threads: Threads,
) -> Result<(), KernelError> {
    let (m, n, k) = product_dims(&a, &b, &dst)?;
    if m == 0 || n == 0 {
        return Ok(());
    }
    if k == 0 {
        dst.fill(T::default());
        return Ok(());
    }
    let parallelism = match thread_count(threads, m.saturating_mul(n).saturating_mul(k)) {
        1 => Parallelism::None,
        n_threads => {
            lower_crate_threshold();
            Parallelism::Rayon(n_threads)
        }
    };
    // (The views' constructors already checked that strides fit in isize.)
    let stride = |s: usize| {
        isize::try_from(s).map_err(|_| KernelError::internal("matrix stride overflows isize"))
    };
    let (dst_rs, dst_cs) = (stride(dst.row_stride())?, stride(dst.col_stride())?);
    let (a_rs, a_cs) = (stride(a.row_stride())?, stride(a.col_stride())?);
    let (b_rs, b_cs) = (stride(b.row_stride())?, stride(b.col_stride())?);
    let dst_ptr = dst.data_mut().as_mut_ptr().cast::<T::G>();
    let a_ptr = a.data().as_ptr().cast::<T::G>();
    let b_ptr = b.data().as_ptr().cast::<T::G>();
    // SAFETY: `T` and `T::G` have the same layout (identical types for
    // f32/f64; the const assertions above for the complex types), so
    // the casts reinterpret nothing. `a` is m×k, `b` k×n and `dst` m×n
    // (`product_dims`), each a view whose constructor proved that every
    // element (i, j) at `i*row_stride + j*col_stride` is inside its slice,
    // with m, n, k > 0 here. `dst` holds the only (mutable) borrow of its
    // slice, so it does not alias `a` or `b`, and its elements are pairwise
    // distinct (checked by `MatMut::new`), as gemm requires for writing in
    // parallel. With `read_dst = false` gemm never reads `dst` (alpha is
    // ignored) and writes `beta · a · b` = `a · b`. `gemm::gemm` panics
    // only for element types other than f32/f64/f16/c32/c64, and `T::G` is
    // one of those (f32, f64, c32 or c64).
    unsafe {
        gemm::gemm::<T::G>(
            m,
            n,
            k,
            dst_ptr,
            dst_cs,
            dst_rs,
            false,
            a_ptr,
            a_cs,
            a_rs,
            b_ptr,
            b_cs,
            b_rs,
            T::ZERO,
            T::ONE,
            false,
            false,
            false,
            parallelism,
        );
    }
    Ok(())
}

//! Integer matrix products: a cache-blocked loop with wrapping arithmetic
//! (TensorFlow's integer MatMul wraps on overflow, two's complement).

use rayon::prelude::*;
use registry_core::kernel::KernelError;

use super::{MatMut, MatRef, Threads, dense_buffer, product_dims};
use crate::numeric::Element;

/// An integer with wrapping multiply-add.
pub(super) trait WrappingInt: Element {
    /// `self + a * b`, wrapping.
    fn mul_add_wrapping(self, a: Self, b: Self) -> Self;
}

macro_rules! wrapping_int {
    ($($t:ty),*) => {$(
        impl WrappingInt for $t {
            #[inline(always)]
            fn mul_add_wrapping(self, a: Self, b: Self) -> Self {
                self.wrapping_add(a.wrapping_mul(b))
            }
        }
    )*};
}

wrapping_int!(i8, i16, i32, i64, u8, u16, u32, u64);

/// Columns of the output handled per block (a row segment stays in L1).
const N_BLOCK: usize = 512;
/// Depth handled per block (a `K_BLOCK × N_BLOCK` panel of `b` stays in L2).
const K_BLOCK: usize = 256;
/// Below this many multiply-adds one thread does all the work.
const PARALLEL_THRESHOLD: usize = 1 << 18;

/// `dst = a · b`, wrapping.
pub(super) fn gemm<T: WrappingInt>(
    a: MatRef<'_, T>,
    b: MatRef<'_, T>,
    mut dst: MatMut<'_, T>,
    threads: Threads,
) -> Result<(), KernelError> {
    let (m, n, k) = product_dims(&a, &b, &dst)?;
    if m == 0 || n == 0 {
        return Ok(());
    }
    // `b`'s rows must be contiguous for the inner loop: pack it otherwise.
    let b_packed: Vec<T>;
    let (b_data, b_rs) = if b.col_stride() == 1 {
        (b.data(), b.row_stride())
    } else {
        b_packed = b.copy_dense(|v| v)?.into_data();
        (b_packed.as_slice(), n)
    };
    let panel = Panel {
        a,
        b: b_data,
        b_rs,
        n,
        k,
        threads,
    };
    if dst.col_stride() == 1 && (m == 1 || dst.row_stride() >= n) {
        let rs = if m == 1 { n } else { dst.row_stride() };
        panel.run(dst.data_mut(), rs, m);
    } else {
        let mut tmp = dense_buffer::<T>(m.checked_mul(n))?;
        panel.run(&mut tmp, n, m);
        dst.assign_rows(&tmp, |v| v);
    }
    Ok(())
}

/// The operands of one product, `b` as contiguous rows.
struct Panel<'a, T> {
    a: MatRef<'a, T>,
    b: &'a [T],
    b_rs: usize,
    n: usize,
    k: usize,
    threads: Threads,
}

impl<T: WrappingInt> Panel<'_, T> {
    /// Writes rows `0..m` of the product to `out`, row `i` at
    /// `out[i * rs..i * rs + n]`, splitting rows over threads when large.
    fn run(&self, out: &mut [T], rs: usize, m: usize) {
        let work = m.saturating_mul(self.n).saturating_mul(self.k);
        let threads = rayon::current_num_threads();
        if self.threads == Threads::Caller || work < PARALLEL_THRESHOLD || m < 2 || threads < 2 {
            self.rows(out, rs, 0, m);
            return;
        }
        let rows_per_task = m.div_ceil(threads * 4).max(1);
        out.par_chunks_mut(rs.saturating_mul(rows_per_task).max(1))
            .enumerate()
            .for_each(|(c, chunk)| {
                let start = c.saturating_mul(rows_per_task);
                let end = start.saturating_add(rows_per_task).min(m);
                if start < end {
                    self.rows(chunk, rs, start, end);
                }
            });
    }

    /// Rows `start..end` of the product into `out` (row `start` first).
    fn rows(&self, out: &mut [T], rs: usize, start: usize, end: usize) {
        let (n, k) = (self.n, self.k);
        for i in 0..end - start {
            if let Some(row) = out.get_mut(i * rs..i * rs + n) {
                row.fill(T::default());
            }
        }
        for j0 in (0..n).step_by(N_BLOCK) {
            let j1 = (j0 + N_BLOCK).min(n);
            for p0 in (0..k).step_by(K_BLOCK) {
                let p1 = (p0 + K_BLOCK).min(k);
                for i in start..end {
                    let local = i - start;
                    let Some(row) = out.get_mut(local * rs + j0..local * rs + j1) else {
                        continue;
                    };
                    let a_base = i * self.a.row_stride();
                    for p in p0..p1 {
                        let Some(&av) = self.a.data().get(a_base + p * self.a.col_stride()) else {
                            continue;
                        };
                        let b_start = p * self.b_rs;
                        let Some(b_row) = self.b.get(b_start + j0..b_start + j1) else {
                            continue;
                        };
                        for (o, &bv) in row.iter_mut().zip(b_row) {
                            *o = o.mul_add_wrapping(av, bv);
                        }
                    }
                }
            }
        }
    }
}

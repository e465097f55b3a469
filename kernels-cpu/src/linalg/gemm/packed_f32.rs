//! `f32` products on x86-64 with AVX2 and FMA but no AVX-512: blocked the
//! way BLIS blocks them, around a 6×16 register tile of FMAs.
//!
//! On such machines the `gemm` crate's `f32` path ran at 1.2 to 1.25 times
//! NumPy/OpenBLAS's time from 1024×1024 up (both on 2 threads); this one
//! matches OpenBLAS there. (With AVX-512 the crate's 512-bit kernels are the
//! faster, and it keeps those products; see [`applies`].)
//!
//! The product is cut into blocks of `KC` contracted indices by up to `NC`
//! columns of `b`. Each block of `b` is packed once into panels of 16
//! columns (`NR`), shared by all threads; each thread takes a contiguous
//! share of `dst`'s rows and packs `MC` of them at a time from `a` into
//! panels of 6 rows (`MR`), kept in its L2 cache, then multiplies each
//! 6-row panel with each 16-column panel in registers (12 accumulators of
//! 8 floats: 6 broadcasts and 2 loads feed 12 FMAs per contracted index),
//! storing (or adding) the 6×16 results straight into `dst`. Panels past
//! the matrix's edge are padded with zeros; such tiles go through a buffer
//! and only their part inside the matrix is copied out. Rows of `a` of at
//! most [`DIRECT_A_MAX_K`] contracted indices (1×1 convolutions over few
//! channels), and any rows when a block of `b` has at most
//! [`DIRECT_A_MAX_PANELS`] panels, are read in place by the full 6-row
//! tiles instead of packed.
//!
//! A constant `b` (weights) can be packed once, every block of it, as
//! [`PackedB`]; [`gemm_packed`] then multiplies without packing `b`, and
//! takes products of any width and depth from [`MIN_PACKED_ROWS`] rows
//! (measured at parity with the `gemm` crate on MobileNet's small 1×1
//! convolutions, which [`gemm`] leaves to it).

use rayon::prelude::*;
use registry_core::kernel::KernelError;

use super::{MatMut, MatRef, Threads, dense_buffer, product_dims, thread_count};

/// Rows of the register tile (rows of `a` broadcast per contracted index).
const MR: usize = 6;
/// Columns of the register tile (two vectors of 8 floats of `b`).
const NR: usize = 16;
/// Contracted indices per block: a 16-column panel of `b` (32 KiB) stays
/// in L1 while the 6-row panels of `a` stream past it.
const KC: usize = 512;
/// Rows of `a` packed per block (72 × 512 floats: 144 KiB, in L2).
const MC: usize = 72;
/// Columns of `b` packed per block (4096 × 512 floats: 8 MiB, in L3).
const NC: usize = 4096;

/// The least rows, columns and contracted indices of a product this module
/// takes. Smaller ones (the 1×1 convolutions of MobileNet: 2304×96×16,
/// 576×24×144, 36×96×576) measured as fast or faster with the `gemm`
/// crate, whose tiles fit their edges better; from 256×256×256 up this
/// module is the faster.
const MIN_SIDE: usize = 128;

/// The least rows of a product with `b` packed ahead of time that this
/// module takes (fewer: the `gemm` crate's matrix-vector paths).
const MIN_PACKED_ROWS: usize = 16;

/// Contracted indices up to which full 6-row tiles read `a`'s rows where
/// they are instead of packing them: short rows stay in L1 across the
/// tiles that share them, and packing them (a transpose, one float at a
/// time) cost as much as a third of a 1×1 convolution over 8 channels.
const DIRECT_A_MAX_K: usize = 32;

/// Panels of `b` per block up to which full 6-row tiles read `a`'s rows in
/// place whatever their length: packing a panel of `a` pays back over the
/// panels of `b` it is multiplied by, and one or two do not repay it
/// (MobileNet's projections to 24 and 32 channels; one thread, min per
/// run 891-895 -> 875-885 us; unet_small and transformer_encoder
/// unchanged).
const DIRECT_A_MAX_PANELS: usize = 2;

/// Products of one block whose `b` has at most this many floats (256 KiB)
/// have each thread pack all of `b` (see [`Rows::one_small_block`]).
const PRIVATE_B_MAX: usize = 64 * 1024;

/// Whether this module multiplies an `m×k` by `k×n` product here: on
/// x86-64 with AVX2 and FMA and without AVX-512F, outside Miri, for
/// products of at least [`MIN_SIDE`] each way whose destination has unit
/// stride one way.
pub(super) fn applies(m: usize, n: usize, k: usize, dst_strides: (usize, usize)) -> bool {
    let unit = dst_strides.1 == 1 || dst_strides.0 == 1;
    unit && m.min(n).min(k) >= MIN_SIDE && is_faster_here()
}

/// AVX2 and FMA present and AVX-512F absent: where this module is the
/// faster engine. (`is_x86_feature_detected!` caches what it finds.)
pub(super) fn is_faster_here() -> bool {
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    return has_avx2_fma() && !std::arch::is_x86_feature_detected!("avx512f");
    #[cfg(not(all(target_arch = "x86_64", not(miri))))]
    false
}

/// AVX2 and FMA present (and not under Miri, which runs no SIMD
/// intrinsics): what this module needs to run at all.
fn has_avx2_fma() -> bool {
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    return std::arch::is_x86_feature_detected!("avx2")
        && std::arch::is_x86_feature_detected!("fma");
    #[cfg(not(all(target_arch = "x86_64", not(miri))))]
    false
}

/// A read-only strided matrix as this module walks it.
#[derive(Clone, Copy)]
struct Operand<'a> {
    data: &'a [f32],
    row_stride: usize,
    col_stride: usize,
}

impl<'a> From<MatRef<'a, f32>> for Operand<'a> {
    fn from(view: MatRef<'a, f32>) -> Self {
        Self {
            data: view.data(),
            row_stride: view.row_stride(),
            col_stride: view.col_stride(),
        }
    }
}

impl Operand<'_> {
    /// The transpose (the strides swap).
    fn transposed(self) -> Self {
        Self {
            data: self.data,
            row_stride: self.col_stride,
            col_stride: self.row_stride,
        }
    }

    fn at(&self, i: usize, j: usize) -> f32 {
        self.data[i * self.row_stride + j * self.col_stride]
    }
}

/// `dst = a · b` (overwriting `dst`). Shapes must agree. Errors when the
/// CPU lacks AVX2/FMA (callers check [`applies`] first) or a scratch
/// buffer cannot be had.
pub(super) fn gemm(
    a: MatRef<'_, f32>,
    b: MatRef<'_, f32>,
    mut dst: MatMut<'_, f32>,
    threads: Threads,
) -> Result<(), KernelError> {
    let (m, n, k) = product_dims(&a, &b, &dst)?;
    if done_without_tiles((m, n, k), &mut dst)? {
        return Ok(());
    }
    let (dst_rs, dst_cs) = (dst.row_stride(), dst.col_stride());
    let (a_op, b_op) = (Operand::from(a), Operand::from(b));
    let threads = thread_count(threads, m.saturating_mul(n).saturating_mul(k));
    // (A single row's stride is never used: it may be anything, 0 too.)
    let rows = if dst_cs == 1 {
        Rows {
            m,
            n,
            k,
            a: a_op,
            b: RightOperand::Strided(b_op),
            row_stride: if m == 1 { n } else { dst_rs },
        }
    } else if dst_rs == 1 {
        // dstᵀ = bᵀ · aᵀ, with dstᵀ's rows contiguous.
        Rows {
            m: n,
            n: m,
            k,
            a: b_op.transposed(),
            b: RightOperand::Strided(a_op.transposed()),
            row_stride: if n == 1 { m } else { dst_cs },
        }
    } else {
        return Err(KernelError::internal(
            "the packed f32 product needs a destination with unit stride one way",
        ));
    };
    rows.run(dst.data_mut(), threads)
}

/// Whether [`gemm_packed`] multiplies an `m×k` by `k×n` product whose `b`
/// is packed: as [`applies`], but from [`MIN_PACKED_ROWS`] rows and any
/// `n` and `k` (no packing of `b` to pay back), into a destination with
/// contiguous rows.
pub(super) fn applies_packed(m: usize, dst_strides: (usize, usize)) -> bool {
    dst_strides.1 == 1 && m >= MIN_PACKED_ROWS && is_faster_here()
}

/// `dst = a · b` with `b` packed ahead of time (overwriting `dst`, whose
/// rows must be contiguous). Shapes must agree; errors as [`gemm`].
pub(super) fn gemm_packed(
    a: MatRef<'_, f32>,
    b: &PackedB,
    mut dst: MatMut<'_, f32>,
    threads: Threads,
) -> Result<(), KernelError> {
    let (m, k) = (a.rows(), a.cols());
    let n = dst.cols();
    if b.dims() != (k, n) || dst.rows() != m || dst.col_stride() != 1 {
        return Err(KernelError::internal(format!(
            "packed matrix product of mismatched views: [{m},{k}] x {:?} -> [{},{}] (column stride {})",
            b.dims(),
            dst.rows(),
            n,
            dst.col_stride()
        )));
    }
    if done_without_tiles((m, n, k), &mut dst)? {
        return Ok(());
    }
    let rows = Rows {
        m,
        n,
        k,
        a: Operand::from(a),
        b: RightOperand::Packed(b),
        row_stride: if m == 1 { n } else { dst.row_stride() },
    };
    let threads = thread_count(threads, m.saturating_mul(n).saturating_mul(k));
    rows.run(dst.data_mut(), threads)
}

/// Checks that the CPU has what the tiles need, and finishes the products
/// that need none: `true` when `dst` is done (nothing to write, or `k = 0`:
/// zeros).
fn done_without_tiles(
    (m, n, k): (usize, usize, usize),
    dst: &mut MatMut<'_, f32>,
) -> Result<bool, KernelError> {
    if !has_avx2_fma() {
        return Err(KernelError::internal(
            "the packed f32 product needs AVX2 and FMA",
        ));
    }
    if k == 0 && m > 0 && n > 0 {
        dst.fill(0.0);
    }
    Ok(m == 0 || n == 0 || k == 0)
}

/// A product whose destination rows are contiguous: `dst[i * row_stride +
/// j] = Σ_p a(i, p) · b(p, j)` for `i < m`, `j < n`.
struct Rows<'a> {
    m: usize,
    n: usize,
    k: usize,
    a: Operand<'a>,
    b: RightOperand<'a>,
    row_stride: usize,
}

/// `b` as a product is given it: strided (packed block by block as the
/// product goes), or packed ahead of time.
#[derive(Clone, Copy)]
enum RightOperand<'a> {
    Strided(Operand<'a>),
    Packed(&'a PackedB),
}

/// A right-hand operand packed once for many products (a constant weight
/// matrix): every block [`gemm`] would pack, in the order it takes them
/// (for each `NC` columns, for each `KC` contracted indices, the block's
/// panels of `NR` columns).
pub(crate) struct PackedB {
    k: usize,
    n: usize,
    panels: Vec<f32>,
}

impl std::fmt::Debug for PackedB {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PackedB")
            .field("k", &self.k)
            .field("n", &self.n)
            .finish_non_exhaustive()
    }
}

impl PackedB {
    /// Packs `b` (k×n); errors when the memory cannot be had.
    pub(crate) fn new(b: MatRef<'_, f32>) -> Result<Self, KernelError> {
        let (k, n) = (b.rows(), b.cols());
        let len = n
            .div_ceil(NR)
            .checked_mul(NR)
            .and_then(|columns| columns.checked_mul(k));
        let mut panels = dense_buffer::<f32>(len)?;
        let b = Operand::from(b);
        let mut at = 0;
        for jc in (0..n).step_by(NC) {
            let nc = (n - jc).min(NC);
            for pc in (0..k).step_by(KC) {
                let kc = (k - pc).min(KC);
                let len = packed_b_len(nc, kc);
                pack_all_b(b, jc, nc, pc, kc, &mut panels[at..at + len]);
                at += len;
            }
        }
        Ok(Self { k, n, panels })
    }

    /// Its contracted indices and columns (`b`'s rows and columns).
    pub(crate) fn dims(&self) -> (usize, usize) {
        (self.k, self.n)
    }

    /// The packed block of `kc` indices from `pc` by `nc` columns from `jc`.
    fn block(&self, jc: usize, nc: usize, pc: usize, kc: usize) -> &[f32] {
        // Blocks of whole `NC` columns (a multiple of `NR`) come first.
        let start = jc * self.k + nc.div_ceil(NR) * NR * pc;
        &self.panels[start..start + packed_b_len(nc, kc)]
    }
}

type Scratch = std::thread::LocalKey<std::cell::RefCell<Vec<f32>>>;

thread_local! {
    /// This thread's packed block of `b` (shared with the pool while it
    /// multiplies), kept between products.
    static PACKED_B: std::cell::RefCell<Vec<f32>> = const { std::cell::RefCell::new(Vec::new()) };
    /// This thread's packed rows of `a`, kept between products.
    static PACKED_A: std::cell::RefCell<Vec<f32>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Takes this thread's `scratch` buffer, grown to `len` elements;
/// [`give_back`] returns it.
fn take_scratch(scratch: &'static Scratch, len: usize) -> Result<Vec<f32>, KernelError> {
    let buf = scratch.with(|s| std::mem::take(&mut *s.borrow_mut()));
    if buf.len() < len {
        return dense_buffer::<f32>(Some(len));
    }
    Ok(buf)
}

fn give_back(scratch: &'static Scratch, buf: Vec<f32>) {
    scratch.with(|s| *s.borrow_mut() = buf);
}

impl Rows<'_> {
    fn run(&self, dst: &mut [f32], threads: usize) -> Result<(), KernelError> {
        let b = match self.b {
            RightOperand::Packed(packed) => return self.packed_blocks(dst, threads, packed),
            RightOperand::Strided(b) => b,
        };
        if threads > 1
            && self.k <= KC
            && self.n <= NC
            && self.n.saturating_mul(self.k) <= PRIVATE_B_MAX
        {
            return self.one_small_block(dst, threads, b);
        }
        let kc_max = self.k.min(KC);
        let nc_max = self.n.min(NC);
        let mut b_packed = take_scratch(&PACKED_B, packed_b_len(nc_max, kc_max))?;
        let result = self.blocks(dst, threads, b, &mut b_packed);
        give_back(&PACKED_B, b_packed);
        result
    }

    /// Contiguous shares of whole 6-row panels, one per thread: the rows
    /// each takes.
    fn share(&self, threads: usize) -> usize {
        self.m.div_ceil(threads).div_ceil(MR) * MR
    }

    /// Every block in turn, `b`'s part packed by all threads together, then
    /// multiplied by each into its share of the rows.
    fn blocks(
        &self,
        dst: &mut [f32],
        threads: usize,
        b: Operand<'_>,
        b_packed: &mut [f32],
    ) -> Result<(), KernelError> {
        for jc in (0..self.n).step_by(NC) {
            let nc = (self.n - jc).min(NC);
            for pc in (0..self.k).step_by(KC) {
                let kc = (self.k - pc).min(KC);
                let panels = &mut b_packed[..packed_b_len(nc, kc)];
                if threads > 1 {
                    panels
                        .par_chunks_mut(NR * kc)
                        .enumerate()
                        .for_each(|(q, panel)| pack_b(b, jc, nc, pc, q, panel));
                } else {
                    pack_all_b(b, jc, nc, pc, kc, panels);
                }
                self.block_into(&self.block(panels, jc, nc, pc, kc), dst, threads)?;
            }
        }
        Ok(())
    }

    /// Every block in turn, `b`'s part as packed ahead of time.
    fn packed_blocks(
        &self,
        dst: &mut [f32],
        threads: usize,
        packed: &PackedB,
    ) -> Result<(), KernelError> {
        for jc in (0..self.n).step_by(NC) {
            let nc = (self.n - jc).min(NC);
            for pc in (0..self.k).step_by(KC) {
                let kc = (self.k - pc).min(KC);
                let panels = packed.block(jc, nc, pc, kc);
                self.block_into(&self.block(panels, jc, nc, pc, kc), dst, threads)?;
            }
        }
        Ok(())
    }

    /// The block of `kc` indices from `pc` by `nc` columns from `jc`, whose
    /// part of `b` is packed in `b_packed`.
    fn block<'b>(
        &'b self,
        b_packed: &'b [f32],
        jc: usize,
        nc: usize,
        pc: usize,
        kc: usize,
    ) -> Block<'b> {
        Block {
            rows: self,
            b_packed,
            jc,
            nc,
            pc,
            kc,
        }
    }

    /// Multiplies `block` into `dst`: each thread its share of the rows.
    fn block_into(
        &self,
        block: &Block<'_>,
        dst: &mut [f32],
        threads: usize,
    ) -> Result<(), KernelError> {
        if threads > 1 {
            let share = self.share(threads);
            dst.par_chunks_mut(share.saturating_mul(self.row_stride))
                .enumerate()
                .try_for_each(|(t, part)| block.rows_into(t * share, part))
        } else {
            block.rows_into(0, dst)
        }
    }

    /// A product of one block whose `b` is small: each thread packs all of
    /// `b` itself, so that the threads meet once instead of twice (on a
    /// 256×256 product, waking the pool's threads costs as much as the
    /// packing).
    fn one_small_block(
        &self,
        dst: &mut [f32],
        threads: usize,
        b: Operand<'_>,
    ) -> Result<(), KernelError> {
        let (n, k) = (self.n, self.k);
        let share = self.share(threads);
        dst.par_chunks_mut(share.saturating_mul(self.row_stride))
            .enumerate()
            .try_for_each(|(t, part)| {
                let mut b_packed = take_scratch(&PACKED_B, packed_b_len(n, k))?;
                let panels = &mut b_packed[..packed_b_len(n, k)];
                pack_all_b(b, 0, n, 0, k, panels);
                let result = self.block(panels, 0, n, 0, k).rows_into(t * share, part);
                give_back(&PACKED_B, b_packed);
                result
            })
    }
}

/// Packs panel `q` of the block of `b` at (`pc`, `jc`), `nc` columns wide,
/// into `panel`.
fn pack_b(b: Operand<'_>, jc: usize, nc: usize, pc: usize, q: usize, panel: &mut [f32]) {
    pack_b_panel(b, pc, jc + q * NR, (nc - q * NR).min(NR), panel);
}

/// Packs every panel of the block of `b` at (`pc`, `jc`) into `panels`.
fn pack_all_b(b: Operand<'_>, jc: usize, nc: usize, pc: usize, kc: usize, panels: &mut [f32]) {
    for (q, panel) in panels.chunks_mut(NR * kc).enumerate() {
        pack_b(b, jc, nc, pc, q, panel);
    }
}

/// Floats of a packed block of `b`, `nc` columns by `kc` indices.
fn packed_b_len(nc: usize, kc: usize) -> usize {
    nc.div_ceil(NR) * NR * kc
}

/// One block of the product: `kc` contracted indices from `pc`, `nc`
/// columns from `jc`, `b`'s part packed.
struct Block<'a> {
    rows: &'a Rows<'a>,
    b_packed: &'a [f32],
    jc: usize,
    nc: usize,
    pc: usize,
    kc: usize,
}

impl Block<'_> {
    /// Adds this block's share to the rows of `dst` from `first_row` on
    /// that `part` holds (it starts at row `first_row`; the first block,
    /// `pc == 0`, overwrites instead).
    fn rows_into(&self, first_row: usize, part: &mut [f32]) -> Result<(), KernelError> {
        let Rows { m, row_stride, .. } = *self.rows;
        let last_row = m.min(first_row + part.len().div_ceil(row_stride.max(1)));
        let (kc, nc) = (self.kc, self.nc);
        let mut a_packed = take_scratch(&PACKED_A, MC.div_ceil(MR) * MR * kc)?;
        let a = self.rows.a;
        // Short rows of `a`, or rows used by few panels of `b`, are read
        // where they are (see DIRECT_A_MAX_K, DIRECT_A_MAX_PANELS); only a
        // last panel of fewer than `MR` rows is packed then.
        let short_or_few = kc <= DIRECT_A_MAX_K || nc.div_ceil(NR) <= DIRECT_A_MAX_PANELS;
        let in_place = |rows: usize| rows == MR && a.col_stride == 1 && short_or_few;
        // The first block of the contraction writes; later ones add.
        let add = self.pc > 0;
        let mut tile = Tile([0.0; MR * NR]);
        for ic in (first_row..last_row).step_by(MC) {
            let mc = (last_row - ic).min(MC);
            let a_panels = &mut a_packed[..mc.div_ceil(MR) * MR * kc];
            for (r, panel) in a_panels.chunks_exact_mut(MR * kc).enumerate() {
                let (i0, rows) = (ic + r * MR, (mc - r * MR).min(MR));
                if !in_place(rows) {
                    pack_a_panel(a, i0, self.pc, kc, rows, panel);
                }
            }
            for (q, b_panel) in self.b_packed.chunks_exact(NR * kc).enumerate() {
                let j0 = self.jc + q * NR;
                let cols = (nc - q * NR).min(NR);
                for (r, a_panel) in a_panels.chunks_exact(MR * kc).enumerate() {
                    let i0 = ic + r * MR;
                    let tile_rows = (mc - r * MR).min(MR);
                    let left = if in_place(tile_rows) {
                        LeftPanel::Rows {
                            data: &a.data[i0 * a.row_stride + self.pc..],
                            row_stride: a.row_stride,
                        }
                    } else {
                        LeftPanel::Packed(a_panel)
                    };
                    let offset = (i0 - first_row) * row_stride + j0;
                    prefetch_rows(part, offset, row_stride, tile_rows);
                    if tile_rows == MR && cols == NR {
                        let data = &mut part[offset..];
                        let out = TileOut::Rows {
                            data,
                            row_stride,
                            add,
                        };
                        multiply_panels(kc, left, b_panel, out);
                        continue;
                    }
                    // An edge tile: through the tile buffer, its rows and
                    // columns inside the matrix copied out.
                    multiply_panels(kc, left, b_panel, TileOut::Tile(&mut tile));
                    for (i, tile_row) in tile.0.chunks_exact(NR).take(tile_rows).enumerate() {
                        let at = offset + i * row_stride;
                        let out = &mut part[at..at + cols];
                        if add {
                            out.iter_mut().zip(tile_row).for_each(|(o, &t)| *o += t);
                        } else {
                            out.copy_from_slice(&tile_row[..cols]);
                        }
                    }
                }
            }
        }
        give_back(&PACKED_A, a_packed);
        Ok(())
    }
}

/// Packs rows `i0..i0 + rows` (at most `MR`) of `a`, contracted indices
/// `p0..p0 + kc`, into `panel` (`MR * kc` floats): for each index, the
/// `MR` rows' values in turn, zeros past `rows`.
fn pack_a_panel(a: Operand<'_>, i0: usize, p0: usize, kc: usize, rows: usize, panel: &mut [f32]) {
    if rows == MR && a.col_stride == 1 {
        let start = |i: usize| (i0 + i) * a.row_stride + p0;
        let src: [&[f32]; MR] = std::array::from_fn(|i| &a.data[start(i)..start(i) + kc]);
        for (p, slot) in panel.chunks_exact_mut(MR).enumerate() {
            for (value, row) in slot.iter_mut().zip(&src) {
                *value = row[p];
            }
        }
    } else {
        for (p, slot) in panel.chunks_exact_mut(MR).enumerate() {
            for (i, value) in slot.iter_mut().enumerate() {
                *value = if i < rows { a.at(i0 + i, p0 + p) } else { 0.0 };
            }
        }
    }
}

/// Packs columns `j0..j0 + cols` (at most `NR`) of `b` into `panel`
/// (`NR * kc` floats for contracted indices `p0..p0 + kc`): for each index,
/// the `NR` columns' values, zeros past `cols`.
fn pack_b_panel(b: Operand<'_>, p0: usize, j0: usize, cols: usize, panel: &mut [f32]) {
    for (p, slot) in panel.chunks_exact_mut(NR).enumerate() {
        if cols == NR && b.col_stride == 1 {
            let at = (p0 + p) * b.row_stride + j0;
            slot.copy_from_slice(&b.data[at..at + NR]);
        } else {
            for (j, value) in slot.iter_mut().enumerate() {
                *value = if j < cols { b.at(p0 + p, j0 + j) } else { 0.0 };
            }
        }
    }
}

/// The register tile's results, row-major (for tiles at the matrix's
/// edges, whose rows or columns past it are dropped).
#[repr(C, align(32))]
struct Tile([f32; MR * NR]);

/// Asks for the destination rows a tile is about to write to be brought
/// into cache while the tile is computed.
fn prefetch_rows(part: &[f32], offset: usize, row_stride: usize, rows: usize) {
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    for i in 0..rows {
        let row = part
            .as_ptr()
            .wrapping_add(offset + i * row_stride)
            .cast::<i8>();
        // SAFETY: a prefetch is a hint that never faults or changes memory,
        // whatever the address (both lines of the row's 16 floats).
        unsafe {
            use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
            _mm_prefetch::<_MM_HINT_T0>(row);
            _mm_prefetch::<_MM_HINT_T0>(row.wrapping_add(60));
        }
    }
}

/// Where a tile's results go.
enum TileOut<'a> {
    /// The tile buffer (a tile at the matrix's edge).
    Tile(&'a mut Tile),
    /// Straight into `MR` rows of `NR` floats of the destination, row `i`
    /// at `data[i * row_stride..]`, added to what is there when `add`.
    Rows {
        data: &'a mut [f32],
        row_stride: usize,
        add: bool,
    },
}

/// The `MR` rows of `a` a tile multiplies, over `kc` contracted indices.
#[derive(Clone, Copy)]
enum LeftPanel<'a> {
    /// Packed by [`pack_a_panel`]: for each index, the `MR` rows' values.
    Packed(&'a [f32]),
    /// Read where they are: row `i`'s values at `data[i * row_stride..]`,
    /// one after another (rows short enough to stay in L1, see
    /// [`DIRECT_A_MAX_K`]).
    Rows { data: &'a [f32], row_stride: usize },
}

impl LeftPanel<'_> {
    /// Whether it holds `MR` rows of `kc` values.
    fn holds(&self, kc: usize) -> bool {
        match *self {
            LeftPanel::Packed(panel) => panel.len() >= MR * kc,
            LeftPanel::Rows { data, row_stride } => {
                kc == 0 || data.len() >= (MR - 1) * row_stride + kc
            }
        }
    }

    /// Row `i`'s value at contracted index `p`.
    fn at(&self, i: usize, p: usize) -> f32 {
        match *self {
            LeftPanel::Packed(panel) => panel[p * MR + i],
            LeftPanel::Rows { data, row_stride } => data[i * row_stride + p],
        }
    }
}

/// `out = a_panel · b_panel` (or `+=`) over `kc` contracted indices
/// (`b_panel`: `NR * kc` floats packed by [`pack_b_panel`]).
fn multiply_panels(kc: usize, a_panel: LeftPanel<'_>, b_panel: &[f32], out: TileOut<'_>) {
    assert!(a_panel.holds(kc) && b_panel.len() >= NR * kc);
    let (out, out_stride, add) = match out {
        TileOut::Tile(tile) => (&mut tile.0[..], NR, false),
        TileOut::Rows {
            data,
            row_stride,
            add,
        } => {
            assert!(row_stride >= NR && data.len() >= (MR - 1) * row_stride + NR);
            (data, row_stride, add)
        }
    };
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    if has_avx2_fma() {
        let b = b_panel.as_ptr();
        let out_ptr = out.as_mut_ptr();
        // SAFETY: AVX2 and FMA are present (checked just above); the left
        // panel holds `MR` rows of `kc` floats as its variant lays them
        // out, `b_panel` at least `NR * kc` floats, and `out` `MR` rows of
        // `NR` floats `out_stride` apart (all asserted above), which is all
        // the kernel reads and writes.
        unsafe {
            match a_panel {
                LeftPanel::Packed(panel) => {
                    let a = avx2::PackedRows(panel.as_ptr());
                    avx2::multiply_panels(kc, a, b, out_ptr, out_stride, add)
                }
                LeftPanel::Rows { data, row_stride } => {
                    let a = avx2::StridedRows(data.as_ptr(), row_stride);
                    avx2::multiply_panels(kc, a, b, out_ptr, out_stride, add)
                }
            }
        };
        return;
    }
    // (Not reached: `gemm` checks the features first. Kept correct anyway.)
    for i in 0..MR {
        for j in 0..NR {
            let sum: f32 = (0..kc)
                .map(|p| a_panel.at(i, p) * b_panel[p * NR + j])
                .sum();
            let at = i * out_stride + j;
            out[at] = if add { out[at] + sum } else { sum };
        }
    }
}

#[cfg(all(target_arch = "x86_64", not(miri)))]
mod avx2 {
    use std::arch::x86_64::{
        __m256, _mm256_add_ps, _mm256_broadcast_ss, _mm256_fmadd_ps, _mm256_loadu_ps,
        _mm256_setzero_ps, _mm256_storeu_ps,
    };

    use super::{MR, NR};

    /// Where a tile's `MR` rows of `a` are read from, one contracted index
    /// after another.
    pub(super) trait LeftRows: Copy {
        /// Row `i`'s value at the current index.
        ///
        /// # Safety
        /// `i < MR`, and the rows hold the current index.
        unsafe fn at(self, i: usize) -> *const f32;
        /// The same rows, `steps` indices on.
        ///
        /// # Safety
        /// The rows hold at least `steps` more indices (or exactly that
        /// many, the result then not read).
        unsafe fn advance(self, steps: usize) -> Self;
    }

    /// Rows packed by `pack_a_panel`: index `p`'s `MR` values together.
    #[derive(Clone, Copy)]
    pub(super) struct PackedRows(pub(super) *const f32);

    impl LeftRows for PackedRows {
        #[inline(always)]
        unsafe fn at(self, i: usize) -> *const f32 {
            // SAFETY: the caller's contract (the current index's `MR`
            // values start here).
            unsafe { self.0.add(i) }
        }
        #[inline(always)]
        unsafe fn advance(self, steps: usize) -> Self {
            // SAFETY: the caller's contract.
            Self(unsafe { self.0.add(steps * MR) })
        }
    }

    /// Rows read in place: row `i` at `self.0 + i * self.1`.
    #[derive(Clone, Copy)]
    pub(super) struct StridedRows(pub(super) *const f32, pub(super) usize);

    impl LeftRows for StridedRows {
        #[inline(always)]
        unsafe fn at(self, i: usize) -> *const f32 {
            // SAFETY: the caller's contract (row `i` holds the index).
            unsafe { self.0.add(i * self.1) }
        }
        #[inline(always)]
        unsafe fn advance(self, steps: usize) -> Self {
            // SAFETY: the caller's contract.
            Self(unsafe { self.0.add(steps) }, self.1)
        }
    }

    /// One contracted index: the tile += column of `a` (6 broadcasts) times
    /// row of `b` (2 vectors).
    ///
    /// # Safety
    /// AVX2 and FMA must be present; `a` must hold the index's `MR` values
    /// and `b` point to `NR` readable floats.
    #[inline(always)]
    unsafe fn step<A: LeftRows>(a: A, b: *const f32, acc: &mut [__m256; 2 * MR]) {
        // SAFETY: the caller's contract: `b` and `b + 8` start 8 readable
        // floats each, `a.at(i)` (i < 6) one each.
        unsafe {
            let b0 = _mm256_loadu_ps(b);
            let b1 = _mm256_loadu_ps(b.add(8));
            for i in 0..MR {
                let x = _mm256_broadcast_ss(&*a.at(i));
                acc[2 * i] = _mm256_fmadd_ps(x, b0, acc[2 * i]);
                acc[2 * i + 1] = _mm256_fmadd_ps(x, b1, acc[2 * i + 1]);
            }
        }
    }

    /// `out = a · b` (or `+=` when `add`) over `kc` indices of `a`'s rows
    /// and a packed panel of `b`.
    ///
    /// # Safety
    /// AVX2 and FMA must be present; `a` must hold `kc` indices of its
    /// `MR` rows and `b` point to `NR * kc` readable floats,
    /// `out + i * out_stride` (`i < MR`) to `NR` writable ones.
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn multiply_panels<A: LeftRows>(
        kc: usize,
        a: A,
        b: *const f32,
        out: *mut f32,
        out_stride: usize,
        add: bool,
    ) {
        let mut acc = [_mm256_setzero_ps(); 2 * MR];
        let (mut a, mut b) = (a, b);
        let mut left = kc;
        // SAFETY (all steps): each step reads the current index of `a`'s
        // rows and `NR` floats at `b`, then both advance by one index;
        // `left` counts the indices that remain, so every read is inside
        // what the caller provides.
        while left >= 4 {
            unsafe {
                step(a, b, &mut acc);
                step(a.advance(1), b.add(NR), &mut acc);
                step(a.advance(2), b.add(2 * NR), &mut acc);
                step(a.advance(3), b.add(3 * NR), &mut acc);
                a = a.advance(4);
                b = b.add(4 * NR);
            }
            left -= 4;
        }
        while left > 0 {
            unsafe {
                step(a, b, &mut acc);
                a = a.advance(1);
                b = b.add(NR);
            }
            left -= 1;
        }
        // SAFETY: the caller's contract on `out`.
        unsafe { store(&acc, out, out_stride, add) };
    }

    /// Writes (or adds) the accumulators to `MR` rows of `NR` floats.
    ///
    /// # Safety
    /// AVX must be present; `out + i * out_stride` (`i < MR`) must point
    /// to `NR` writable floats.
    #[inline(always)]
    unsafe fn store(acc: &[__m256; 2 * MR], out: *mut f32, out_stride: usize, add: bool) {
        for (i, pair) in acc.chunks_exact(2).enumerate() {
            // SAFETY: row `i`'s two 8-float halves are the caller's `NR`
            // writable floats.
            unsafe {
                let row = out.add(i * out_stride);
                let (mut lo, mut hi) = (pair[0], pair[1]);
                if add {
                    lo = _mm256_add_ps(lo, _mm256_loadu_ps(row));
                    hi = _mm256_add_ps(hi, _mm256_loadu_ps(row.add(8)));
                }
                _mm256_storeu_ps(row, lo);
                _mm256_storeu_ps(row.add(8), hi);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reference(a: &Operand<'_>, b: &Operand<'_>, m: usize, n: usize, k: usize) -> Vec<f64> {
        let mut out = vec![0.0; m * n];
        for i in 0..m {
            for j in 0..n {
                out[i * n + j] = (0..k)
                    .map(|p| f64::from(a.at(i, p)) * f64::from(b.at(p, j)))
                    .sum();
            }
        }
        out
    }

    /// Values on a grid of eighths, so that every product and sum below is
    /// exact in f32 and the packed product must equal the reference.
    fn grid(len: usize, seed: usize) -> Vec<f32> {
        (0..len)
            .map(|i| ((i * 7 + seed) % 17) as f32 / 8.0 - 1.0)
            .collect()
    }

    /// A pool of 2 threads to multiply on, where the product can run.
    fn pool_of_two() -> Option<rayon::ThreadPool> {
        has_avx2_fma().then(|| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(2)
                .build()
                .expect("a pool of 2 threads")
        })
    }

    #[test]
    fn products_of_every_edge_and_layout_are_exact() {
        let Some(pool) = pool_of_two() else {
            eprintln!("skipped: this CPU has no AVX2/FMA");
            return;
        };
        // Edges of every tile size (m, n around 6 and 16), k across a block
        // boundary (KC + 3), both layouts of each operand, a destination with
        // padded rows and a transposed one, one thread and two.
        // k up to DIRECT_A_MAX_K (and a last block of 3 after KC), and
        // n up to DIRECT_A_MAX_PANELS panels (19), read `a`'s rows in
        // place, except a transposed `a`.
        for &(m, n, k) in &[
            (17, 33, 21),
            (6, 16, 16),
            (77, 19, KC + 3),
            (150, 40, 64),
            (150, 40, DIRECT_A_MAX_K),
            (40, 300, 260),
        ] {
            for (ta, tb, transposed_dst) in [
                (false, false, false),
                (true, false, false),
                (false, true, true),
                (true, true, false),
            ] {
                let a_data = grid(m * k, 1);
                let b_data = grid(k * n, 5);
                let a = if ta {
                    MatRef::new(&a_data, m, k, 1, m).unwrap()
                } else {
                    MatRef::row_major(&a_data, m, k).unwrap()
                };
                let b = if tb {
                    MatRef::new(&b_data, k, n, 1, k).unwrap()
                } else {
                    MatRef::row_major(&b_data, k, n).unwrap()
                };
                let want = reference(&a.into(), &b.into(), m, n, k);
                for threads in [Threads::Caller, Threads::Pool] {
                    let pad = 3;
                    let mut out = vec![f32::NAN; (m + pad) * (n + pad)];
                    let dst = if transposed_dst {
                        MatMut::new(&mut out, m, n, 1, m + pad).unwrap()
                    } else {
                        MatMut::new(&mut out, m, n, n + pad, 1).unwrap()
                    };
                    pool.install(|| gemm(a, b, dst, threads)).unwrap();
                    for i in 0..m {
                        for j in 0..n {
                            let at = if transposed_dst {
                                i + j * (m + pad)
                            } else {
                                i * (n + pad) + j
                            };
                            assert_eq!(
                                f64::from(out[at]),
                                want[i * n + j],
                                "({m},{n},{k}) ta={ta} tb={tb} dst_t={transposed_dst} \
                                 {threads:?} at ({i},{j})"
                            );
                        }
                    }
                    let written = m * n;
                    let untouched = out.iter().filter(|v| v.is_nan()).count();
                    assert_eq!(untouched, out.len() - written, "padding was written");
                }
            }
        }
    }

    /// `b` packed ahead of time, across `KC` and `NC` block edges, on one
    /// thread and two: the same exact products as packing as it goes.
    #[test]
    fn products_with_b_packed_ahead_are_exact() {
        let Some(pool) = pool_of_two() else {
            eprintln!("skipped: this CPU has no AVX2/FMA");
            return;
        };
        for &(m, n, k) in &[
            (17, 33, 21),
            (77, 19, KC + 3),
            (40, 300, 260),
            (13, NC + 21, KC + 5),
            (150, 48, 8),
        ] {
            for tb in [false, true] {
                // With `b` transposed, `a`'s rows are 5 floats apart from
                // one another's ends (read in place when short).
                let a_pitch = if tb { k + 5 } else { k };
                let a_data = grid(m * a_pitch, 3);
                let b_data = grid(k * n, 7);
                let a = MatRef::new(&a_data, m, k, a_pitch, 1).unwrap();
                let b = if tb {
                    MatRef::new(&b_data, k, n, 1, k).unwrap()
                } else {
                    MatRef::row_major(&b_data, k, n).unwrap()
                };
                let packed = PackedB::new(b).unwrap();
                assert_eq!(packed.dims(), (k, n));
                let want = reference(&a.into(), &b.into(), m, n, k);
                for threads in [Threads::Caller, Threads::Pool] {
                    let pad = 2;
                    let mut out = vec![f32::NAN; m * (n + pad)];
                    let dst = MatMut::new(&mut out, m, n, n + pad, 1).unwrap();
                    pool.install(|| gemm_packed(a, &packed, dst, threads))
                        .unwrap();
                    for i in 0..m {
                        for j in 0..n {
                            assert_eq!(
                                f64::from(out[i * (n + pad) + j]),
                                want[i * n + j],
                                "({m},{n},{k}) tb={tb} {threads:?} at ({i},{j})"
                            );
                        }
                        assert!(out[i * (n + pad) + n..][..pad].iter().all(|v| v.is_nan()));
                    }
                }
                // A product whose views disagree with the packed `b` is refused.
                let mut out = vec![0.0; m * (n + 1)];
                let wider = MatMut::row_major(&mut out, m, n + 1).unwrap();
                assert!(gemm_packed(a, &packed, wider, Threads::Caller).is_err());
            }
        }
    }

    #[test]
    fn small_products_are_left_to_the_gemm_crate() {
        assert!(!applies(127, 500, 500, (500, 1)));
        assert!(!applies(500, 127, 500, (127, 1)));
        assert!(!applies(500, 500, 127, (500, 1)));
        assert!(!applies(500, 500, 500, (1000, 2)));
        assert_eq!(applies(128, 128, 128, (128, 1)), is_faster_here());
        assert_eq!(applies(500, 500, 500, (1, 500)), is_faster_here());
        // With `b` packed ahead: any `n` and `k`, rows from MIN_PACKED_ROWS,
        // destinations with contiguous rows only.
        assert!(!applies_packed(MIN_PACKED_ROWS - 1, (8, 1)));
        assert!(!applies_packed(500, (1, 500)));
        assert_eq!(applies_packed(MIN_PACKED_ROWS, (8, 1)), is_faster_here());
    }
}

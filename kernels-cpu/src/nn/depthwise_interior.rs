//! The interior of a depthwise convolution's output rows, vectorised
//! explicitly: multiplier 1, `float`, the pixels whose window lies inside
//! the input's columns (every one of its column taps reads the input).
//!
//! The channels run along the vectors, AVX-512's 16 lanes where the machine
//! has it (else AVX2's 8, through [`pulp`]'s run-time dispatch; AVX2 when
//! the channels are a multiple of 8 but not of 16). Blocks of adjacent
//! output pixels, 8 with one vector of channels, 6 with two (then 4, 2
//! and 1), share each load of the filter's vectors; each pixel's sums stay
//! in registers over the window, a fused multiply-add per tap in the
//! filter's order (rows, then columns) from zero. Channels left over after
//! the whole vectors take partial (masked) loads and stores.
//!
//! The edge pixels, other types and multipliers use the portable row
//! kernel of [`super::depthwise`].

use pulp::{Simd, WithSimd};

/// Where one output row's interior pixels read, and their outputs.
pub(super) struct InteriorRow<'a, T> {
    /// The NHWC input.
    pub input: &'a [T],
    /// The filter, `[rows][columns][channels]`.
    pub filter: &'a [T],
    /// The window's rows that read the input, in order: the filter row, and
    /// the input element the first pixel's first column tap reads in it
    /// (channel 0).
    pub rows: &'a [(usize, usize)],
    /// The filter's columns.
    pub filter_cols: usize,
    /// Input elements from one column tap to the next (the column dilation
    /// times the channels).
    pub tap_step: usize,
    /// Input elements from one output pixel's window to the next one's (the
    /// column stride times the channels).
    pub pixel_step: usize,
    /// The channels (input and output: the multiplier is 1).
    pub channels: usize,
    /// The pixels' outputs, whole pixels.
    pub out: &'a mut [T],
}

impl InteriorRow<'_, f32> {
    /// Computes the row's interior pixels with the machine's widest vectors
    /// that suit the channels.
    pub(super) fn compute(self, arch: pulp::Arch) {
        #[cfg(target_arch = "x86_64")]
        if !self.channels.is_multiple_of(16)
            && self.channels.is_multiple_of(8)
            && let Some(v3) = pulp::x86::V3::try_new()
        {
            return pulp::Simd::vectorize(v3, self);
        }
        arch.dispatch(self);
    }
}

impl WithSimd for InteriorRow<'_, f32> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: Simd>(mut self, simd: S) {
        let out = std::mem::take(&mut self.out);
        if self.filter_cols == 0 || self.channels == 0 {
            // (The caller sends no such row; nothing to sum.)
            out.fill(0.0);
            return;
        }
        let lanes = S::F32_LANES;
        let mut c0 = 0;
        while c0 < self.channels {
            let left = self.channels - c0;
            if left >= 2 * lanes {
                channel_block::<S, 2>(simd, &self, c0, out);
                c0 += 2 * lanes;
            } else if left >= lanes {
                channel_block::<S, 1>(simd, &self, c0, out);
                c0 += lanes;
            } else {
                partial_block(simd, &self, c0, left, out);
                c0 = self.channels;
            }
        }
    }
}

/// Channels `c0..` (`V` whole vectors) of every pixel of the row.
#[inline(always)]
fn channel_block<S: Simd, const V: usize>(
    simd: S,
    row: &InteriorRow<'_, f32>,
    c0: usize,
    out: &mut [f32],
) {
    let pixels = out.len() / row.channels;
    let mut p = 0;
    while p < pixels {
        p += match pixels - p {
            8.. if V == 1 => pixel_block::<S, 8, V>(simd, row, c0, p, out),
            6.. if V == 2 => pixel_block::<S, 6, V>(simd, row, c0, p, out),
            4.. => pixel_block::<S, 4, V>(simd, row, c0, p, out),
            2.. => pixel_block::<S, 2, V>(simd, row, c0, p, out),
            _ => pixel_block::<S, 1, V>(simd, row, c0, p, out),
        };
    }
}

/// Channels `c0..` (`V` whole vectors) of pixels `p..p + P`; returns `P`.
#[inline(always)]
fn pixel_block<S: Simd, const P: usize, const V: usize>(
    simd: S,
    row: &InteriorRow<'_, f32>,
    c0: usize,
    p: usize,
    out: &mut [f32],
) -> usize {
    let lanes = S::F32_LANES;
    let (kw_count, channels) = (row.filter_cols, row.channels);
    // The input elements one tap of the block's pixels spans.
    let span = (P - 1) * row.pixel_step + (kw_count - 1) * row.tap_step + V * lanes;
    let mut acc = [[simd.splat_f32s(0.0); V]; P];
    for &(kh, at) in row.rows {
        let base = at + p * row.pixel_step + c0;
        let filter_row = kh * kw_count * channels + c0;
        let (Some(x), Some(filter)) = (
            row.input.get(base..base + span),
            row.filter
                .get(filter_row..filter_row + (kw_count - 1) * channels + V * lanes),
        ) else {
            // (The caller checked the buffers against the geometry.)
            continue;
        };
        for kw in 0..kw_count {
            let (w, _) = S::as_simd_f32s(&filter[kw * channels..kw * channels + V * lanes]);
            let w: [S::f32s; V] = std::array::from_fn(|v| w[v]);
            for (q, acc) in acc.iter_mut().enumerate() {
                for (v, acc) in acc.iter_mut().enumerate() {
                    let at = q * row.pixel_step + kw * row.tap_step + v * lanes;
                    debug_assert!(at + lanes <= x.len());
                    // SAFETY: `x` holds `span` elements and, with `q < P`,
                    // `kw < kw_count` and `v < V`, `at + lanes <= span`; any
                    // bits are a valid `f32s` (`Pod`), read unaligned.
                    // Checking each load instead kept the sums in memory.
                    let xv = unsafe { x.as_ptr().add(at).cast::<S::f32s>().read_unaligned() };
                    *acc = simd.mul_add_e_f32s(xv, w[v], *acc);
                }
            }
        }
    }
    for (q, acc) in acc.iter().enumerate() {
        let at = (p + q) * channels + c0;
        if let Some(o) = out.get_mut(at..at + V * lanes) {
            let (o, _) = S::as_mut_simd_f32s(o);
            for (o, &a) in o.iter_mut().zip(acc) {
                *o = a;
            }
        }
    }
    P
}

/// The last `width` channels (fewer than a vector), from `c0`, of every
/// pixel of the row, with partial loads and stores.
#[inline(always)]
fn partial_block<S: Simd>(
    simd: S,
    row: &InteriorRow<'_, f32>,
    c0: usize,
    width: usize,
    out: &mut [f32],
) {
    let (kw_count, channels) = (row.filter_cols, row.channels);
    let pixels = out.len() / channels;
    for p in 0..pixels {
        let mut acc = simd.splat_f32s(0.0);
        for &(kh, at) in row.rows {
            let base = at + p * row.pixel_step + c0;
            let filter_row = kh * kw_count * channels + c0;
            for kw in 0..kw_count {
                let (i, f) = (base + kw * row.tap_step, filter_row + kw * channels);
                let (Some(x), Some(w)) =
                    (row.input.get(i..i + width), row.filter.get(f..f + width))
                else {
                    continue;
                };
                acc =
                    simd.mul_add_e_f32s(simd.partial_load_f32s(x), simd.partial_load_f32s(w), acc);
            }
        }
        let at = p * channels + c0;
        if let Some(o) = out.get_mut(at..at + width) {
            simd.partial_store_f32s(o, acc);
        }
    }
}

//! Depthwise convolution's output pixels vectorised explicitly: multiplier
//! 1, `float`, a run of adjacent pixels of one row that read the same
//! column taps (a row's interior, whose windows lie inside the input's
//! columns, or one edge pixel with the taps its window keeps).
//!
//! The channels run along the vectors, AVX-512's 16 lanes where the machine
//! has it (else AVX2's 8, through [`pulp`]'s run-time dispatch; AVX2 when
//! the channels are a multiple of 8 but not of 16). Blocks of adjacent
//! output pixels, 8 with one vector of channels, 6 with two (then 4, 2
//! and 1), share each load of the filter's vectors; each pixel's sums stay
//! in registers over the window, a fused multiply-add per tap in the
//! filter's order (rows, then columns) from zero. Channels left over after
//! the whole vectors take partial (masked) loads and stores. A run of
//! fewer than 4 pixels (an edge pixel) takes blocks of 4 vectors of
//! channels where there are that many, so that each pixel has 4
//! independent sums in flight instead of one or two.
//!
//! Other types and multipliers use the portable row kernel of
//! [`super::depthwise`].

use pulp::{Simd, WithSimd};

/// Where one output row's pixels read, and their outputs, computed as
/// [runs](ColumnRun) of adjacent pixels that read the same column taps.
pub(super) struct VectorRow<'a, T> {
    /// The NHWC input.
    pub input: &'a [T],
    /// The filter, `[rows][columns][channels]`.
    pub filter: &'a [T],
    /// The window's rows that read the input, in order: the filter row, and
    /// the input element of its input row's column 0 (channel 0).
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
    /// The runs of pixels to compute.
    pub runs: &'a [ColumnRun],
    /// The row's outputs, whole pixels.
    pub out: &'a mut [T],
}

/// Adjacent output pixels `start..end` of a row that read the same column
/// taps.
#[derive(Debug, Clone, Copy)]
pub(super) struct ColumnRun {
    /// The first pixel.
    pub start: usize,
    /// The pixel after the last.
    pub end: usize,
    /// Input elements from a row's column 0 to the first pixel's first
    /// column tap (its input column times the channels).
    pub first_input: usize,
    /// The first filter column the pixels read.
    pub first_tap: usize,
    /// The filter columns they read, from `first_tap`.
    pub taps: usize,
}

impl<T> VectorRow<'_, T> {
    /// Where pixel `p` of `run` starts reading in window row `(kh, at)`
    /// (an entry of [`rows`](Self::rows)), channel `c0`: its first column
    /// tap's input element, and that tap's filter element.
    #[inline(always)]
    fn tap_starts(
        &self,
        run: &ColumnRun,
        (kh, at): (usize, usize),
        p: usize,
        c0: usize,
    ) -> (usize, usize) {
        (
            at + run.first_input + p * self.pixel_step + c0,
            (kh * self.filter_cols + run.first_tap) * self.channels + c0,
        )
    }
}

impl VectorRow<'_, f32> {
    /// Computes the runs' pixels with the machine's widest vectors that
    /// suit the channels.
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

impl WithSimd for VectorRow<'_, f32> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: Simd>(mut self, simd: S) {
        let row_out = std::mem::take(&mut self.out);
        let channels = self.channels;
        for run in self.runs {
            let Some(out) = row_out.get_mut(run.start * channels..run.end * channels) else {
                // (The caller's runs lie in the row.)
                continue;
            };
            if run.taps == 0 || channels == 0 {
                // A window of no columns inside the input: nothing to sum.
                out.fill(0.0);
                continue;
            }
            let lanes = S::F32_LANES;
            // A run of few pixels (an edge pixel) has too few sums per
            // filter load to hide the multiply-adds' latency with one or
            // two vectors: it takes four where the channels allow.
            let short = run.end - run.start < 4;
            let mut c0 = 0;
            while c0 < channels {
                let left = channels - c0;
                if short && left >= 4 * lanes {
                    channel_block::<S, 4>(simd, &self, run, c0, out);
                    c0 += 4 * lanes;
                } else if left >= 2 * lanes {
                    channel_block::<S, 2>(simd, &self, run, c0, out);
                    c0 += 2 * lanes;
                } else if left >= lanes {
                    channel_block::<S, 1>(simd, &self, run, c0, out);
                    c0 += lanes;
                } else {
                    partial_block(simd, &self, run, c0, left, out);
                    c0 = channels;
                }
            }
        }
    }
}

/// Channels `c0..` (`V` whole vectors) of every pixel of `run` (whose
/// outputs are `out`).
#[inline(always)]
fn channel_block<S: Simd, const V: usize>(
    simd: S,
    row: &VectorRow<'_, f32>,
    run: &ColumnRun,
    c0: usize,
    out: &mut [f32],
) {
    let pixels = out.len() / row.channels;
    let mut p = 0;
    while p < pixels {
        p += match pixels - p {
            8.. if V == 1 => pixel_block::<S, 8, V>(simd, row, run, c0, p, out),
            6.. if V == 2 => pixel_block::<S, 6, V>(simd, row, run, c0, p, out),
            4.. if V <= 2 => pixel_block::<S, 4, V>(simd, row, run, c0, p, out),
            2.. => pixel_block::<S, 2, V>(simd, row, run, c0, p, out),
            _ => pixel_block::<S, 1, V>(simd, row, run, c0, p, out),
        };
    }
}

/// Channels `c0..` (`V` whole vectors) of pixels `p..p + P`; returns `P`.
#[inline(always)]
fn pixel_block<S: Simd, const P: usize, const V: usize>(
    simd: S,
    row: &VectorRow<'_, f32>,
    run: &ColumnRun,
    c0: usize,
    p: usize,
    out: &mut [f32],
) -> usize {
    let lanes = S::F32_LANES;
    let (kw_count, channels) = (run.taps, row.channels);
    // The input elements one tap of the block's pixels spans.
    let span = (P - 1) * row.pixel_step + (kw_count - 1) * row.tap_step + V * lanes;
    let mut acc = [[simd.splat_f32s(0.0); V]; P];
    for &window_row in row.rows {
        let (base, filter_row) = row.tap_starts(run, window_row, p, c0);
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
/// pixel of `run`, with partial loads and stores.
#[inline(always)]
fn partial_block<S: Simd>(
    simd: S,
    row: &VectorRow<'_, f32>,
    run: &ColumnRun,
    c0: usize,
    width: usize,
    out: &mut [f32],
) {
    let (kw_count, channels) = (run.taps, row.channels);
    let pixels = out.len() / channels;
    for p in 0..pixels {
        let mut acc = simd.splat_f32s(0.0);
        for &window_row in row.rows {
            let (base, filter_row) = row.tap_starts(run, window_row, p, c0);
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

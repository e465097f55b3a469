//! A direct NHWC/NDHWC convolution for products too narrow for im2col and
//! the `gemm` crate: 16 output channels or fewer. The crate's vectors run
//! along the output channels, so 8 channels fill half of an AVX-512
//! register, and copying each pixel's patch costs more than its product.
//!
//! - The filter is laid out once per call in blocks of 8 output channels
//!   (one AVX2 vector of `f32`) when there are 8 or fewer, else 16 (one
//!   AVX-512 vector, or two AVX2 ones on machines without AVX-512), the
//!   last block padded with zeros.
//! - An image plane's output rows are computed from a copy of the input
//!   rows they read with the padding written as zeros, so that every pixel
//!   reads its whole window (no copy without padding).
//! - Without column dilation, a filter row's taps read one contiguous run
//!   of the input (the filter row's columns times the input channels), so
//!   a 3×3 window is 3 runs, not 9 taps.
//! - Adjacent output pixels of a row are summed together, 8 of them with
//!   one vector of channels, 6 with two (so that the accumulators and the
//!   filter's vectors fit AVX2's 16 registers), then 4, 2 and 1 at the end
//!   of a row. For each input element of a run, one load of the filter's
//!   vectors serves all the pixels, each a broadcast input element and a
//!   fused multiply-add into accumulators that stay in registers.
//! - Each output element is one fused multiply-add per (tap, input
//!   channel), in the filter's order, from zero; then the epilogue (a fused
//!   op's bias and activation) runs on each task's pixels while they are in
//!   cache.
//!
//! The vectors are AVX2's or AVX-512's, through [`pulp`] (safe SIMD, its
//! availability checked at run time); machines without AVX2 and FMA, other
//! architectures, grouped convolutions and the other element types use
//! im2col. `half` and `bfloat16` accumulate in `f32` and round once.

use registry_core::kernel::KernelError;
use registry_core::tensor::{Complex64, Complex128, bf16, f16};

use super::RowEpilogue;
use super::gemm::GemmElement;
use opreg_op_logic::volume::VolumeGeometry;

/// An element type a convolution may be computed directly in.
pub(crate) trait ConvElement: GemmElement {
    /// Convolves NDHWC `input` with DHWIO `filter` into `out` (the
    /// geometry's sizes) with the direct kernel, then `epilogue` on each
    /// finished span of whole pixels; `None` when there is no direct kernel
    /// for the type on this machine (the caller uses im2col), as for the
    /// types without one.
    fn convolve_directly(
        g: &VolumeGeometry,
        input: &[Self],
        filter: &[Self],
        out: &mut [Self],
        epilogue: Option<RowEpilogue<'_, Self>>,
    ) -> Option<Result<(), KernelError>> {
        let _ = (g, input, filter, out, epilogue);
        None
    }
}

macro_rules! direct {
    ($($t:ty),*) => {$(
        impl ConvElement for $t {
            fn convolve_directly(
                g: &VolumeGeometry,
                input: &[Self],
                filter: &[Self],
                out: &mut [Self],
                epilogue: Option<RowEpilogue<'_, Self>>,
            ) -> Option<Result<(), KernelError>> {
                #[cfg(target_arch = "x86_64")]
                {
                    simd::conv(g, input, filter, out, epilogue)
                }
                #[cfg(not(target_arch = "x86_64"))]
                {
                    let _ = (g, input, filter, out, epilogue);
                    None
                }
            }
        }
    )*};
}

direct!(f32, f16, bf16);

impl ConvElement for f64 {}
impl ConvElement for i16 {}
impl ConvElement for i32 {}
impl ConvElement for i64 {}
impl ConvElement for Complex64 {}
impl ConvElement for Complex128 {}

/// The most output channels a convolution may have for the direct kernel
/// to be the faster one (above, the `gemm` crate's wider register tiles
/// and cache blocking win).
const MAX_OUT_DEPTH: usize = 16;

/// Whether the direct kernel suits a convolution of this geometry: one
/// group, some input channels, and few output channels.
pub(crate) fn suits(g: &VolumeGeometry) -> bool {
    g.patch_depth == g.in_depth && g.in_depth > 0 && g.out_depth <= MAX_OUT_DEPTH
}

#[cfg(target_arch = "x86_64")]
mod simd {
    use pulp::Simd;
    use pulp::x86::{V3, V4};
    use rayon::prelude::*;
    use registry_core::kernel::KernelError;
    use smallvec::SmallVec;

    use super::super::RowEpilogue;
    use super::super::gemm::empty_buffer;
    use super::super::softmax::WideFloat;
    use opreg_op_logic::volume::VolumeGeometry;

    /// Multiply-adds below which the convolution stays on one thread
    /// (called from outside rayon's pool; see [`crate::split`]).
    const PARALLEL_MACS: usize = 1 << 18;

    /// The convolution's sizes and its filter laid out for the kernel,
    /// shared by the tasks.
    struct Plan<'a> {
        g: &'a VolumeGeometry,
        /// Each axis's padding before the input (planes, rows, columns).
        pad_before: [usize; 3],
        /// Each axis's extent once padded: the padding before, the input,
        /// and the padding after as far as the windows reach.
        padded: [usize; 3],
        /// Vectors of output channels per block: 1, or 2 for 9 to 16
        /// channels in AVX2's 8 lanes.
        vectors: usize,
        /// The filter as `[channel block][tap][input channel][block]`
        /// (blocks of `vectors` vectors of channels, the last padded with
        /// zeros).
        packed: Vec<f32>,
        /// 1×1(×1), stride 1, no padding: every pixel reads its own input
        /// pixel, so pixels are blocked across rows.
        pointwise: bool,
    }

    impl Plan<'_> {
        /// Whether some window reaches into the padding.
        fn padding(&self) -> bool {
            self.padded != self.g.axes.map(|a| a.input)
        }

        /// Input elements read in one run: a filter row's taps (its
        /// columns times the input channels; they are adjacent in the
        /// input), or one tap's channels when the columns are dilated.
        fn run_len(&self) -> usize {
            let cols = self.g.axes[2];
            if cols.dilation == 1 {
                cols.window * self.g.in_depth
            } else {
                self.g.in_depth
            }
        }

        /// Each run's offset from its output pixel's first input element,
        /// in the filter's order, in a source of `rows` rows of `cols`
        /// pixels per plane.
        fn run_offsets(&self, rows: usize, cols: usize) -> RunOffsets {
            let [fp, fr, fc] = self.g.axes;
            let runs_per_row = if fc.dilation == 1 { 1 } else { fc.window };
            let mut offsets = RunOffsets::new();
            for d in 0..fp.window {
                for h in 0..fr.window {
                    for w in 0..runs_per_row {
                        let (d, h) = (d * step(fp.dilation), h * step(fr.dilation));
                        let w = w * step(fc.dilation);
                        offsets.push(((d * rows + h) * cols + w) * self.g.in_depth);
                    }
                }
            }
            offsets
        }
    }

    /// A window's runs; most windows have few.
    type RunOffsets = SmallVec<[usize; 16]>;

    /// [`super::ConvElement::convolve_directly`] for types that accumulate
    /// in `f32`: AVX-512's vectors of 16 for 9 to 16 output channels where
    /// the machine has them, else AVX2's of 8; `None` without AVX2 and FMA.
    pub(super) fn conv<T: WideFloat<Acc = f32>>(
        g: &VolumeGeometry,
        input: &[T],
        filter: &[T],
        out: &mut [T],
        epilogue: Option<RowEpilogue<'_, T>>,
    ) -> Option<Result<(), KernelError>> {
        let v3 = V3::try_new()?;
        if g.out_depth > V3::F32_LANES
            && let Some(v4) = V4::try_new()
        {
            return Some(conv_on(v4, g, input, filter, out, epilogue));
        }
        Some(conv_on(v3, g, input, filter, out, epilogue))
    }

    fn conv_on<S: Simd, T: WideFloat<Acc = f32>>(
        simd: S,
        g: &VolumeGeometry,
        input: &[T],
        filter: &[T],
        out: &mut [T],
        epilogue: Option<RowEpilogue<'_, T>>,
    ) -> Result<(), KernelError> {
        let [planes, rows, cols] = g.axes;
        let taps = planes.window * rows.window * cols.window;
        let in_len = g.batch * planes.input * rows.input * cols.input * g.in_depth;
        let pixels = g.batch * planes.out.out * rows.out.out * cols.out.out;
        if g.patch_depth != g.in_depth
            || g.in_depth == 0
            || input.len() != in_len
            || filter.len() != taps * g.in_depth * g.out_depth
            || out.len() != pixels * g.out_depth
        {
            return Err(KernelError::internal(
                "direct convolution of buffers of the wrong size",
            ));
        }
        if pixels == 0 || g.out_depth == 0 {
            return Ok(());
        }
        let lanes = S::F32_LANES;
        let vectors = if g.out_depth <= lanes { 1 } else { 2 };
        let width = vectors * lanes;
        let blocks = g.out_depth.div_ceil(width);
        let mut packed = empty_buffer::<f32>(Some(blocks * taps * g.in_depth * width))?;
        for b in 0..blocks {
            let (c0, c1) = (b * width, ((b + 1) * width).min(g.out_depth));
            for row in filter.chunks_exact(g.out_depth) {
                packed.extend(row[c0..c1].iter().map(|&w| w.widen()));
                packed.extend(std::iter::repeat_n(0.0, width - (c1 - c0)));
            }
        }
        let pad_before = g
            .axes
            .map(|a| usize::try_from(a.out.pad_before).unwrap_or(0));
        let padded = std::array::from_fn(|i| {
            let a = g.axes[i];
            // One past the last (padded) position a window reads.
            let reach = (a.out.out - 1) * step(a.stride) + (a.window - 1) * step(a.dilation) + 1;
            reach.max(pad_before[i] + a.input)
        });
        let pointwise = g.pointwise();
        let plan = Plan {
            g,
            pad_before,
            padded,
            vectors,
            packed,
            pointwise,
        };
        // A task is a span of whole rows (of whole pixels when pointwise).
        let unit = if pointwise { 1 } else { cols.out.out };
        let units = pixels / unit;
        let macs = pixels * taps * g.in_depth * g.out_depth;
        let threads = rayon::current_num_threads();
        let run = |first: usize, out: &mut [T]| {
            simd.vectorize(Task {
                plan: &plan,
                input,
                first,
                out,
                epilogue,
            })
        };
        if macs < crate::split::min_parallel_work(PARALLEL_MACS) || threads < 2 || units < 2 {
            run(0, out)?;
        } else {
            // A few tasks per thread.
            let per_task = units.div_ceil(threads * 4).max(1);
            let per_task = if pointwise {
                per_task.next_multiple_of(lanes)
            } else {
                per_task
            };
            out.par_chunks_mut(per_task * unit * g.out_depth)
                .enumerate()
                .try_for_each(|(i, chunk)| run(i * per_task * unit, chunk))?;
        }
        Ok(())
    }

    /// [`task`]'s arguments, run with the vectors' instructions enabled
    /// ([`pulp::Simd::vectorize`]).
    struct Task<'a, 'p, T> {
        plan: &'a Plan<'p>,
        input: &'a [T],
        first: usize,
        out: &'a mut [T],
        epilogue: Option<RowEpilogue<'a, T>>,
    }

    impl<T: WideFloat<Acc = f32>> pulp::WithSimd for Task<'_, '_, T> {
        type Output = Result<(), KernelError>;

        #[inline(always)]
        fn with_simd<S: Simd>(self, simd: S) -> Self::Output {
            task(simd, self.plan, self.input, self.first, self.out)?;
            if let Some(epilogue) = self.epilogue {
                epilogue(self.first * self.plan.g.out_depth, self.out);
            }
            Ok(())
        }
    }

    /// Output pixels `first..` into `out`: whole pixels when pointwise,
    /// else whole rows, taken an image plane's rows at a time (with a
    /// padded copy of the input rows they read when windows reach into the
    /// padding, so that every pixel reads its whole window).
    #[inline(always)]
    fn task<S: Simd, T: WideFloat<Acc = f32>>(
        simd: S,
        plan: &Plan<'_>,
        input: &[T],
        first: usize,
        out: &mut [T],
    ) -> Result<(), KernelError> {
        let g = plan.g;
        let depth = g.out_depth;
        if plan.pointwise {
            let count = out.len() / depth;
            let runs = [0];
            let mut p = 0;
            while p < count {
                let source = Source {
                    data: input,
                    at: (first + p) * g.in_depth,
                    step: g.in_depth,
                    run_len: g.in_depth,
                    runs: &runs,
                };
                p += pixel_block(simd, plan, &source, count - p, &mut out[p * depth..]);
            }
            return Ok(());
        }
        let [planes, rows, cols] = g.axes;
        let (out_rows, out_cols) = (rows.out.out, cols.out.out);
        let row_len = out_cols * depth;
        let total_rows = out.len() / row_len;
        let col_step = step(cols.stride) * g.in_depth;
        let run_len = plan.run_len();
        let unpadded_runs = plan.run_offsets(rows.input, cols.input);
        let mut local = Vec::new();
        let mut r = 0;
        while r < total_rows {
            // The rows of one image plane, from `oh0`.
            let row = first / out_cols + r;
            let (oh0, plane) = (row % out_rows, row / out_rows);
            let (b, od) = (plane / planes.out.out, plane % planes.out.out);
            let count = (out_rows - oh0).min(total_rows - r);
            let segment = &mut out[r * row_len..(r + count) * row_len];
            // Where the segment's rows are read: the source, its first
            // output row's window start (as a source row) and its row pitch.
            let segment_runs;
            let (data, runs, first_source_row, pitch) = if plan.padding() {
                let rows_read = padded_rows(plan, input, b, od, oh0..oh0 + count, &mut local)?;
                segment_runs = plan.run_offsets(rows_read, plan.padded[2]);
                (
                    &local[..],
                    &segment_runs[..],
                    0,
                    plan.padded[2] * g.in_depth,
                )
            } else {
                let image_plane = b * planes.input + od * step(planes.stride);
                let first_source_row = image_plane * rows.input + oh0 * step(rows.stride);
                let pitch = cols.input * g.in_depth;
                (input, &unpadded_runs[..], first_source_row, pitch)
            };
            for (i, out_row) in segment.chunks_exact_mut(row_len).enumerate() {
                let row_at = (first_source_row + i * step(rows.stride)) * pitch;
                let mut ow = 0;
                while ow < out_cols {
                    let source = Source {
                        data,
                        at: row_at + ow * col_step,
                        step: col_step,
                        run_len,
                        runs,
                    };
                    let o = &mut out_row[ow * depth..];
                    ow += pixel_block(simd, plan, &source, out_cols - ow, o);
                }
            }
            r += count;
        }
        Ok(())
    }

    /// Replaces `local` with the padded input that output rows `oh` of
    /// image `b`'s output plane `od` read: the window's planes, each with
    /// the rows from the first row's window to the last one's, each row
    /// padded to the padded width (zeros outside the input). Returns the
    /// rows per plane (the first output row's window starts at the copy's
    /// first row).
    fn padded_rows<T: WideFloat>(
        plan: &Plan<'_>,
        input: &[T],
        b: usize,
        od: usize,
        oh: std::ops::Range<usize>,
        local: &mut Vec<T>,
    ) -> Result<usize, KernelError> {
        let g = plan.g;
        let [planes, rows, cols] = g.axes;
        let depth = g.in_depth;
        let first_plane = od * step(planes.stride);
        let plane_count = (planes.window - 1) * step(planes.dilation) + 1;
        let first_row = oh.start * step(rows.stride);
        let row_count = (oh.end - 1 - oh.start) * step(rows.stride)
            + (rows.window - 1) * step(rows.dilation)
            + 1;
        let padded_cols = plan.padded[2];
        let [pad_planes, pad_rows, pad_cols] = plan.pad_before;
        let in_row_len = cols.input * depth;
        local.clear();
        local
            .try_reserve_exact(plane_count * row_count * padded_cols * depth)
            .map_err(|_| KernelError::resource_exhausted("no memory for a padded input"))?;
        let zeros = |local: &mut Vec<T>, n: usize| local.resize(local.len() + n, T::default());
        for d in first_plane..first_plane + plane_count {
            let id = d.checked_sub(pad_planes).filter(|&d| d < planes.input);
            for h in first_row..first_row + row_count {
                let ih = h.checked_sub(pad_rows).filter(|&h| h < rows.input);
                let (Some(id), Some(ih)) = (id, ih) else {
                    zeros(local, padded_cols * depth);
                    continue;
                };
                let at = ((b * planes.input + id) * rows.input + ih) * in_row_len;
                zeros(local, pad_cols * depth);
                match input.get(at..at + in_row_len) {
                    Some(row) => local.extend_from_slice(row),
                    None => zeros(local, in_row_len),
                }
                zeros(local, (padded_cols - pad_cols - cols.input) * depth);
            }
        }
        Ok(row_count)
    }

    /// Where a block of pixels reads: `data`, the first pixel's window
    /// starting at `at` and each next one's `step` further on, as runs of
    /// `run_len` elements at `runs` from a window's start.
    struct Source<'a, T> {
        data: &'a [T],
        at: usize,
        step: usize,
        run_len: usize,
        runs: &'a [usize],
    }

    /// The next block of up to `left` adjacent output pixels of `source`
    /// into the start of `out`; returns how many. Blocks of one vector of
    /// channels take 8 pixels, of two vectors 6 (the accumulators and the
    /// filter's vectors then fill AVX2's 16 registers), then 4, 2 and 1 at
    /// the end of a row.
    #[inline(always)]
    fn pixel_block<S: Simd, T: WideFloat<Acc = f32>>(
        simd: S,
        plan: &Plan<'_>,
        source: &Source<'_, T>,
        left: usize,
        out: &mut [T],
    ) -> usize {
        let wide = plan.vectors == 2;
        match left {
            8.. if !wide => pixels::<S, T, 8, 1>(simd, plan, source, out),
            6.. if wide => pixels::<S, T, 6, 2>(simd, plan, source, out),
            4.. if !wide => pixels::<S, T, 4, 1>(simd, plan, source, out),
            4.. => pixels::<S, T, 4, 2>(simd, plan, source, out),
            2.. if !wide => pixels::<S, T, 2, 1>(simd, plan, source, out),
            2.. => pixels::<S, T, 2, 2>(simd, plan, source, out),
            _ if !wide => pixels::<S, T, 1, 1>(simd, plan, source, out),
            _ => pixels::<S, T, 1, 2>(simd, plan, source, out),
        }
    }

    /// A stride or dilation as a step.
    #[inline(always)]
    fn step(d: i64) -> usize {
        usize::try_from(d).unwrap_or(1)
    }

    /// Every output channel of `P` adjacent pixels of `source` into the
    /// start of `out`, one block of `V` vectors of channels at a time;
    /// returns `P`.
    #[inline(always)]
    fn pixels<S: Simd, T: WideFloat<Acc = f32>, const P: usize, const V: usize>(
        simd: S,
        plan: &Plan<'_>,
        source: &Source<'_, T>,
        out: &mut [T],
    ) -> usize {
        let out_depth = plan.g.out_depth;
        let lanes = S::F32_LANES;
        let (run_len, step) = (source.run_len, source.step);
        let filter_run = run_len * V * lanes;
        let span = (P - 1) * step + run_len;
        let runs = source.runs.len();
        for (block, filter) in plan.packed.chunks_exact(runs * filter_run).enumerate() {
            let mut acc = [[simd.splat_f32s(0.0); V]; P];
            for (run, &offset) in source.runs.iter().enumerate() {
                let at = source.at + offset;
                let (Some(x), Some(w)) = (
                    source.data.get(at..at + span),
                    filter.get(run * filter_run..(run + 1) * filter_run),
                ) else {
                    // (The buffers' sizes were checked against the geometry.)
                    continue;
                };
                let (w, _) = S::as_simd_f32s(w);
                for (i, w) in w.chunks_exact(V).enumerate() {
                    let w: [S::f32s; V] = std::array::from_fn(|v| w[v]);
                    for (p, acc) in acc.iter_mut().enumerate() {
                        debug_assert!(p * step + i < x.len());
                        // SAFETY: `x` holds `(P - 1) * step + run_len`
                        // elements and `i < run_len` (`w` has `run_len` rows
                        // of `V` vectors), so `p * step + i < x.len()` for
                        // every `p < P`. Checking each element instead made
                        // the loop 3 times longer.
                        let x = simd.splat_f32s(unsafe { x.get_unchecked(p * step + i) }.widen());
                        for (acc, &w) in acc.iter_mut().zip(&w) {
                            *acc = simd.mul_add_e_f32s(x, w, *acc);
                        }
                    }
                }
            }
            let c0 = block * V * lanes;
            let width = (V * lanes).min(out_depth - c0);
            // The sums go out through a copy: a view of `acc` itself as
            // lanes (its address taken) kept it in memory, a store per
            // multiply-add in the loop above.
            let mut lanes_out = [0.0f32; 32];
            for (p, acc) in acc.iter().enumerate() {
                let (vectors, _) = S::as_mut_simd_f32s(&mut lanes_out[..V * lanes]);
                for (v, &a) in vectors.iter_mut().zip(acc) {
                    *v = a;
                }
                let at = p * out_depth + c0;
                if width == V * lanes {
                    // A whole block: a copy of a length known when compiled
                    // (vector moves; with the block's `width` it was a call
                    // to `memcpy` per pixel).
                    if let Some(o) = out.get_mut(at..at + V * lanes) {
                        for (o, &a) in o.iter_mut().zip(&lanes_out[..V * lanes]) {
                            *o = T::narrow(a);
                        }
                    }
                } else if let Some(o) = out.get_mut(at..at + width) {
                    for (o, &a) in o.iter_mut().zip(&lanes_out) {
                        *o = T::narrow(a);
                    }
                }
            }
        }
        P
    }
}

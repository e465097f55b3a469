//! `DepthwiseConv2dNative`: each input channel convolved with its own
//! `multiplier` filters (output channel `c * multiplier + q` from input
//! channel `c` and `filter[.., .., c, q]`). A direct kernel over the NHWC
//! input: each axis's window taps inside the input are found once per
//! call ([`opreg_op_logic::window::Axis::taps`]). With multiplier 1 and
//! `float`, every pixel takes the explicitly vectorised kernel of
//! [`super::depthwise_vector`] (AVX-512 or AVX2, fused multiply-adds): a
//! row's interior, whose windows lie inside the input's columns, as one
//! run, each edge pixel with the column taps its window keeps. The other
//! types and multipliers take the portable kernel:
//! blocks of 16 channels of 8 (or 4) adjacent output pixels that read the
//! same taps are summed together in vector registers (each filter load
//! serving them all), a multiply then an add per tap in order, the row
//! function compiled for each SIMD level (AVX-512, AVX2, SSE) and picked at
//! run time. Output rows run in parallel, and a fused op's epilogue runs on
//! each row while it is in cache. `half` and `bfloat16` accumulate in `f32`
//! and round once.

use std::marker::PhantomData;

use multiversion::multiversion;
use opreg_op_logic::conv::{Conv2DParams, ConvGeometry};
use opreg_op_logic::window::{DataFormat, WindowTaps};
use opreg_standard_ops::DepthwiseConv2dNative;
use rayon::prelude::*;
use registry_core::kernel;
use registry_core::kernel::{
    BuildKernel, KernelError, OpKernel, OpKernelConstruction, OpKernelContext,
};
use registry_core::tensor::{bf16, f16};

use super::depthwise_vector::{ColumnRun, VectorRow};
use super::softmax::WideFloat;
use super::{RowEpilogue, zeros_then};

/// An element type of the depthwise kernel.
pub(super) trait DepthwiseElement: WideFloat {
    /// Whether [`vector_row`](Self::vector_row) computes rows (else the
    /// portable row kernel does).
    const VECTORISED: bool = false;

    /// Computes `row` (multiplier 1) with explicit vectors, when the type
    /// is [`VECTORISED`](Self::VECTORISED).
    fn vector_row(arch: pulp::Arch, row: VectorRow<'_, Self>) {
        let _ = (arch, row);
    }
}

impl DepthwiseElement for f32 {
    const VECTORISED: bool = true;

    fn vector_row(arch: pulp::Arch, row: VectorRow<'_, Self>) {
        row.compute(arch);
    }
}

impl DepthwiseElement for f64 {}
impl DepthwiseElement for f16 {}
impl DepthwiseElement for bf16 {}

/// Output elements below which the convolution stays on one thread
/// (called from outside rayon's pool; see [`crate::split`]).
const PARALLEL_ELEMENTS: usize = 1 << 14;

/// `DepthwiseConv2dNative` on the CPU (NHWC, as TF's CPU kernel).
#[kernel(op = DepthwiseConv2dNative, device = CPU, T = [half, bfloat16, float, double])]
#[derive(Debug)]
pub struct DepthwiseConv2dNativeKernel<T> {
    params: Conv2DParams,
    _t: PhantomData<fn() -> T>,
}

impl<T: DepthwiseElement> BuildKernel for DepthwiseConv2dNativeKernel<T> {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        Ok(Self {
            params: Conv2DParams::from_attrs(ctx.attrs())?,
            _t: PhantomData,
        })
    }
}

impl<T: DepthwiseElement> OpKernel for DepthwiseConv2dNativeKernel<T> {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        depthwise_conv2d::<T>(&self.params, ctx, None).map(drop)
    }
}

/// `DepthwiseConv2dNative` of inputs 0 and 1 into output 0 (also
/// `_FusedDepthwiseConv2dNative`'s contraction, with its `epilogue` run on
/// each output row as soon as it is computed); returns the output's
/// channel count.
pub(super) fn depthwise_conv2d<T: DepthwiseElement>(
    params: &Conv2DParams,
    ctx: &mut OpKernelContext<'_>,
    epilogue: Option<RowEpilogue<'_, T>>,
) -> Result<usize, KernelError> {
    let input = ctx.input(0)?.clone();
    let filter = ctx.input(1)?.clone();
    let (g, multiplier) = params.depthwise_geometry(input.shape(), filter.shape())?;
    let f = params.format;
    let out = ctx.allocate_output_to_overwrite(0, g.out_shape(f))?;
    if out.num_elements() == 0 || input.num_elements() == 0 {
        // Only padding.
        zeros_then(out.as_mut_slice::<T>()?, epilogue);
        return Ok(g.out_depth);
    }
    if f != DataFormat::Nhwc {
        return Err(KernelError::unimplemented(format!(
            "Depthwise convolution on CPU is only supported for NHWC format, got {}",
            f.name()
        )));
    }
    depthwise_nhwc(
        &g,
        multiplier,
        input.as_slice::<T>()?,
        filter.as_slice::<T>()?,
        out.as_mut_slice::<T>()?,
        epilogue,
    )?;
    Ok(g.out_depth)
}

/// Channels accumulated together (in vector registers) when the
/// multiplier is 1.
const CHANNEL_BLOCK: usize = 16;

/// The convolution's geometry and per-axis taps, shared by the row tasks.
struct DepthwisePlan<'a> {
    g: &'a ConvGeometry,
    multiplier: usize,
    rows: Vec<WindowTaps>,
    cols: Vec<WindowTaps>,
    /// A row's pixels for the vector kernel: the interior (the output
    /// columns whose windows lie inside the input's columns) as one run,
    /// each other pixel as its own.
    runs: Vec<ColumnRun>,
    /// The SIMD level the vector kernel runs at.
    arch: pulp::Arch,
}

/// The convolution of NHWC `input` by `[rows, cols, depth, multiplier]`
/// `filter` into NHWC `out` (every element written), `epilogue` run on
/// each output row once it is written.
fn depthwise_nhwc<T: DepthwiseElement>(
    g: &ConvGeometry,
    multiplier: usize,
    input: &[T],
    filter: &[T],
    out: &mut [T],
    epilogue: Option<RowEpilogue<'_, T>>,
) -> Result<(), KernelError> {
    let (depth, out_depth) = (g.in_depth, g.out_depth);
    let row_len = g.cols.out * out_depth;
    let expected = g.batch * g.rows.out * row_len;
    let in_len = g.batch * g.in_rows * g.in_cols * depth;
    let filter_len = g.filter_rows * g.filter_cols * out_depth;
    if out.len() != expected || input.len() != in_len || filter.len() != filter_len {
        return Err(KernelError::internal(
            "depthwise convolution buffers of the wrong size",
        ));
    }
    if row_len == 0 {
        return Ok(());
    }
    let [_, rows, cols] = g.volume().axes;
    let cols = cols.taps();
    let plan = DepthwisePlan {
        g,
        multiplier,
        rows: rows.taps(),
        runs: column_runs(&cols, g.filter_cols, g.in_depth),
        cols,
        arch: pulp::Arch::new(),
    };
    let threads = rayon::current_num_threads();
    if expected < crate::split::min_parallel_work(PARALLEL_ELEMENTS) || threads < 2 {
        depthwise_rows(&plan, 0, input, filter, out, epilogue);
    } else {
        // A few tasks per thread, whole rows each.
        let total_rows = g.batch * g.rows.out;
        let rows_per_task = total_rows.div_ceil(threads * 4).max(1);
        out.par_chunks_mut(rows_per_task * row_len)
            .enumerate()
            .for_each(|(task, rows)| {
                depthwise_rows(&plan, task * rows_per_task, input, filter, rows, epilogue);
            });
    }
    Ok(())
}

/// A row's output pixels as runs for the vector kernel: each edge pixel
/// alone with the column taps its window keeps, the interior (see
/// [`interior_columns`]) as one run.
fn column_runs(cols: &[WindowTaps], filter_cols: usize, depth: usize) -> Vec<ColumnRun> {
    let run = |start: usize, end: usize| {
        let taps = cols[start];
        ColumnRun {
            start,
            end,
            first_input: taps.at * depth,
            first_tap: taps.first,
            taps: taps.end - taps.first,
        }
    };
    let interior = interior_columns(cols, filter_cols);
    let edges = (0..interior.start).chain(interior.end..cols.len());
    let mut runs: Vec<ColumnRun> = edges.map(|ow| run(ow, ow + 1)).collect();
    if !interior.is_empty() {
        runs.push(run(interior.start, interior.end));
    }
    runs
}

/// The output columns whose windows read the input at every column tap: a
/// contiguous range (a window slides across the input), empty when none.
fn interior_columns(cols: &[WindowTaps], filter_cols: usize) -> std::ops::Range<usize> {
    if filter_cols == 0 {
        // (A window of no columns reads nothing: the portable kernel's
        // zeros.)
        return 0..0;
    }
    let full = |t: &WindowTaps| t.first == 0 && t.end == filter_cols;
    let (Some(start), Some(last)) = (cols.iter().position(full), cols.iter().rposition(full))
    else {
        return 0..0;
    };
    if cols[start..=last].iter().all(full) {
        start..last + 1
    } else {
        0..0
    }
}

/// Output pixels of one row computed together when they read the same
/// taps (independent sums in flight, each filter load shared): 8 when
/// there are that many, else 4.
const WIDE_PIXEL_BLOCK: usize = 8;
/// The smaller block of [`WIDE_PIXEL_BLOCK`].
const PIXEL_BLOCK: usize = 4;

/// Output rows `first_row..` (`out` holds whole rows), each finished by
/// `epilogue`: by [`DepthwiseElement::vector_row`] where the type has
/// it (multiplier 1), else by the portable kernel, compiled for each
/// SIMD level the machine may have and picked at run time (the same
/// arithmetic, a multiply then an add per tap in order, on every level).
#[multiversion(targets = "simd")]
fn depthwise_rows<T: DepthwiseElement>(
    plan: &DepthwisePlan<'_>,
    first_row: usize,
    input: &[T],
    filter: &[T],
    out: &mut [T],
    epilogue: Option<RowEpilogue<'_, T>>,
) {
    let g = plan.g;
    let out_depth = g.out_depth;
    let row_len = g.cols.out * out_depth;
    let (Some(&first_rows), Some(&first_cols)) = (plan.rows.first(), plan.cols.first()) else {
        return;
    };
    // What every pixel's taps share; each row and pixel sets its own.
    let shared = PixelTaps {
        rows: first_rows,
        cols: first_cols,
        dilation_rows: usize::try_from(g.dilation_rows).unwrap_or(1),
        dilation_cols: usize::try_from(g.dilation_cols).unwrap_or(1),
        pixel_step: usize::try_from(g.stride_cols).unwrap_or(1) * g.in_depth,
        row_base: 0,
        in_cols: g.in_cols,
        depth: g.in_depth,
        filter_cols: g.filter_cols,
        out_depth,
    };
    for (i, out_row) in out.chunks_exact_mut(row_len).enumerate() {
        let index = first_row + i;
        let (n, oh) = (index / g.rows.out, index % g.rows.out);
        let row = PixelTaps {
            rows: plan.rows[oh],
            row_base: n * g.in_rows,
            ..shared
        };
        let taps = |ow: usize| PixelTaps {
            cols: plan.cols[ow],
            ..row
        };
        if plan.multiplier != 1 {
            for (ow, o) in out_row.chunks_exact_mut(out_depth).enumerate() {
                multiplied_pixel(input, filter, &taps(ow), plan.multiplier, o);
            }
        } else if T::VECTORISED {
            // Where each window row's input row starts.
            let rows_read: smallvec::SmallVec<[(usize, usize); 8]> = (row.rows.first..row.rows.end)
                .map(|kh| {
                    let ih = row.rows.at + (kh - row.rows.first) * row.dilation_rows;
                    (kh, (row.row_base + ih) * g.in_cols * g.in_depth)
                })
                .collect();
            T::vector_row(
                plan.arch,
                VectorRow {
                    input,
                    filter,
                    rows: &rows_read,
                    filter_cols: g.filter_cols,
                    tap_step: row.dilation_cols * g.in_depth,
                    pixel_step: row.pixel_step,
                    channels: out_depth,
                    runs: &plan.runs,
                    out: out_row,
                },
            );
        } else {
            portable_pixels(plan, input, filter, &taps, out_row);
        }
        if let Some(epilogue) = epilogue {
            epilogue(index * row_len, out_row);
        }
    }
}

/// A row's output pixels (multiplier 1) with the portable kernel: blocks
/// of adjacent pixels that read the same taps.
#[inline(always)]
fn portable_pixels<T: WideFloat>(
    plan: &DepthwisePlan<'_>,
    input: &[T],
    filter: &[T],
    taps: &impl Fn(usize) -> PixelTaps,
    out_row: &mut [T],
) {
    let out_depth = plan.g.out_depth;
    let mut ow = 0;
    while ow < plan.cols.len() {
        let t = taps(ow);
        let same = plan.cols[ow..]
            .iter()
            .take(WIDE_PIXEL_BLOCK)
            .take_while(|c| (c.first, c.end) == (t.cols.first, t.cols.end))
            .count();
        let o = &mut out_row[ow * out_depth..];
        if same == WIDE_PIXEL_BLOCK {
            channels::<T, WIDE_PIXEL_BLOCK>(input, filter, &t, o);
            ow += WIDE_PIXEL_BLOCK;
        } else if same >= PIXEL_BLOCK {
            channels::<T, PIXEL_BLOCK>(input, filter, &t, o);
            ow += PIXEL_BLOCK;
        } else {
            channels::<T, 1>(input, filter, &t, o);
            ow += 1;
        }
    }
}

/// Every channel of `P` adjacent output pixels (multiplier 1) that read the
/// same taps, the first described by `taps`, into the start of `out`.
#[inline(always)]
fn channels<T: WideFloat, const P: usize>(
    input: &[T],
    filter: &[T],
    taps: &PixelTaps,
    out: &mut [T],
) {
    let depth = taps.depth;
    let mut c = 0;
    while c + CHANNEL_BLOCK <= depth {
        channel_block::<T, CHANNEL_BLOCK, P>(input, filter, taps, c, out);
        c += CHANNEL_BLOCK;
    }
    while c + 8 <= depth {
        channel_block::<T, 8, P>(input, filter, taps, c, out);
        c += 8;
    }
    while c < depth {
        channel_block::<T, 1, P>(input, filter, taps, c, out);
        c += 1;
    }
}

/// One output pixel of a depthwise convolution with `multiplier` > 1
/// (output channel `c * multiplier + q`).
#[inline(always)]
fn multiplied_pixel<T: WideFloat>(
    input: &[T],
    filter: &[T],
    taps: &PixelTaps,
    multiplier: usize,
    o: &mut [T],
) {
    let mut acc = smallvec::SmallVec::<[T::Acc; 64]>::from_elem(T::Acc::default(), taps.out_depth);
    for (pixel, tap) in taps.pairs() {
        let (Some(x), Some(w)) = (
            input.get(pixel..pixel + taps.depth),
            filter.get(tap..tap + taps.out_depth),
        ) else {
            // (The buffers' sizes were checked against the geometry.)
            continue;
        };
        for ((a, &xv), wq) in acc
            .chunks_exact_mut(multiplier)
            .zip(x)
            .zip(w.chunks_exact(multiplier))
        {
            let xv = xv.widen();
            for (a, &wv) in a.iter_mut().zip(wq) {
                *a = *a + xv * wv.widen();
            }
        }
    }
    for (o, &a) in o.iter_mut().zip(&acc) {
        *o = T::narrow(a);
    }
}

/// The input pixels and filter taps one output pixel reads.
#[derive(Debug, Clone, Copy)]
struct PixelTaps {
    rows: WindowTaps,
    cols: WindowTaps,
    dilation_rows: usize,
    dilation_cols: usize,
    /// Input elements from one output pixel's first input pixel to the
    /// next one's (the column stride times the depth).
    pixel_step: usize,
    /// The image's first input row (`n * in_rows`).
    row_base: usize,
    in_cols: usize,
    depth: usize,
    filter_cols: usize,
    out_depth: usize,
}

impl PixelTaps {
    /// The (input pixel, filter tap) offsets, rows then columns in order.
    #[inline(always)]
    fn pairs(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        (self.rows.first..self.rows.end).flat_map(move |kh| {
            let ih = self.rows.at + (kh - self.rows.first) * self.dilation_rows;
            (self.cols.first..self.cols.end).map(move |kw| {
                let iw = self.cols.at + (kw - self.cols.first) * self.dilation_cols;
                (
                    ((self.row_base + ih) * self.in_cols + iw) * self.depth,
                    (kh * self.filter_cols + kw) * self.out_depth,
                )
            })
        })
    }
}

/// Channels `c..c + B` of `P` adjacent output pixels (multiplier 1) that
/// read the same taps, the first described by `taps`, each summed over its
/// taps in order, into `out` (pixel `p` at `p * out_depth`).
#[inline(always)]
fn channel_block<T: WideFloat, const B: usize, const P: usize>(
    input: &[T],
    filter: &[T],
    taps: &PixelTaps,
    c: usize,
    out: &mut [T],
) {
    let mut acc = [[T::Acc::default(); B]; P];
    for kh in taps.rows.first..taps.rows.end {
        let ih = taps.rows.at + (kh - taps.rows.first) * taps.dilation_rows;
        let input_row = (taps.row_base + ih) * taps.in_cols;
        for kw in taps.cols.first..taps.cols.end {
            let iw = taps.cols.at + (kw - taps.cols.first) * taps.dilation_cols;
            let pixel = (input_row + iw) * taps.depth + c;
            let tap = (kh * taps.filter_cols + kw) * taps.out_depth + c;
            let Some(w) = filter.get(tap..).and_then(<[T]>::first_chunk::<B>) else {
                // (The buffers' sizes were checked against the geometry.)
                continue;
            };
            for (p, acc) in acc.iter_mut().enumerate() {
                let at = pixel + p * taps.pixel_step;
                let Some(x) = input.get(at..).and_then(<[T]>::first_chunk::<B>) else {
                    continue;
                };
                for j in 0..B {
                    acc[j] = acc[j] + x[j].widen() * w[j].widen();
                }
            }
        }
    }
    for (p, acc) in acc.iter().enumerate() {
        let at = p * taps.out_depth + c;
        if let Some(o) = out.get_mut(at..at + B) {
            for (o, &a) in o.iter_mut().zip(acc) {
                *o = T::narrow(a);
            }
        }
    }
}

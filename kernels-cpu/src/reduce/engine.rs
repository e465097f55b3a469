//! The reduction loops, generic over a [`Reducer`]: a full reduction, rows
//! (the reduced dims are innermost and contiguous), columns (`[outer,
//! reduced, inner]`) and the general alternating case.
//!
//! Contiguous runs are reduced into [`LANES`] independent accumulators so
//! LLVM vectorizes the loop (floating-point addition is not associative, so
//! a single accumulator would stay scalar); columns accumulate a whole row
//! of outputs at a time, which vectorizes directly. Work is split across
//! threads only above [`PARALLEL_MIN`] input elements, and partial results
//! are merged in a fixed order, so results do not depend on the thread count.

use rayon::prelude::*;

use super::axes::ReductionPlan;

/// Independent accumulators in a contiguous reduction.
const LANES: usize = 16;
/// Below this many input elements a reduction runs on the calling thread.
pub(crate) const PARALLEL_MIN: usize = 32 * 1024;
/// The input elements one parallel task reduces, at least.
const TASK_MIN: usize = 16 * 1024;
/// The outputs a column task accumulates at once.
const COLUMN_TILE: usize = 4096;

/// A reduction: how inputs accumulate and how an accumulator becomes an
/// output. `merge` must combine two partial accumulators of disjoint inputs.
pub(crate) trait Reducer: Copy + Send + Sync {
    /// The input element.
    type In: Copy + Send + Sync;
    /// The accumulator.
    type Acc: Copy + Send + Sync;
    /// The output element.
    type Out: Copy + Send + Sync;
    /// The accumulator of no inputs.
    fn init(self) -> Self::Acc;
    /// Adds one input.
    fn step(self, acc: Self::Acc, x: Self::In) -> Self::Acc;
    /// Combines two partial accumulators.
    fn merge(self, a: Self::Acc, b: Self::Acc) -> Self::Acc;
    /// The output of an accumulator over `count` inputs (`count` may be 0).
    fn finish(self, acc: Self::Acc, count: usize) -> Self::Out;

    /// Reduces a contiguous run (a reducer may convert inputs in blocks).
    #[inline]
    fn reduce_run(self, xs: &[Self::In]) -> Self::Acc {
        reduce_slice(self, xs)
    }

    /// `acc[j] = step(acc[j], row[j])` over `acc.len()` elements.
    #[inline]
    fn accumulate_row(self, acc: &mut [Self::Acc], row: &[Self::In]) {
        for (a, &v) in acc.iter_mut().zip(row) {
            *a = self.step(*a, v);
        }
    }
}

/// Reduces `x` (non-empty) as `plan` says into `out` (non-empty, of the
/// plan's output size). The plan must not be the identity.
pub(crate) fn reduce<R: Reducer>(r: R, plan: &ReductionPlan, x: &[R::In], out: &mut [R::Out]) {
    let g = &plan.groups[..];
    match (g, plan.reduce_first) {
        (&[n], true) => reduce_rows(r, x, n, out),
        (&[_, n], false) => reduce_rows(r, x, n, out),
        (&[red, inner], true) => reduce_columns(r, x, 1, red, inner, out),
        (&[outer, red, inner], false) => reduce_columns(r, x, outer, red, inner, out),
        _ => reduce_general(r, plan, x, out),
    }
}

/// Reduces a contiguous slice.
#[inline]
pub(crate) fn reduce_slice<R: Reducer>(r: R, xs: &[R::In]) -> R::Acc {
    let mut lanes = [r.init(); LANES];
    let mut chunks = xs.chunks_exact(LANES);
    for chunk in &mut chunks {
        for (lane, &x) in lanes.iter_mut().zip(chunk) {
            *lane = r.step(*lane, x);
        }
    }
    for (lane, &x) in lanes.iter_mut().zip(chunks.remainder()) {
        *lane = r.step(*lane, x);
    }
    // A fixed pairwise tree over the lanes.
    let mut width = LANES;
    while width > 1 {
        width /= 2;
        for i in 0..width {
            lanes[i] = r.merge(lanes[i], lanes[i + width]);
        }
    }
    lanes[0]
}

/// Reduces a long contiguous slice on several threads: fixed-size pieces,
/// merged left to right.
fn reduce_slice_parallel<R: Reducer>(r: R, xs: &[R::In]) -> R::Acc {
    let piece = TASK_MIN.max(xs.len().div_ceil(4 * rayon::current_num_threads()));
    let partials: Vec<R::Acc> = xs.par_chunks(piece).map(|c| r.reduce_run(c)).collect();
    partials
        .into_iter()
        .fold(r.init(), |acc, p| r.merge(acc, p))
}

/// `out[o] = reduce(x[o * n .. (o + 1) * n])`.
fn reduce_rows<R: Reducer>(r: R, x: &[R::In], n: usize, out: &mut [R::Out]) {
    if n == 0 {
        return;
    }
    if x.len() < PARALLEL_MIN {
        for (o, row) in out.iter_mut().zip(x.chunks_exact(n)) {
            *o = r.finish(r.reduce_run(row), n);
        }
        return;
    }
    let rows_per_task = (TASK_MIN / n).max(1);
    if out.len() >= 2 * rayon::current_num_threads() && rows_per_task < out.len() {
        out.par_chunks_mut(rows_per_task)
            .zip(x.par_chunks(rows_per_task * n))
            .for_each(|(dst, src)| {
                for (o, row) in dst.iter_mut().zip(src.chunks_exact(n)) {
                    *o = r.finish(r.reduce_run(row), n);
                }
            });
    } else {
        // Few long rows: split each row.
        for (o, row) in out.iter_mut().zip(x.chunks_exact(n)) {
            *o = r.finish(reduce_slice_parallel(r, row), n);
        }
    }
}

/// Accumulates the rows `red` of a `[red, inner]` block starting at
/// `start` (columns `[0, acc.len())` of it) into `acc`.
#[inline]
fn accumulate_columns<R: Reducer>(
    r: R,
    x: &[R::In],
    start: usize,
    inner: usize,
    red: std::ops::Range<usize>,
    acc: &mut [R::Acc],
) {
    let width = acc.len();
    for k in red {
        let base = start + k * inner;
        let Some(row) = x.get(base..base + width) else {
            return;
        };
        r.accumulate_row(acc, row);
    }
}

/// `x` is `[outer, red, inner]`; `out` is `[outer, inner]`.
///
/// Each task walks its rows in memory order with a row of accumulators
/// (at most [`COLUMN_TILE`] wide, so they stay in cache). Parallel over
/// `outer` when there are enough blocks; otherwise over pieces of the
/// reduced rows (merged in order) when the output row is narrow, or over
/// column tiles.
fn reduce_columns<R: Reducer>(
    r: R,
    x: &[R::In],
    outer: usize,
    red: usize,
    inner: usize,
    out: &mut [R::Out],
) {
    if inner == 0 || red == 0 {
        return;
    }
    let block = red * inner;
    // Outputs `[o, j0 .. j0 + dst.len())`.
    let tile_task = |o: usize, j0: usize, dst: &mut [R::Out], acc: &mut Vec<R::Acc>| {
        acc.clear();
        acc.resize(dst.len(), r.init());
        accumulate_columns(r, x, o * block + j0, inner, 0..red, acc);
        for (d, &a) in dst.iter_mut().zip(acc.iter()) {
            *d = r.finish(a, red);
        }
    };
    // Every output of block `o`.
    let block_task = |o: usize, dst: &mut [R::Out], acc: &mut Vec<R::Acc>| {
        for (t, tile) in dst.chunks_mut(COLUMN_TILE).enumerate() {
            tile_task(o, t * COLUMN_TILE, tile, acc);
        }
    };
    let threads = rayon::current_num_threads();
    if x.len() < PARALLEL_MIN {
        let mut acc = Vec::new();
        for (o, dst) in out.chunks_mut(inner).enumerate() {
            block_task(o, dst, &mut acc);
        }
    } else if outer >= 2 * threads {
        out.par_chunks_mut(inner)
            .enumerate()
            .for_each_init(Vec::new, |acc, (o, dst)| block_task(o, dst, acc));
    } else if red >= 4 * threads && inner <= 4 * COLUMN_TILE {
        // Narrow output rows over many reduced rows: split the rows.
        let rows_per_piece = red.div_ceil(4 * threads);
        for (o, dst) in out.chunks_mut(inner).enumerate() {
            let partials: Vec<Vec<R::Acc>> = (0..red.div_ceil(rows_per_piece))
                .into_par_iter()
                .map(|p| {
                    let lo = p * rows_per_piece;
                    let hi = (lo + rows_per_piece).min(red);
                    let mut acc = vec![r.init(); inner];
                    for (t, tile) in acc.chunks_mut(COLUMN_TILE).enumerate() {
                        let j0 = t * COLUMN_TILE;
                        accumulate_columns(r, x, o * block + j0, inner, lo..hi, tile);
                    }
                    acc
                })
                .collect();
            let mut total = vec![r.init(); inner];
            for part in partials {
                for (t, p) in total.iter_mut().zip(part) {
                    *t = r.merge(*t, p);
                }
            }
            for (d, t) in dst.iter_mut().zip(total) {
                *d = r.finish(t, red);
            }
        }
    } else {
        out.par_chunks_mut(inner).enumerate().for_each(|(o, dst)| {
            dst.par_chunks_mut(COLUMN_TILE)
                .enumerate()
                .for_each_init(Vec::new, |acc, (t, tile)| {
                    tile_task(o, t * COLUMN_TILE, tile, acc)
                });
        });
    }
}

/// Any alternation of reduced and kept runs (e.g. `[reduced, kept,
/// reduced]`): walks the input row by row (rows are the last run) with an
/// odometer over the other runs. Parallel over the first run when it is
/// kept.
fn reduce_general<R: Reducer>(r: R, plan: &ReductionPlan, x: &[R::In], out: &mut [R::Out]) {
    let groups = &plan.groups[..];
    let reduced: Vec<bool> = (0..groups.len()).map(|i| plan.is_reduced(i)).collect();
    let count = x.len() / out.len().max(1);
    let first = groups.first().copied().unwrap_or(0);
    if x.len() >= PARALLEL_MIN && !plan.reduce_first && first > 1 {
        let in_stride = x.len() / first;
        let out_stride = out.len() / first;
        let per_task = (TASK_MIN / in_stride.max(1)).clamp(1, first);
        out.par_chunks_mut(per_task * out_stride)
            .zip(x.par_chunks(per_task * in_stride))
            .for_each(|(dst, src)| {
                let mut sub: Vec<usize> = groups.to_vec();
                sub[0] = src.len() / in_stride;
                reduce_odometer(r, &sub, &reduced, count, src, dst);
            });
    } else {
        reduce_odometer(r, groups, &reduced, count, x, out);
    }
}

fn reduce_odometer<R: Reducer>(
    r: R,
    groups: &[usize],
    reduced: &[bool],
    count: usize,
    x: &[R::In],
    out: &mut [R::Out],
) {
    let Some((&row_len, outer_groups)) = groups.split_last() else {
        return;
    };
    if row_len == 0 {
        return;
    }
    let last_reduced = reduced.last().copied().unwrap_or(true);
    // The output stride of each outer run (0 for reduced runs).
    let mut strides = vec![0usize; outer_groups.len()];
    let mut s = if last_reduced { 1 } else { row_len };
    for i in (0..outer_groups.len()).rev() {
        if !reduced[i] {
            strides[i] = s;
            s *= outer_groups[i];
        }
    }
    let mut acc = vec![r.init(); out.len()];
    let mut index = vec![0usize; outer_groups.len()];
    let mut base = 0usize;
    for row in x.chunks_exact(row_len) {
        if last_reduced {
            if let Some(a) = acc.get_mut(base) {
                *a = r.merge(*a, r.reduce_run(row));
            }
        } else if let Some(dst) = acc.get_mut(base..base + row_len) {
            r.accumulate_row(dst, row);
        }
        for i in (0..outer_groups.len()).rev() {
            index[i] += 1;
            base += strides[i];
            if index[i] < outer_groups[i] {
                break;
            }
            base -= strides[i] * outer_groups[i];
            index[i] = 0;
        }
    }
    for (o, a) in out.iter_mut().zip(acc) {
        *o = r.finish(a, count);
    }
}

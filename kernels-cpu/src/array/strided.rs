//! The strided gather behind `Transpose`, `Slice`, `StridedSlice` and `Tile`:
//! output element `o` (row-major over `dims`) is input element
//! `base + Σ idx[d] · steps[d]`, steps in elements, of any sign (zero repeats
//! an element, for `Tile`).
//!
//! [`StridedPlan::new`] takes the [`StridedLayout`] (shared with the GPU
//! copy): dimensions of size 1 dropped, dimensions that are contiguous in
//! the input merged, and every address proved inside the input (so the copy
//! loops cannot go out of bounds). The copy then takes one of three paths:
//! - the innermost step is 1: copy contiguous runs (memcpy);
//! - another dimension has step 1 (a transpose): tiled copy, so that both
//!   the input's and the output's cache lines are used fully;
//! - otherwise: a strided read (a fill for step 0) per output row.
//!
//! Large outputs are filled in parallel, chunked by output rows.

use registry_core::kernel::KernelError;
use smallvec::SmallVec;

use super::elements::ElementOp;
use super::parallel::{copy, for_each_row_chunk, for_each_row_chunk_min};
use opreg_op_logic::strided::StridedLayout;

/// A validated strided gather from a one-input tensor (see the module doc).
#[derive(Debug, Clone)]
pub(crate) struct StridedPlan {
    /// The first input element read.
    base: usize,
    /// Output dimensions after simplification (none of size 0 or 1, unless
    /// the plan is empty).
    dims: SmallVec<[usize; 8]>,
    /// Input step of each dimension, in elements.
    steps: SmallVec<[isize; 8]>,
    /// The number of output elements.
    len: usize,
}

impl StridedPlan {
    /// A plan reading `input_len` elements: output dimension `d` has size
    /// `dims[d]` and input step `steps[d]`; the first element read is
    /// `base`. Errors (Internal) when an address would be outside the input
    /// (see [`StridedLayout::new`]).
    pub(crate) fn new(
        input_len: usize,
        base: i64,
        dims: &[usize],
        steps: &[i64],
    ) -> Result<Self, KernelError> {
        let layout = StridedLayout::new(input_len, base, dims, steps)?;
        // In range of the input, so every address fits isize/usize.
        let internal_range =
            || KernelError::internal("strided copy: an address does not fit in isize");
        Ok(Self {
            base: usize::try_from(layout.base).map_err(|_| internal_range())?,
            steps: layout
                .steps
                .iter()
                .map(|&s| isize::try_from(s))
                .collect::<Result<_, _>>()
                .map_err(|_| internal_range())?,
            dims: layout.dims,
            len: layout.len,
        })
    }
}

impl ElementOp for StridedPlan {
    fn run<T: Clone + Send + Sync>(
        &self,
        inputs: &[&[T]],
        out: &mut [T],
    ) -> Result<(), KernelError> {
        let src = inputs
            .first()
            .ok_or_else(|| KernelError::internal("strided copy without an input"))?;
        if out.len() != self.len {
            return Err(KernelError::internal(format!(
                "strided copy of {} elements into {}",
                self.len,
                out.len()
            )));
        }
        if self.len == 0 {
            return Ok(());
        }
        let rank = self.dims.len();
        let Some((&inner, &step)) = self.dims.last().zip(self.steps.last()) else {
            out[0] = src[self.base].clone();
            return Ok(());
        };
        if rank == 1 && step == 1 {
            copy(out, &src[self.base..self.base + inner]);
        } else if !matches!(step, 0 | 1)
            && let Some(p) = (0..rank - 1).rev().find(|&d| self.steps[d] == 1)
        {
            self.tiled(src, out, p);
        } else {
            self.rows(src, out);
        }
        Ok(())
    }
}

impl StridedPlan {
    /// Copies output rows (the last dimension) one by one: contiguous runs
    /// when the last step is 1, else strided reads.
    fn rows<T: Clone + Send + Sync>(&self, src: &[T], out: &mut [T]) {
        let rank = self.dims.len();
        let inner = self.dims[rank - 1];
        let step = self.steps[rank - 1];
        if rank == 1 {
            strided_row(out, src, self.base as isize, step);
            return;
        }
        // Rows go in runs along dimension `rank - 2` (a fixed input step
        // from row to row); the odometer over the dimensions before it
        // moves once per run, not per row (it was the copy's main cost for
        // short rows, such as UpSampling2D's `Tile` of 16 channels).
        let (run, run_step) = (self.dims[rank - 2], self.steps[rank - 2]);
        let outer = Walker::new(&self.dims[..rank - 2], &self.steps[..rank - 2]);
        for_each_row_chunk(out, inner, |row0, chunk| {
            let mut w = outer.start_at(self.base as isize, row0 / run);
            let mut j = row0 % run;
            let mut at = w.offset.wrapping_add((j as isize).wrapping_mul(run_step));
            for row in chunk.chunks_exact_mut(inner) {
                strided_row(row, src, at, step);
                j += 1;
                if j == run {
                    j = 0;
                    w.advance();
                    at = w.offset;
                } else {
                    at = at.wrapping_add(run_step);
                }
            }
        });
    }

    /// The transpose path: dimension `p < rank - 1` has step 1 (the input's
    /// innermost dimension), the last one a larger step. Output rows are
    /// indexed by the dimensions up to `p`; a tile of `t` consecutive rows
    /// (of one outer index) by `t` columns of the last dimension is read as
    /// `t` contiguous input runs into a small buffer, then written out as
    /// `t` contiguous output runs: no global access is strided, and
    /// power-of-two strides cannot thrash the cache.
    fn tiled<T: Clone + Send + Sync>(&self, src: &[T], out: &mut [T], p: usize) {
        let rank = self.dims.len();
        let size_p = self.dims[p];
        // Output elements per index of dimension p.
        let row_len: usize = self.dims[p + 1..].iter().product();
        let last = self.dims[rank - 1];
        let last_step = self.steps[rank - 1];
        let outer = Walker::new(&self.dims[..p], &self.steps[..p]);
        let middle = Walker::new(&self.dims[p + 1..rank - 1], &self.steps[p + 1..rank - 1]);
        let t = tile_side::<T>();
        for_each_row_chunk_min(out, row_len, t, |row0, chunk| {
            let mut buf: Vec<T> = Vec::with_capacity(t * t);
            let rows = chunk.len() / row_len;
            let mut r = 0;
            while r < rows {
                let global = row0 + r;
                let j0 = global % size_p;
                let tj = t.min(size_p - j0).min(rows - r);
                let w = outer.start_at(self.base as isize, global / size_p);
                let block = &mut chunk[r * row_len..(r + tj) * row_len];
                let mut m = middle.start_at(w.offset + j0 as isize, 0);
                for mid in 0..row_len / last {
                    let mut a0 = 0;
                    while a0 < last {
                        let ta = t.min(last - a0);
                        // buf[a * tj + j] = input(j0 + j, a0 + a).
                        buf.clear();
                        let mut at = m.offset + a0 as isize * last_step;
                        for _ in 0..ta {
                            let from = at as usize;
                            buf.extend_from_slice(&src[from..from + tj]);
                            at += last_step;
                        }
                        for j in 0..tj {
                            let to = j * row_len + mid * last + a0;
                            let dst = &mut block[to..to + ta];
                            for (d, v) in dst.iter_mut().zip(buf[j..].iter().step_by(tj)) {
                                *d = v.clone();
                            }
                        }
                        a0 += ta;
                    }
                    m.advance();
                }
                r += tj;
            }
        });
    }
}

/// The side of a transpose tile: `t × t` elements fill at most 16 KiB (half
/// of a typical L1 data cache).
fn tile_side<T>() -> usize {
    let size = std::mem::size_of::<T>().max(1);
    let mut t = 64;
    while t > 8 && t * t * size > 16 * 1024 {
        t /= 2;
    }
    t
}

/// `dst[i] = src[first + i·step]`; the plan proved every address valid.
#[inline]
fn strided_row<T: Clone>(dst: &mut [T], src: &[T], first: isize, step: isize) {
    let n = dst.len();
    if n == 0 {
        return;
    }
    let first = first as usize;
    match step {
        1 => dst.clone_from_slice(&src[first..first + n]),
        0 => dst.fill(src[first].clone()),
        s if s > 0 => {
            let s = s as usize;
            for (d, v) in dst.iter_mut().zip(src[first..].iter().step_by(s)) {
                *d = v.clone();
            }
        }
        s => {
            let s = s.unsigned_abs();
            let lo = first - (n - 1) * s;
            for (d, v) in dst.iter_mut().zip(src[lo..=first].iter().rev().step_by(s)) {
                *d = v.clone();
            }
        }
    }
}

/// Walks the row-major index space of `dims`, tracking the input offset
/// `Σ idx[d] · steps[d]` incrementally.
#[derive(Debug, Clone)]
struct Walker<'a> {
    dims: &'a [usize],
    steps: &'a [isize],
    idx: SmallVec<[usize; 8]>,
    offset: isize,
}

impl<'a> Walker<'a> {
    fn new(dims: &'a [usize], steps: &'a [isize]) -> Self {
        Self {
            dims,
            steps,
            idx: SmallVec::from_elem(0, dims.len()),
            offset: 0,
        }
    }

    /// A walker at linear index `linear`, with offset `base` at index 0.
    fn start_at(&self, base: isize, mut linear: usize) -> Self {
        let mut w = self.clone();
        w.offset = base;
        for d in (0..self.dims.len()).rev() {
            let size = self.dims[d].max(1);
            let i = linear % size;
            linear /= size;
            w.idx[d] = i;
            w.offset = w
                .offset
                .wrapping_add((i as isize).wrapping_mul(self.steps[d]));
        }
        w
    }

    /// Moves to the next index (wrapping past the end).
    #[inline]
    fn advance(&mut self) {
        for d in (0..self.dims.len()).rev() {
            self.idx[d] += 1;
            self.offset = self.offset.wrapping_add(self.steps[d]);
            if self.idx[d] < self.dims[d] {
                return;
            }
            self.idx[d] = 0;
            self.offset = self
                .offset
                .wrapping_sub((self.dims[d] as isize).wrapping_mul(self.steps[d]));
        }
    }
}

//! The arithmetic of an NHWC or NDHWC convolution: input patches laid out as rows
//! (im2col) and multiplied by the filter, one product per group, a block of
//! output pixels at a time; narrow convolutions go to [`super::direct_conv`].

use rayon::prelude::*;
use registry_core::kernel::KernelError;

use super::RowEpilogue;
use super::direct_conv::{self, ConvElement};
use super::gemm::{GemmElement, MatMut, MatRef, PackedRhs, Threads, empty_buffer};
use opreg_op_logic::volume::VolumeGeometry;
use opreg_op_logic::window::WindowTaps;

/// Bytes of im2col patches built at a time (bounds the scratch memory).
const PATCH_BUDGET_BYTES: usize = 8 << 20;

fn tail<T>(s: &[T], start: usize) -> Result<&[T], KernelError> {
    s.get(start..)
        .ok_or_else(|| KernelError::internal("convolution operand offset out of range"))
}

fn tail_mut<T>(s: &mut [T], start: usize) -> Result<&mut [T], KernelError> {
    s.get_mut(start..)
        .ok_or_else(|| KernelError::internal("convolution output offset out of range"))
}

/// Multiply-adds per block of output pixels: a block's patches, output
/// and the filter stay in cache while it is computed and finished.
const BLOCK_MACS: usize = 1 << 18;
/// The fewest output pixels per block (each block's product packs the
/// filter anew).
const MIN_BLOCK_PIXELS: usize = 64;
/// Multiply-adds below which the blocks run on the calling thread (called
/// from outside rayon's pool; see [`crate::split`]).
const PARALLEL_MACS: usize = 48 * 48 * 256;

/// Convolves NDHWC `input` with DHWIO `filter` into NDHWC `out` (every
/// element written); a 2-D convolution is the volume of its
/// [`opreg_op_logic::conv::ConvGeometry::volume`]. `in_depth` is a
/// multiple of `patch_depth` and `out_depth` of the group count; the
/// slices have the geometry's sizes.
///
/// A convolution the direct kernel suits ([`direct_conv::suits`]: one
/// group, 16 output channels or fewer) runs there when the element type
/// and the machine have it. Otherwise the output pixels are computed in
/// blocks (on rayon's pool when the convolution is large), each block's
/// patches built, multiplied by the filter and finished by `epilogue`
/// while in cache.
pub(crate) fn conv_ndhwc<T: ConvElement>(
    g: &VolumeGeometry,
    input: &[T],
    filter: Filter<'_, T>,
    out: &mut [T],
    epilogue: Option<RowEpilogue<'_, T>>,
) -> Result<(), KernelError> {
    let too_large = || KernelError::invalid_argument("filter too large");
    let pixels = g
        .axes
        .iter()
        .try_fold(g.batch, |n, a| n.checked_mul(a.out.out))
        .ok_or_else(too_large)?;
    let k = g
        .axes
        .iter()
        .try_fold(g.patch_depth, |n, a| n.checked_mul(a.window))
        .ok_or_else(too_large)?;
    if pixels == 0 || g.out_depth == 0 {
        return Ok(());
    }
    if direct_conv::suits(g) {
        let out = out
            .get_mut(..pixels * g.out_depth)
            .ok_or_else(|| KernelError::internal("convolution output too small"))?;
        if let Some(done) = T::convolve_directly(g, input, filter.elements, out, epilogue) {
            return done;
        }
    }
    let pointwise = g.pointwise();
    let row_macs = k.saturating_mul(g.out_depth).max(1);
    let total_macs = pixels.saturating_mul(row_macs);
    let threads = rayon::current_num_threads();
    let parallel = total_macs >= crate::split::min_parallel_work(PARALLEL_MACS) && threads > 1;
    let patch_rows = (PATCH_BUDGET_BYTES / std::mem::size_of::<T>().max(1) / k.max(1)).max(1);
    // Pixels whose product stays in cache.
    let cache_block = (BLOCK_MACS / row_macs).max(1).min(patch_rows);
    let block = if parallel {
        even_blocks(pixels, cache_block, threads)
    } else {
        cache_block.max(MIN_BLOCK_PIXELS).min(pixels)
    }
    .min(patch_rows)
    .max(1);
    let blocks = Blocks {
        g,
        taps: if pointwise {
            Default::default()
        } else {
            g.axes.map(|a| a.taps())
        },
        pointwise,
        k,
        input,
        filter,
        epilogue,
    };
    let out = out
        .get_mut(..pixels * g.out_depth)
        .ok_or_else(|| KernelError::internal("convolution output too small"))?;
    if parallel && block < pixels {
        out.par_chunks_mut(block * g.out_depth)
            .enumerate()
            .try_for_each(|(i, dst)| blocks.run(i * block, dst, Threads::Caller))
    } else if block == pixels {
        blocks.run(0, out, Threads::Pool)
    } else {
        out.chunks_mut(block * g.out_depth)
            .enumerate()
            .try_for_each(|(i, dst)| blocks.run(i * block, dst, Threads::Pool))
    }
}

/// A convolution's filter (DHWIO): its elements, and the matrix of its
/// rows (`D·H·W·I`) by output channels packed ahead of time when it is a
/// constant (used when the convolution has one group).
#[derive(Clone, Copy)]
pub(crate) struct Filter<'a, T> {
    pub(crate) elements: &'a [T],
    pub(crate) packed: Option<&'a PackedRhs>,
}

impl<'a, T> From<&'a [T]> for Filter<'a, T> {
    /// A filter not packed ahead of time.
    fn from(elements: &'a [T]) -> Self {
        Self {
            elements,
            packed: None,
        }
    }
}

/// The pixels per block of a convolution split over `threads`: blocks of
/// even size, as many for each thread (two or more, and more when a block
/// of `cache_block` pixels would not hold them), unless that makes them
/// smaller than [`MIN_BLOCK_PIXELS`]: then one per thread, or one block
/// of all the `pixels` (its product then splits over the threads itself)
/// when even those are too small. A last block much smaller than the others
/// would leave a thread idle.
fn even_blocks(pixels: usize, cache_block: usize, threads: usize) -> usize {
    let threads = threads.max(1);
    let tasks = pixels
        .div_ceil(cache_block.max(1))
        .max(2 * threads)
        .next_multiple_of(threads);
    let even = pixels.div_ceil(tasks);
    let per_thread = pixels.div_ceil(threads);
    if even >= MIN_BLOCK_PIXELS {
        even
    } else if per_thread >= MIN_BLOCK_PIXELS {
        per_thread
    } else {
        pixels
    }
}

/// One convolution's blocks of output pixels.
struct Blocks<'a, T> {
    g: &'a VolumeGeometry,
    /// Each axis's window taps (not needed for a pointwise convolution).
    taps: [Vec<WindowTaps>; 3],
    /// 1×1(×1), stride 1, no padding: each input pixel is its own patch.
    pointwise: bool,
    /// Patch length (filter rows).
    k: usize,
    input: &'a [T],
    filter: Filter<'a, T>,
    epilogue: Option<RowEpilogue<'a, T>>,
}

impl<T: GemmElement> Blocks<'_, T> {
    /// Output pixels `start..` into `dst` (whole pixels), then the
    /// epilogue over them.
    fn run(&self, start: usize, dst: &mut [T], threads: Threads) -> Result<(), KernelError> {
        let g = self.g;
        let rows = dst.len() / g.out_depth;
        let groups = g.in_depth / g.patch_depth;
        let group_out = g.out_depth / groups;
        let mut patches = if self.pointwise {
            Vec::new()
        } else {
            empty_buffer::<T>(rows.checked_mul(self.k))?
        };
        for grp in 0..groups {
            let a = if self.pointwise {
                MatRef::new(
                    tail(self.input, start * g.in_depth + grp * g.patch_depth)?,
                    rows,
                    g.patch_depth,
                    g.in_depth,
                    1,
                )?
            } else {
                fill_patches(
                    g,
                    &self.taps,
                    self.input,
                    grp,
                    start,
                    rows,
                    self.k,
                    &mut patches,
                );
                MatRef::row_major(&patches, rows, self.k)?
            };
            let b = MatRef::new(
                tail(self.filter.elements, grp * group_out)?,
                self.k,
                group_out,
                g.out_depth,
                1,
            )?;
            let d = MatMut::new(
                tail_mut(dst, grp * group_out)?,
                rows,
                group_out,
                g.out_depth,
                1,
            )?;
            // (The packed filter is the whole filter's matrix: its dims
            // match one group's only when there is one group.)
            T::gemm_packed_on(a, b, self.filter.packed, d, threads)?;
        }
        if let Some(epilogue) = self.epilogue {
            epilogue(start * g.out_depth, dst);
        }
        Ok(())
    }
}

/// Replaces `patches` with the patches of the `rows` output pixels from
/// `start` (one row of `k` elements per pixel, ordered (filter plane, row,
/// column, channel) like the filter's rows) for group `grp`; taps in the
/// padding are zero. The patches are appended, so only the padding is
/// written twice (no zero fill first); each filter row's taps inside the
/// input are one copy when they are contiguous there (no dilation, one
/// group).
#[allow(clippy::too_many_arguments)]
fn fill_patches<T: GemmElement>(
    g: &VolumeGeometry,
    taps: &[Vec<WindowTaps>; 3],
    input: &[T],
    grp: usize,
    start: usize,
    rows_wanted: usize,
    k: usize,
    patches: &mut Vec<T>,
) {
    patches.clear();
    if k == 0 {
        return;
    }
    let [planes, rows, cols] = g.axes;
    let depth = g.patch_depth;
    let contiguous = cols.dilation == 1 && depth == g.in_depth;
    let zeros = |patches: &mut Vec<T>, n: usize| patches.resize(patches.len() + n, T::default());
    // Copies `len` input elements from `at`, or zeros if they are not
    // there (the geometry was checked against the input, so they are).
    let copy = |patches: &mut Vec<T>, at: usize, len: usize| match input.get(at..at + len) {
        Some(src) => patches.extend_from_slice(src),
        None => zeros(patches, len),
    };
    let fill_row = |[b, od, oh, ow]: [usize; 4], patches: &mut Vec<T>| {
        let (plane_taps, row_taps, col_taps) = (taps[0][od], taps[1][oh], taps[2][ow]);
        let row_len = cols.window * depth;
        for fd in 0..planes.window {
            let Some(id) = plane_taps.input_at(fd, planes.dilation) else {
                zeros(patches, rows.window * row_len);
                continue;
            };
            for fh in 0..rows.window {
                let Some(ih) = row_taps.input_at(fh, rows.dilation) else {
                    zeros(patches, row_len);
                    continue;
                };
                let input_row = ((b * planes.input + id) * rows.input + ih) * cols.input;
                let (inside_start, inside_end) = (col_taps.first * depth, col_taps.end * depth);
                zeros(patches, inside_start);
                if contiguous {
                    copy(
                        patches,
                        (input_row + col_taps.at) * g.in_depth,
                        inside_end - inside_start,
                    );
                } else {
                    for fw in col_taps.first..col_taps.end {
                        let iw = col_taps.input_at(fw, cols.dilation).unwrap_or(0);
                        copy(patches, (input_row + iw) * g.in_depth + grp * depth, depth);
                    }
                }
                zeros(patches, row_len - inside_end);
            }
        }
    };
    // The first pixel's (image, plane, row, column), then each next one's
    // by counting (no division per pixel).
    let [out_cols, out_rows, out_planes] = [cols.out.out, rows.out.out, planes.out.out];
    if out_cols == 0 || out_rows == 0 || out_planes == 0 {
        return;
    }
    let extents = [usize::MAX, out_planes, out_rows, out_cols];
    let mut at = [
        start / (out_cols * out_rows * out_planes),
        (start / (out_cols * out_rows)) % out_planes,
        (start / out_cols) % out_rows,
        start % out_cols,
    ];
    for _ in 0..rows_wanted {
        fill_row(at, patches);
        // The next pixel: the last coordinate counts up, carrying over.
        for (coordinate, &extent) in at.iter_mut().zip(&extents).rev() {
            *coordinate += 1;
            if *coordinate < extent {
                break;
            }
            *coordinate = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parallel_blocks_are_even_and_not_too_small() {
        // 48x48 images: two or more blocks per thread, as the cache asks.
        assert_eq!(even_blocks(4608, 100, 2), 96);
        assert_eq!(even_blocks(4608, 10_000, 2), 1152);
        // 200 pixels: 4 blocks would be under 64 pixels; one per thread.
        assert_eq!(even_blocks(200, 1000, 2), 100);
        // 72 pixels (6x6, two images): one block, whose product splits
        // itself (not 64 pixels and 8).
        assert_eq!(even_blocks(72, 1000, 2), 72);
        for pixels in [130, 333, 1000, 4609] {
            let block = even_blocks(pixels, 64, 2);
            let last = pixels - (pixels.div_ceil(block) - 1) * block;
            assert!(
                last * 2 >= block,
                "{pixels}: blocks of {block}, last {last}"
            );
        }
    }
}

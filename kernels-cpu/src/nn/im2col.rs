//! The arithmetic of an NHWC convolution: input patches laid out as rows
//! (im2col) and multiplied by the filter, one product per group.

use rayon::prelude::*;
use registry_core::kernel::KernelError;

use super::gemm::{GemmElement, MatMut, MatRef, dense_buffer};
use opreg_op_logic::conv::ConvGeometry;
use opreg_op_logic::window::tap;

/// Bytes of im2col patches built at a time (bounds the scratch memory).
const PATCH_BUDGET_BYTES: usize = 8 << 20;
/// Patch elements below which building them stays on one thread.
const PARALLEL_ELEMENTS: usize = 1 << 15;

fn tail<T>(s: &[T], start: usize) -> Result<&[T], KernelError> {
    s.get(start..)
        .ok_or_else(|| KernelError::internal("convolution operand offset out of range"))
}

fn tail_mut<T>(s: &mut [T], start: usize) -> Result<&mut [T], KernelError> {
    s.get_mut(start..)
        .ok_or_else(|| KernelError::internal("convolution output offset out of range"))
}

/// Convolves NHWC `input` with HWIO `filter` into NHWC `out` (every
/// element written). `in_depth` is a multiple of `patch_depth` and
/// `out_depth` of the group count; the slices have the geometry's sizes.
pub(crate) fn conv2d_nhwc<T: GemmElement>(
    g: &ConvGeometry,
    input: &[T],
    filter: &[T],
    out: &mut [T],
) -> Result<(), KernelError> {
    let groups = g.in_depth / g.patch_depth;
    let group_out = g.out_depth / groups;
    let pixels = g.batch * g.rows.out * g.cols.out;
    let k = g
        .filter_rows
        .checked_mul(g.filter_cols)
        .and_then(|v| v.checked_mul(g.patch_depth))
        .ok_or_else(|| KernelError::invalid_argument("filter too large"))?;
    let pointwise = g.filter_rows == 1
        && g.filter_cols == 1
        && g.stride_rows == 1
        && g.stride_cols == 1
        && g.rows.pad_before == 0
        && g.cols.pad_before == 0
        && g.rows.out == g.in_rows
        && g.cols.out == g.in_cols;
    if pointwise {
        // 1×1, stride 1, no padding: each input pixel is its own patch.
        for grp in 0..groups {
            let a = MatRef::new(
                tail(input, grp * g.patch_depth)?,
                pixels,
                g.patch_depth,
                g.in_depth,
                1,
            )?;
            let b = MatRef::new(tail(filter, grp * group_out)?, k, group_out, g.out_depth, 1)?;
            let dst = MatMut::new(
                tail_mut(out, grp * group_out)?,
                pixels,
                group_out,
                g.out_depth,
                1,
            )?;
            T::gemm(a, b, dst)?;
        }
        return Ok(());
    }
    let chunk = (PATCH_BUDGET_BYTES / std::mem::size_of::<T>() / k.max(1)).clamp(1, pixels.max(1));
    let mut patches = dense_buffer::<T>(chunk.checked_mul(k))?;
    for start in (0..pixels).step_by(chunk) {
        let rows = chunk.min(pixels - start);
        let patches = patches
            .get_mut(..rows * k)
            .ok_or_else(|| KernelError::internal("im2col buffer too small"))?;
        for grp in 0..groups {
            fill_patches(g, input, grp, start, k, patches);
            let a = MatRef::row_major(patches, rows, k)?;
            let b = MatRef::new(tail(filter, grp * group_out)?, k, group_out, g.out_depth, 1)?;
            let dst = MatMut::new(
                tail_mut(out, start * g.out_depth + grp * group_out)?,
                rows,
                group_out,
                g.out_depth,
                1,
            )?;
            T::gemm(a, b, dst)?;
        }
    }
    Ok(())
}

/// Writes the patches of output pixels `start..` (one row of `k` elements
/// per pixel, ordered (filter row, filter column, channel) like the
/// filter's rows) for group `grp`; taps in the padding are zero.
fn fill_patches<T: GemmElement>(
    g: &ConvGeometry,
    input: &[T],
    grp: usize,
    start: usize,
    k: usize,
    patches: &mut [T],
) {
    if k == 0 {
        return;
    }
    let fill_row = |(r, row): (usize, &mut [T])| {
        let pixel = start + r;
        let ow = pixel % g.cols.out;
        let oh = (pixel / g.cols.out) % g.rows.out;
        let b = pixel / (g.cols.out * g.rows.out);
        let depth = g.patch_depth;
        for (fh, taps) in row.chunks_exact_mut(g.filter_cols * depth).enumerate() {
            let ih = tap(
                oh,
                fh,
                g.stride_rows,
                g.dilation_rows,
                g.rows.pad_before,
                g.in_rows,
            );
            for (fw, dst) in taps.chunks_exact_mut(depth).enumerate() {
                let iw = tap(
                    ow,
                    fw,
                    g.stride_cols,
                    g.dilation_cols,
                    g.cols.pad_before,
                    g.in_cols,
                );
                let src = ih.zip(iw).and_then(|(ih, iw)| {
                    let at = ((b * g.in_rows + ih) * g.in_cols + iw) * g.in_depth + grp * depth;
                    input.get(at..at + depth)
                });
                match src {
                    Some(src) => dst.copy_from_slice(src),
                    None => dst.fill(T::default()),
                }
            }
        }
    };
    if patches.len() >= PARALLEL_ELEMENTS && rayon::current_num_threads() > 1 {
        patches.par_chunks_mut(k).enumerate().for_each(fill_row);
    } else {
        patches.chunks_mut(k).enumerate().for_each(fill_row);
    }
}

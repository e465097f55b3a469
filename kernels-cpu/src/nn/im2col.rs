//! The arithmetic of an NHWC or NDHWC convolution: input patches laid out as rows
//! (im2col) and multiplied by the filter, one product per group.

use rayon::prelude::*;
use registry_core::kernel::KernelError;

use super::gemm::{GemmElement, MatMut, MatRef, dense_buffer};
use opreg_op_logic::volume::VolumeGeometry;

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

/// Convolves NDHWC `input` with DHWIO `filter` into NDHWC `out` (every
/// element written); a 2-D convolution is the volume of its
/// [`opreg_op_logic::conv::ConvGeometry::volume`]. `in_depth` is a
/// multiple of `patch_depth` and `out_depth` of the group count; the
/// slices have the geometry's sizes.
pub(crate) fn conv_ndhwc<T: GemmElement>(
    g: &VolumeGeometry,
    input: &[T],
    filter: &[T],
    out: &mut [T],
) -> Result<(), KernelError> {
    let groups = g.in_depth / g.patch_depth;
    let group_out = g.out_depth / groups;
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
    let pointwise = g
        .axes
        .iter()
        .all(|a| a.window == 1 && a.stride == 1 && a.out.pad_before == 0 && a.out.out == a.input);
    if pointwise {
        // 1×1(×1), stride 1, no padding: each input pixel is its own patch.
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
/// per pixel, ordered (filter plane, row, column, channel) like the
/// filter's rows) for group `grp`; taps in the padding are zero.
fn fill_patches<T: GemmElement>(
    g: &VolumeGeometry,
    input: &[T],
    grp: usize,
    start: usize,
    k: usize,
    patches: &mut [T],
) {
    if k == 0 {
        return;
    }
    let [planes, rows, cols] = g.axes;
    let depth = g.patch_depth;
    let fill_row = |(r, row): (usize, &mut [T])| {
        let pixel = start + r;
        let ow = pixel % cols.out.out;
        let oh = (pixel / cols.out.out) % rows.out.out;
        let od = (pixel / (cols.out.out * rows.out.out)) % planes.out.out;
        let b = pixel / (cols.out.out * rows.out.out * planes.out.out);
        for (fd, plane_taps) in row
            .chunks_exact_mut(rows.window * cols.window * depth)
            .enumerate()
        {
            let id = planes.tap(od, fd);
            for (fh, row_taps) in plane_taps.chunks_exact_mut(cols.window * depth).enumerate() {
                let ih = rows.tap(oh, fh);
                for (fw, dst) in row_taps.chunks_exact_mut(depth).enumerate() {
                    let iw = cols.tap(ow, fw);
                    let src = id.zip(ih).zip(iw).and_then(|((id, ih), iw)| {
                        let at = (((b * planes.input + id) * rows.input + ih) * cols.input + iw)
                            * g.in_depth
                            + grp * depth;
                        input.get(at..at + depth)
                    });
                    match src {
                        Some(src) => dst.copy_from_slice(src),
                        None => dst.fill(T::default()),
                    }
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

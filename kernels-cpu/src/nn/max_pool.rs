//! `MaxPool`: the maximum of each window (TF's `MaxPoolingOp` on the CPU).

use std::marker::PhantomData;

use opreg_standard_ops::MaxPool;
use rayon::prelude::*;
use registry_core::kernel;
use registry_core::kernel::{
    BuildKernel, KernelError, OpKernel, OpKernelConstruction, OpKernelContext,
};

use crate::numeric::Real;
use opreg_op_logic::pool::{Pool2DParams, PoolGeometry, PoolWindows};
use opreg_op_logic::window::{DataFormat, Padding};

/// Output elements below this count are computed on one thread.
const PARALLEL_ELEMENTS: usize = 1 << 15;

/// An element MaxPool starts its windows from: TF initialises the output
/// with `NumTraits<T>::lowest()`, the most negative *finite* value for
/// floats (so a window of only `-inf` gives `lowest`, as in TensorFlow).
pub(crate) trait PoolElement: Real {
    /// The most negative finite value.
    const LOWEST_FINITE: Self;
}

macro_rules! pool_int {
    ($($t:ty),*) => {$(
        impl PoolElement for $t {
            const LOWEST_FINITE: Self = <$t>::MIN;
        }
    )*};
}

pool_int!(i8, i16, i32, i64, u8, u16, u32, u64);

impl PoolElement for f32 {
    const LOWEST_FINITE: Self = f32::MIN;
}
impl PoolElement for f64 {
    const LOWEST_FINITE: Self = f64::MIN;
}
impl PoolElement for registry_core::tensor::f16 {
    const LOWEST_FINITE: Self = registry_core::tensor::f16::MIN;
}
impl PoolElement for registry_core::tensor::bf16 {
    const LOWEST_FINITE: Self = registry_core::tensor::bf16::MIN;
}

/// `MaxPool` on the CPU (NHWC, as TensorFlow's CPU kernel): spatial
/// windows (`ksize`/`strides` on H and W, VALID/SAME/EXPLICIT padding) or
/// depthwise windows (`ksize` on C only, equal to its stride).
///
/// NaN: TensorFlow's CPU kernel updates `out = max(out, in)` with Eigen's
/// `cwiseMax`, which keeps `out` when the comparison fails, so NaN inputs
/// never win; the same rule is used here (`if out < in { out = in }`).
#[kernel(op = MaxPool, device = CPU, T = [half, bfloat16, float, double, int32, int64, uint8, int16, int8, uint16])]
#[derive(Debug)]
pub struct MaxPoolKernel<T> {
    params: Pool2DParams,
    _t: PhantomData<fn() -> T>,
}

impl<T: PoolElement> BuildKernel for MaxPoolKernel<T> {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        let format = DataFormat::parse(&ctx.attr::<String>("data_format")?)?;
        registry_core::kernel_ensure!(
            format == DataFormat::Nhwc,
            "Default MaxPoolingOp only supports NHWC on device type CPU"
        );
        Ok(Self {
            params: Pool2DParams::from_attrs(ctx.attrs(), format)?,
            _t: PhantomData,
        })
    }
}

impl<T: PoolElement> OpKernel for MaxPoolKernel<T> {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        let input = ctx.input(0)?.clone();
        let geo = match self.params.windows(input.dims())? {
            PoolWindows::Spatial(geo) => geo,
            PoolWindows::Depthwise(depth_window) => {
                let p = &self.params;
                return depthwise::<T>(p.strides[3], p.padding, ctx, &input, depth_window);
            }
        };
        let out = ctx.allocate_output(0, geo.out_shape(DataFormat::Nhwc))?;
        let out = out.as_mut_slice::<T>()?;
        let input = input.as_slice::<T>()?;
        let row_len = geo.cols.out * geo.depth;
        if row_len == 0 || out.is_empty() {
            return Ok(());
        }
        let pool_row = |(r, row): (usize, &mut [T])| pool_output_row(&geo, input, r, row);
        if out.len() < PARALLEL_ELEMENTS {
            out.chunks_mut(row_len).enumerate().for_each(pool_row);
        } else {
            out.par_chunks_mut(row_len).enumerate().for_each(pool_row);
        }
        Ok(())
    }
}

/// Pooling across channels: `ksize` and `strides` equal on C, 1 elsewhere.
fn depthwise<T: PoolElement>(
    depth_stride: i64,
    padding: Padding,
    ctx: &mut OpKernelContext<'_>,
    input: &registry_core::tensor::Tensor,
    depth_window: usize,
) -> Result<(), KernelError> {
    let &[batch, in_rows, in_cols, depth] = input.dims() else {
        return Err(KernelError::internal(
            "depthwise max pooling of a non-4-D input",
        ));
    };
    if !depth.is_multiple_of(depth_window) {
        return Err(KernelError::unimplemented(
            "Depthwise max pooling requires the depth window to evenly divide the input depth",
        ));
    }
    if usize::try_from(depth_stride).ok() != Some(depth_window) {
        return Err(KernelError::unimplemented(
            "Depthwise max pooling requires the depth window to equal the depth stride",
        ));
    }
    if padding == Padding::Explicit {
        return Err(KernelError::unimplemented(
            "Depthwise max pooling does not support explicit padding.",
        ));
    }
    let out = ctx.allocate_output(0, [batch, in_rows, in_cols, depth / depth_window])?;
    let out = out.as_mut_slice::<T>()?;
    for (o, window) in out
        .iter_mut()
        .zip(input.as_slice::<T>()?.chunks_exact(depth_window))
    {
        *o = window
            .iter()
            .fold(T::LOWEST_FINITE, |m, &v| if m < v { v } else { m });
    }
    Ok(())
}

/// The input positions `[start, end)` a window starting at output index
/// `o` covers along one dimension (clipped to the input).
fn window_range(
    o: usize,
    window: usize,
    stride: i64,
    pad_before: i64,
    input: usize,
) -> (usize, usize) {
    let first = i64::try_from(o)
        .unwrap_or(i64::MAX)
        .saturating_mul(stride)
        .saturating_sub(pad_before);
    let last = first.saturating_add(i64::try_from(window).unwrap_or(i64::MAX));
    let clip = |v: i64| usize::try_from(v.max(0)).unwrap_or(usize::MAX).min(input);
    (clip(first), clip(last))
}

/// Output row `r` (image `r / out_rows`, row `r % out_rows`): each pixel's
/// channels are the maximum over its window, starting from `lowest`.
fn pool_output_row<T: PoolElement>(g: &PoolGeometry, input: &[T], r: usize, row: &mut [T]) {
    let (b, oh) = (r / g.rows.out, r % g.rows.out);
    let depth = g.depth;
    row.fill(T::LOWEST_FINITE);
    let (h0, h1) = window_range(
        oh,
        g.window_rows,
        g.stride_rows,
        g.rows.pad_before,
        g.in_rows,
    );
    for (ow, out_px) in row.chunks_exact_mut(depth).enumerate() {
        let (w0, w1) = window_range(
            ow,
            g.window_cols,
            g.stride_cols,
            g.cols.pad_before,
            g.in_cols,
        );
        for ih in h0..h1 {
            for iw in w0..w1 {
                let at = ((b * g.in_rows + ih) * g.in_cols + iw) * depth;
                let Some(in_px) = input.get(at..at + depth) else {
                    continue;
                };
                for (o, &v) in out_px.iter_mut().zip(in_px) {
                    if *o < v {
                        *o = v;
                    }
                }
            }
        }
    }
}

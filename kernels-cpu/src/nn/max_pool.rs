//! `MaxPool` and `MaxPool3D`: the maximum of each window (TF's
//! `MaxPoolingOp` and `Pooling3DOp` on the CPU), one loop nest for both.

use std::marker::PhantomData;

use opreg_standard_ops::{MaxPool, MaxPool3D};
use rayon::prelude::*;
use registry_core::kernel;
use registry_core::kernel::{
    BuildKernel, KernelError, OpKernel, OpKernelConstruction, OpKernelContext,
};

use crate::numeric::Real;
use opreg_op_logic::pool::{Pool2DParams, PoolWindows};
use opreg_op_logic::volume::{Pool3DParams, VolumeFormat, VolumeGeometry};
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
        // Every element is written.
        let out = ctx.allocate_output_to_overwrite(0, geo.out_shape(DataFormat::Nhwc))?;
        max_pool_ndhwc(
            &geo.volume(),
            input.as_slice::<T>()?,
            out.as_mut_slice::<T>()?,
        );
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

/// Max-pools NDHWC `input` into NDHWC `out` by `g`'s windows (a 2-D
/// pooling is the volume of its [`opreg_op_logic::pool::PoolGeometry::volume`]); output rows run
/// in parallel when the work is large.
fn max_pool_ndhwc<T: PoolElement>(g: &VolumeGeometry, input: &[T], out: &mut [T]) {
    let row_len = g.axes[2].out.out * g.out_depth;
    if row_len == 0 || out.is_empty() {
        return;
    }
    let pool_row = |(r, row): (usize, &mut [T])| pool_output_row(g, input, r, row);
    if out.len() < PARALLEL_ELEMENTS {
        out.chunks_mut(row_len).enumerate().for_each(pool_row);
    } else {
        out.par_chunks_mut(row_len).enumerate().for_each(pool_row);
    }
}

/// Output row `r` (volume `r / (out planes * out rows)`, then plane and
/// row): each pixel's channels are the maximum over its window, starting
/// from the lowest finite value. Compiled for each SIMD level the machine
/// may have and picked at run time (the same comparisons on each).
#[multiversion::multiversion(targets = "simd")]
fn pool_output_row<T: PoolElement>(g: &VolumeGeometry, input: &[T], r: usize, row: &mut [T]) {
    let [planes, rows, cols] = g.axes;
    let oh = r % rows.out.out;
    let od = (r / rows.out.out) % planes.out.out;
    let b = r / (rows.out.out * planes.out.out);
    let depth = g.out_depth;
    let (d0, d1) = planes.window_range(od);
    let (h0, h1) = rows.window_range(oh);
    let mut window = smallvec::SmallVec::<[usize; 16]>::new();
    for (ow, out_px) in row.chunks_exact_mut(depth).enumerate() {
        let (w0, w1) = cols.window_range(ow);
        window.clear();
        for id in d0..d1 {
            for ih in h0..h1 {
                let input_row = ((b * planes.input + id) * rows.input + ih) * cols.input;
                for iw in w0..w1 {
                    window.push((input_row + iw) * depth);
                }
            }
        }
        let mut c = 0;
        while c + 16 <= depth {
            window_max::<T, 16>(input, &window, c, &mut out_px[c..]);
            c += 16;
        }
        while c + 8 <= depth {
            window_max::<T, 8>(input, &window, c, &mut out_px[c..]);
            c += 8;
        }
        while c < depth {
            window_max::<T, 1>(input, &window, c, &mut out_px[c..]);
            c += 1;
        }
    }
}

/// Channels `c..c + B` of one output pixel: the maximum over the input
/// pixels at `window`, kept in registers until the one store (a store per
/// input pixel would be reloaded at once, which a masked store cannot
/// forward: measured 4 times slower).
#[inline(always)]
fn window_max<T: PoolElement, const B: usize>(
    input: &[T],
    window: &[usize],
    c: usize,
    out: &mut [T],
) {
    let mut acc = [T::LOWEST_FINITE; B];
    for &at in window {
        let Some(x) = input.get(at + c..).and_then(<[T]>::first_chunk::<B>) else {
            continue;
        };
        for (a, &v) in acc.iter_mut().zip(x) {
            *a = if *a < v { v } else { *a };
        }
    }
    if let Some(out) = out.first_chunk_mut::<B>() {
        *out = acc;
    }
}

/// `MaxPool3D` on the CPU (NDHWC, as TensorFlow's CPU kernel; `SAME` or
/// `VALID` windows over planes, rows and columns), with `MaxPool`'s rules
/// (windows start from the most negative finite value; NaN never wins).
#[kernel(op = MaxPool3D, device = CPU, T = [bfloat16, float])]
#[derive(Debug)]
pub struct MaxPool3DKernel<T> {
    params: Pool3DParams,
    _t: PhantomData<fn() -> T>,
}

impl<T: PoolElement> BuildKernel for MaxPool3DKernel<T> {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        Ok(Self {
            params: Pool3DParams::from_attrs(ctx.attrs(), cpu_volume_format(ctx)?)?,
            _t: PhantomData,
        })
    }
}

impl<T: PoolElement> OpKernel for MaxPool3DKernel<T> {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        let input = ctx.input(0)?.clone();
        let geo = self.params.geometry(input.dims())?;
        // Every element is written.
        let out = ctx.allocate_output_to_overwrite(0, geo.out_shape(VolumeFormat::Ndhwc))?;
        max_pool_ndhwc(&geo, input.as_slice::<T>()?, out.as_mut_slice::<T>()?);
        Ok(())
    }
}

/// The `data_format` of a 3-D pooling node, which TF's CPU kernels require
/// to be NDHWC before anything else.
pub(super) fn cpu_volume_format(
    ctx: &OpKernelConstruction<'_>,
) -> Result<VolumeFormat, KernelError> {
    let format = VolumeFormat::parse(&ctx.attr::<String>("data_format")?)?;
    registry_core::kernel_ensure!(
        format == VolumeFormat::Ndhwc,
        "Default Pooling3DOp only supports NDHWC on device type CPU"
    );
    Ok(format)
}

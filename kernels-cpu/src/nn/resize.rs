//! `ResizeBilinear` and `ResizeNearestNeighbor` (TF's `image_resizer_state.h`,
//! `resize_bilinear_op.cc`, `resize_nearest_neighbor_op.cc`): the checks of
//! `ImageResizerState` with TF's messages, the scale
//! `(in - 1) / (out - 1)` with `align_corners` (else `in / out`), the
//! legacy or half-pixel sampling position, bilinear weights computed in
//! `f32` as TF does. Images (and output rows) run in parallel.

use std::marker::PhantomData;

use opreg_op_logic::index::int_values;
use opreg_standard_ops::{ResizeBilinear, ResizeNearestNeighbor};
use rayon::prelude::*;
use registry_core::kernel;
use registry_core::kernel::{
    BuildKernel, KernelError, OpKernel, OpKernelConstruction, OpKernelContext,
};
use registry_core::tensor::{Tensor, bf16, f16};

use crate::numeric::Element;

/// A checked resize: sizes and scales.
#[derive(Debug, Clone, Copy)]
struct Resize {
    batch: usize,
    in_height: usize,
    in_width: usize,
    out_height: usize,
    out_width: usize,
    channels: usize,
    height_scale: f32,
    width_scale: f32,
}

/// The attrs both resizes read.
#[derive(Debug, Clone, Copy)]
struct ResizeAttrs {
    align_corners: bool,
    half_pixel_centers: bool,
}

impl ResizeAttrs {
    fn from(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        let a = Self {
            align_corners: ctx.attr("align_corners")?,
            half_pixel_centers: ctx.attr("half_pixel_centers")?,
        };
        registry_core::kernel_ensure!(
            !(a.half_pixel_centers && a.align_corners),
            "If half_pixel_centers is True, align_corners must be False."
        );
        Ok(a)
    }

    /// TF's `CalculateResizeScale`.
    fn scale(self, input: usize, output: usize) -> f32 {
        if self.align_corners && output > 1 {
            (input as f32 - 1.0) / (output as f32 - 1.0)
        } else {
            input as f32 / output as f32
        }
    }

    /// `ImageResizerState::ValidateAndCalculateOutputSize`.
    fn check(self, input: &Tensor, size: &Tensor) -> Result<Resize, KernelError> {
        registry_core::kernel_ensure!(
            input.shape().rank() == 4,
            "input must be 4-dimensional{}",
            input.shape()
        );
        registry_core::kernel_ensure!(
            size.shape().rank() == 1,
            "shape_t must be 1-D{}",
            size.shape()
        );
        registry_core::kernel_ensure!(
            size.num_elements() == 2,
            "shape_t must have two elements{}",
            size.shape()
        );
        let sizes = int_values(size)?;
        let d = input.dims();
        registry_core::kernel_ensure!(
            d[1] <= i32::MAX as usize && d[2] <= i32::MAX as usize,
            "input sizes must be between 0 and max int32"
        );
        registry_core::kernel_ensure!(
            sizes[0] > 0 && sizes[1] > 0,
            "output dimensions must be positive"
        );
        registry_core::kernel_ensure!(d[3] > 0, "image must have at least one channel");
        registry_core::kernel_ensure!(d[1] > 0 && d[2] > 0, "input image must be of non-zero size");
        let (out_height, out_width) = (sizes[0] as usize, sizes[1] as usize);
        Ok(Resize {
            batch: d[0],
            in_height: d[1],
            in_width: d[2],
            out_height,
            out_width,
            channels: d[3],
            height_scale: self.scale(d[1], out_height),
            width_scale: self.scale(d[2], out_width),
        })
    }
}

/// Bilinear interpolation weights of one output coordinate.
#[derive(Debug, Clone, Copy)]
struct Interpolation {
    lower: usize,
    upper: usize,
    lerp: f32,
}

/// TF's `compute_interpolation_weights`.
fn weights(out_size: usize, in_size: usize, scale: f32, half_pixel: bool) -> Vec<Interpolation> {
    (0..out_size)
        .map(|i| {
            let pos = if half_pixel {
                (i as f32 + 0.5) * scale - 0.5
            } else {
                i as f32 * scale
            };
            let floor = pos.floor();
            Interpolation {
                lower: (floor as i64).max(0) as usize,
                upper: (pos.ceil() as i64).min(in_size as i64 - 1).max(0) as usize,
                lerp: pos - floor,
            }
        })
        .collect()
}

/// An element the resizes read: its value as `f32`.
pub(crate) trait ResizeElement: Element {
    /// The value as `f32` (as TF's `static_cast<float>`).
    fn to_f32(self) -> f32;
}

macro_rules! resize_as {
    ($($t:ty),*) => {$(
        impl ResizeElement for $t {
            #[inline(always)]
            #[allow(clippy::cast_precision_loss, clippy::cast_lossless)]
            fn to_f32(self) -> f32 {
                self as f32
            }
        }
    )*};
}
resize_as!(i8, u8, i16, u16, i32, i64, u32, u64, f32, f64);

impl ResizeElement for f16 {
    fn to_f32(self) -> f32 {
        f16::to_f32(self)
    }
}
impl ResizeElement for bf16 {
    fn to_f32(self) -> f32 {
        bf16::to_f32(self)
    }
}

/// `ResizeBilinear` on the CPU; the output is `float`.
#[kernel(
    op = ResizeBilinear,
    device = CPU,
    T = [int8, uint8, int16, uint16, int32, int64, bfloat16, half, float, double],
    host_memory = ["size"]
)]
#[derive(Debug)]
pub struct ResizeBilinearKernel<T> {
    attrs: ResizeAttrs,
    _t: PhantomData<fn() -> T>,
}

impl<T: ResizeElement> BuildKernel for ResizeBilinearKernel<T> {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        Ok(Self {
            attrs: ResizeAttrs::from(ctx)?,
            _t: PhantomData,
        })
    }
}

impl<T: ResizeElement> OpKernel for ResizeBilinearKernel<T> {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        let input = ctx.input(0)?.clone();
        let r = self.attrs.check(&input, ctx.input(1)?)?;
        let out = ctx.allocate_output(0, [r.batch, r.out_height, r.out_width, r.channels])?;
        let out = out.as_mut_slice::<f32>()?;
        if out.is_empty() {
            return Ok(());
        }
        let x = input.as_slice::<T>()?;
        let half = self.attrs.half_pixel_centers;
        let ys = weights(r.out_height, r.in_height, r.height_scale, half);
        let xs = weights(r.out_width, r.in_width, r.width_scale, half);
        let c = r.channels;
        let row_len = r.out_width * c;
        let fill = |(index, row): (usize, &mut [f32])| {
            let (n, y) = (index / r.out_height, index % r.out_height);
            let wy = ys[y];
            let image = n * r.in_height * r.in_width * c;
            let top = image + wy.lower * r.in_width * c;
            let bottom = image + wy.upper * r.in_width * c;
            for (o, wx) in row.chunks_exact_mut(c).zip(&xs) {
                let (l, u) = (wx.lower * c, wx.upper * c);
                for (k, o) in o.iter_mut().enumerate() {
                    let tl = x[top + l + k].to_f32();
                    let tr = x[top + u + k].to_f32();
                    let bl = x[bottom + l + k].to_f32();
                    let br = x[bottom + u + k].to_f32();
                    let t = tl + (tr - tl) * wx.lerp;
                    let b = bl + (br - bl) * wx.lerp;
                    *o = t + (b - t) * wy.lerp;
                }
            }
        };
        if out.len() >= 1 << 14 {
            out.par_chunks_exact_mut(row_len).enumerate().for_each(fill);
        } else {
            out.chunks_exact_mut(row_len).enumerate().for_each(fill);
        }
        Ok(())
    }
}

/// `ResizeNearestNeighbor` on the CPU.
#[kernel(
    op = ResizeNearestNeighbor,
    device = CPU,
    T = [int8, uint8, int16, uint16, int32, int64, half, float, double, bfloat16],
    host_memory = ["size"]
)]
#[derive(Debug)]
pub struct ResizeNearestNeighborKernel<T> {
    attrs: ResizeAttrs,
    _t: PhantomData<fn() -> T>,
}

impl<T: Element> BuildKernel for ResizeNearestNeighborKernel<T> {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        Ok(Self {
            attrs: ResizeAttrs::from(ctx)?,
            _t: PhantomData,
        })
    }
}

/// The input index nearest to output index `i` (TF's
/// `ResizeNearestNeighbor` functor).
fn nearest(i: usize, scale: f32, in_size: usize, a: ResizeAttrs) -> usize {
    let pos = if a.half_pixel_centers {
        (i as f32 + 0.5) * scale
    } else {
        i as f32 * scale
    };
    // f32::round rounds half away from zero, as C's roundf.
    let index = if a.align_corners {
        pos.round()
    } else {
        pos.floor()
    } as i64;
    index.min(in_size as i64 - 1).max(0) as usize
}

impl<T: Element> OpKernel for ResizeNearestNeighborKernel<T> {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        let input = ctx.input(0)?.clone();
        let r = self.attrs.check(&input, ctx.input(1)?)?;
        let out = ctx.allocate_output(0, [r.batch, r.out_height, r.out_width, r.channels])?;
        let out = out.as_mut_slice::<T>()?;
        if out.is_empty() {
            return Ok(());
        }
        let x = input.as_slice::<T>()?;
        let a = self.attrs;
        let cols: Vec<usize> = (0..r.out_width)
            .map(|i| nearest(i, r.width_scale, r.in_width, a))
            .collect();
        let c = r.channels;
        let row_len = r.out_width * c;
        let fill = |(index, row): (usize, &mut [T])| {
            let (n, y) = (index / r.out_height, index % r.out_height);
            let iy = nearest(y, r.height_scale, r.in_height, a);
            let src = (n * r.in_height + iy) * r.in_width * c;
            for (o, &ix) in row.chunks_exact_mut(c).zip(&cols) {
                o.copy_from_slice(&x[src + ix * c..src + ix * c + c]);
            }
        };
        if out.len() >= 1 << 14 {
            out.par_chunks_exact_mut(row_len).enumerate().for_each(fill);
        } else {
            out.chunks_exact_mut(row_len).enumerate().for_each(fill);
        }
        Ok(())
    }
}

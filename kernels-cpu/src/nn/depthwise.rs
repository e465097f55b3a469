//! `DepthwiseConv2dNative`: each input channel convolved with its own
//! `multiplier` filters (output channel `c * multiplier + q` from input
//! channel `c` and `filter[.., .., c, q]`). A direct kernel: for each output
//! pixel the taps are visited in turn and every channel of a tap is one
//! contiguous, vectorisable multiply-add over the NHWC input and the
//! filter; output rows run in parallel. `half` and `bfloat16` accumulate in
//! `f32` and round once.

use std::marker::PhantomData;

use opreg_op_logic::conv::{Conv2DParams, ConvGeometry};
use opreg_op_logic::window::{DataFormat, tap};
use opreg_standard_ops::DepthwiseConv2dNative;
use rayon::prelude::*;
use registry_core::kernel;
use registry_core::kernel::{
    BuildKernel, KernelError, OpKernel, OpKernelConstruction, OpKernelContext,
};

use super::softmax::WideFloat;

/// Output elements below which the convolution stays on one thread.
const PARALLEL_ELEMENTS: usize = 1 << 14;

/// `DepthwiseConv2dNative` on the CPU (NHWC, as TF's CPU kernel).
#[kernel(op = DepthwiseConv2dNative, device = CPU, T = [half, bfloat16, float, double])]
#[derive(Debug)]
pub struct DepthwiseConv2dNativeKernel<T> {
    params: Conv2DParams,
    _t: PhantomData<fn() -> T>,
}

impl<T: WideFloat> BuildKernel for DepthwiseConv2dNativeKernel<T> {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        Ok(Self {
            params: Conv2DParams::from_attrs(ctx.attrs())?,
            _t: PhantomData,
        })
    }
}

impl<T: WideFloat> OpKernel for DepthwiseConv2dNativeKernel<T> {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        depthwise_conv2d::<T>(&self.params, ctx, None).map(drop)
    }
}

/// What runs on each finished span of whole output pixels while it is in
/// cache (a fused op's bias and activation).
pub(super) type RowEpilogue<'a, T> = &'a (dyn Fn(&mut [T]) + Sync);

/// `DepthwiseConv2dNative` of inputs 0 and 1 into output 0 (also
/// `_FusedDepthwiseConv2dNative`'s contraction, with its `epilogue` run on
/// each output row as soon as it is computed); returns the output's
/// channel count.
pub(super) fn depthwise_conv2d<T: WideFloat>(
    params: &Conv2DParams,
    ctx: &mut OpKernelContext<'_>,
    epilogue: Option<RowEpilogue<'_, T>>,
) -> Result<usize, KernelError> {
    let input = ctx.input(0)?.clone();
    let filter = ctx.input(1)?.clone();
    let (g, multiplier) = params.depthwise_geometry(input.shape(), filter.shape())?;
    let f = params.format;
    let out = ctx.allocate_output(0, g.out_shape(f))?;
    if out.num_elements() == 0 || input.num_elements() == 0 {
        // Only padding: the zero-filled output (then the epilogue).
        if let Some(epilogue) = epilogue {
            epilogue(out.as_mut_slice::<T>()?);
        }
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

/// The convolution of NHWC `input` by `[rows, cols, depth, multiplier]`
/// `filter` into NHWC `out` (every element written), `epilogue` run on
/// each output row once it is written.
fn depthwise_nhwc<T: WideFloat>(
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
    let filter_wide: Vec<T::Acc> = filter.iter().map(|v| v.widen()).collect();
    let row = |index: usize, out_row: &mut [T]| {
        let (n, oh) = (index / g.rows.out, index % g.rows.out);
        let mut acc = vec![T::Acc::default(); out_depth];
        for (ow, o) in out_row.chunks_exact_mut(out_depth).enumerate() {
            acc.fill(T::Acc::default());
            for kh in 0..g.filter_rows {
                let Some(ih) = tap(
                    oh,
                    kh,
                    g.stride_rows,
                    g.dilation_rows,
                    g.rows.pad_before,
                    g.in_rows,
                ) else {
                    continue;
                };
                for kw in 0..g.filter_cols {
                    let Some(iw) = tap(
                        ow,
                        kw,
                        g.stride_cols,
                        g.dilation_cols,
                        g.cols.pad_before,
                        g.in_cols,
                    ) else {
                        continue;
                    };
                    let pixel = ((n * g.in_rows + ih) * g.in_cols + iw) * depth;
                    let x = &input[pixel..pixel + depth];
                    let tap_start = (kh * g.filter_cols + kw) * out_depth;
                    let w = &filter_wide[tap_start..tap_start + out_depth];
                    if multiplier == 1 {
                        for ((a, &xv), &wv) in acc.iter_mut().zip(x).zip(w) {
                            *a = *a + xv.widen() * wv;
                        }
                    } else {
                        for ((a, &xv), wq) in acc
                            .chunks_exact_mut(multiplier)
                            .zip(x)
                            .zip(w.chunks_exact(multiplier))
                        {
                            let xv = xv.widen();
                            for (a, &wv) in a.iter_mut().zip(wq) {
                                *a = *a + xv * wv;
                            }
                        }
                    }
                }
            }
            for (o, &a) in o.iter_mut().zip(&acc) {
                *o = T::narrow(a);
            }
        }
        if let Some(epilogue) = epilogue {
            epilogue(out_row);
        }
    };
    if expected < PARALLEL_ELEMENTS {
        out.chunks_exact_mut(row_len)
            .enumerate()
            .for_each(|(i, r)| row(i, r));
    } else {
        out.par_chunks_exact_mut(row_len)
            .enumerate()
            .for_each(|(i, r)| row(i, r));
    }
    Ok(())
}

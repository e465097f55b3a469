//! `Conv2DBackpropInput` (Keras' `Conv2DTranspose`): the gradient of a
//! convolution with respect to its input. Per image, the products of
//! `out_backprop` and the filter for every tap come from one matrix product
//! on the tuned `gemm` engine (`[pixels, out_depth] · [out_depth, taps ·
//! in_depth]`), then are added into the input positions they came from
//! (col2im). Images run in parallel.

use std::marker::PhantomData;

use opreg_op_logic::conv::{Conv2DParams, ConvGeometry};
use opreg_op_logic::window::{DataFormat, tap};
use opreg_standard_ops::Conv2DBackpropInput;
use rayon::prelude::*;
use registry_core::kernel;
use registry_core::kernel::{
    BuildKernel, KernelError, OpKernel, OpKernelConstruction, OpKernelContext,
};

use super::gemm::{GemmElement, MatMut, MatRef, dense_buffer};
use crate::numeric::Number;

/// `Conv2DBackpropInput` on the CPU (NHWC), also under TF's kernel labels
/// `custom` and `eigen_tensor` (a node's `_kernel` attr picks one; all are
/// this implementation).
#[kernel(
    op = Conv2DBackpropInput,
    device = CPU,
    T = [half, bfloat16, float, double, int32]
)]
#[kernel(
    op = Conv2DBackpropInput,
    device = CPU,
    T = [half, bfloat16, float, double, int32],
    label = "custom"
)]
#[kernel(
    op = Conv2DBackpropInput,
    device = CPU,
    T = [half, bfloat16, float, double, int32],
    label = "eigen_tensor"
)]
#[derive(Debug)]
pub struct Conv2DBackpropInputKernel<T> {
    params: Conv2DParams,
    _t: PhantomData<fn() -> T>,
}

impl<T: GemmElement + Number> BuildKernel for Conv2DBackpropInputKernel<T> {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        Ok(Self {
            params: Conv2DParams::from_attrs(ctx.attrs())?,
            _t: PhantomData,
        })
    }
}

impl<T: GemmElement + Number> OpKernel for Conv2DBackpropInputKernel<T> {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        let sizes = ctx.input(0)?.clone();
        let filter = ctx.input(1)?.clone();
        let dy = ctx.input(2)?.clone();
        let f = self.params.format;
        registry_core::kernel_ensure!(
            self.params.dilations.iter().all(|&d| d == 1),
            "Current CPU implementations do not yet support dilation rates larger than 1."
        );
        let (input, g) = self
            .params
            .backprop_input_geometry(&sizes, filter.shape(), dy.shape())?;
        let out = ctx.allocate_output(0, input)?;
        if out.num_elements() == 0 {
            return Ok(());
        }
        if f != DataFormat::Nhwc {
            return Err(KernelError::unimplemented(format!(
                "Conv2DBackpropInput on the CPU supports only the NHWC format, got {}",
                f.name()
            )));
        }
        if dy.num_elements() == 0 || filter.num_elements() == 0 {
            return Ok(());
        }
        backprop_input_nhwc(
            &g,
            filter.as_slice::<T>()?,
            dy.as_slice::<T>()?,
            out.as_mut_slice::<T>()?,
        )
    }
}

/// `dx = conv2d_backprop_input(filter, dy)` for NHWC `dx` (zeroed) and
/// `dy`, HWIO `filter`.
fn backprop_input_nhwc<T: GemmElement + Number>(
    g: &ConvGeometry,
    filter: &[T],
    dy: &[T],
    dx: &mut [T],
) -> Result<(), KernelError> {
    let pixels = g.rows.out * g.cols.out;
    let taps = g.filter_rows * g.filter_cols;
    let (in_depth, out_depth) = (g.in_depth, g.out_depth);
    let image_in = g.in_rows * g.in_cols * in_depth;
    let image_out = pixels * out_depth;
    let col_len = pixels.checked_mul(taps * in_depth);
    let image = |n: usize, dx_n: &mut [T]| -> Result<(), KernelError> {
        let dy_n = dy
            .get(n * image_out..(n + 1) * image_out)
            .ok_or_else(|| KernelError::internal("out_backprop image out of range"))?;
        let mut col = dense_buffer::<T>(col_len)?;
        // [pixels, out_depth] · [out_depth, taps * in_depth]: the filter
        // [taps * in_depth, out_depth] read transposed.
        T::gemm(
            MatRef::row_major(dy_n, pixels, out_depth)?,
            MatRef::row_major(filter, taps * in_depth, out_depth)?.t(),
            MatMut::row_major(&mut col, pixels, taps * in_depth)?,
        )?;
        for oh in 0..g.rows.out {
            for ow in 0..g.cols.out {
                let row = &col[(oh * g.cols.out + ow) * taps * in_depth..][..taps * in_depth];
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
                        let src = &row[(kh * g.filter_cols + kw) * in_depth..][..in_depth];
                        let dst = &mut dx_n[(ih * g.in_cols + iw) * in_depth..][..in_depth];
                        for (d, &s) in dst.iter_mut().zip(src) {
                            *d = d.add_wrap(s);
                        }
                    }
                }
            }
        }
        Ok(())
    };
    if g.batch > 1 {
        dx.par_chunks_exact_mut(image_in)
            .enumerate()
            .try_for_each(|(n, dx_n)| image(n, dx_n))
    } else {
        dx.chunks_exact_mut(image_in)
            .enumerate()
            .try_for_each(|(n, dx_n)| image(n, dx_n))
    }
}

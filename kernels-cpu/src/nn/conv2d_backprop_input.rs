//! `Conv2DBackpropInput` (Keras' `Conv2DTranspose`): the gradient of a
//! convolution with respect to its input. Per image, the products of
//! `out_backprop` and the filter for every tap come from one matrix product
//! on the tuned `gemm` engine (`[pixels, out_depth] · [out_depth, taps ·
//! in_depth]`), then are added into the input positions they came from
//! (col2im). Images run in parallel.

use std::marker::PhantomData;

use opreg_op_logic::conv::{Conv2DParams, ConvGeometry};
use opreg_op_logic::index::int_values;
use opreg_op_logic::window::{DataFormat, tap};
use opreg_standard_ops::Conv2DBackpropInput;
use rayon::prelude::*;
use registry_core::kernel;
use registry_core::kernel::{
    BuildKernel, KernelError, OpKernel, OpKernelConstruction, OpKernelContext,
};
use registry_core::tensor::Tensor;

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

/// The convolution input's shape from `input_sizes` (4 sizes, or the 2
/// spatial ones with the batch of `out_backprop` and the filter's input
/// depth), with TF's messages.
fn input_shape(
    sizes: &Tensor,
    format: DataFormat,
    out_backprop: &[usize],
    filter: &[usize],
) -> Result<[usize; 4], KernelError> {
    registry_core::kernel_ensure!(
        sizes.shape().rank() == 1,
        "input_sizes must be 1-dimensional, got: {}",
        sizes.shape()
    );
    let values = int_values(sizes)?;
    let dim = |v: i64| {
        usize::try_from(v).map_err(|_| {
            KernelError::invalid_argument(format!("Dimension -1 must be >= 0, got {v}"))
        })
    };
    match values.as_slice() {
        &[a, b, c, d] => Ok([dim(a)?, dim(b)?, dim(c)?, dim(d)?]),
        &[rows, cols] => {
            let batch = out_backprop.first().copied().unwrap_or(0);
            let depth = filter.get(2).copied().unwrap_or(0);
            Ok(format.shape(batch, dim(rows)?, dim(cols)?, depth))
        }
        other => Err(KernelError::invalid_argument(format!(
            "Conv2DBackpropInput requires input_sizes to contain 4 values or 2 values, but got: {}",
            other.len()
        ))),
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
        registry_core::kernel_ensure!(
            filter.shape().rank() == 4,
            "Conv2DBackpropInput: filter must be 4-dimensional, got {}",
            filter.shape()
        );
        registry_core::kernel_ensure!(
            dy.shape().rank() == 4,
            "Conv2DBackpropInput: out_backprop must be 4-dimensional, got {}",
            dy.shape()
        );
        let input = input_shape(&sizes, f, dy.dims(), filter.dims())?;
        let g = self.params.geometry(&input, filter.dims())?;
        registry_core::kernel_ensure!(
            g.in_depth == g.patch_depth,
            "Conv2DBackpropInput: input depth {} must equal the filter's input depth {}",
            g.in_depth,
            g.patch_depth
        );
        let expected = g.out_shape(f);
        registry_core::kernel_ensure!(
            dy.dims() == expected,
            "Conv2DBackpropInput: Size of out_backprop doesn't match computed: actual = {}, computed = {:?}",
            dy.shape(),
            expected
        );
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

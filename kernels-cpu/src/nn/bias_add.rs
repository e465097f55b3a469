//! `BiasAdd`: adds a per-channel bias.

use std::marker::PhantomData;

use opreg_standard_ops::BiasAdd;
use rayon::prelude::*;
use registry_core::kernel;
use registry_core::kernel::{
    BuildKernel, KernelError, OpKernel, OpKernelConstruction, OpKernelContext,
};
use registry_core::tensor::{Complex64, Complex128, bf16, f16};

use crate::numeric::Element;
use opreg_op_logic::window::DataFormat;

/// Elements below this count are computed on one thread.
const PARALLEL_ELEMENTS: usize = 1 << 15;

/// An element with TensorFlow's addition: wrapping for integers, IEEE for
/// floats (`half`/`bfloat16` added in `f32` and rounded, as Eigen does).
pub(crate) trait BiasElement: Element {
    /// `self + other`.
    fn bias_add(self, other: Self) -> Self;
}

macro_rules! wrapping_add {
    ($($t:ty),*) => {$(
        impl BiasElement for $t {
            #[inline(always)]
            fn bias_add(self, other: Self) -> Self {
                self.wrapping_add(other)
            }
        }
    )*};
}

wrapping_add!(i8, i16, i32, i64, u8, u16, u32, u64);

macro_rules! plain_add {
    ($($t:ty),*) => {$(
        impl BiasElement for $t {
            #[inline(always)]
            fn bias_add(self, other: Self) -> Self {
                self + other
            }
        }
    )*};
}

plain_add!(f32, f64, f16, bf16, Complex64, Complex128);

/// `BiasAdd` on the CPU: `value + bias` along the channel dimension (the
/// last for NHWC, dimension 1 for NCHW), in place when `value`'s buffer is
/// not shared.
#[kernel(op = BiasAdd, device = CPU, T = [realnumbertype, complex64, complex128])]
#[derive(Debug)]
pub struct BiasAddKernel<T> {
    format: DataFormat,
    _t: PhantomData<fn() -> T>,
}

impl<T: BiasElement> BuildKernel for BiasAddKernel<T> {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        Ok(Self {
            format: DataFormat::parse(&ctx.attr::<String>("data_format")?)?,
            _t: PhantomData,
        })
    }
}

impl<T: BiasElement> OpKernel for BiasAddKernel<T> {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        let (value_shape, bias) = {
            let value = ctx.input(0)?;
            (value.shape().clone(), ctx.input(1)?.clone())
        };
        registry_core::kernel_ensure!(
            value_shape.rank() >= 2,
            "Input tensor must be at least 2D: {value_shape}"
        );
        registry_core::kernel_ensure!(
            bias.shape().rank() == 1,
            "Biases must be 1D: {}",
            bias.shape()
        );
        let dims = value_shape.dims();
        let channel_dim = match self.format {
            DataFormat::Nchw => 1,
            DataFormat::Nhwc => dims.len() - 1,
        };
        let channels = dims[channel_dim];
        registry_core::kernel_ensure!(
            bias.dims()[0] == channels,
            "Must provide as many biases as the last dimension of the input tensor: {} vs. {}",
            bias.shape(),
            value_shape
        );
        // Elements sharing one bias value are contiguous runs of `inner`.
        let inner: usize = dims[channel_dim + 1..].iter().product();
        let bias = bias.as_slice::<T>()?;
        if ctx.forward_input(0, 0)? {
            let out = ctx.output_mut(0)?.as_mut_slice::<T>()?;
            add_bias(out, None, bias, inner);
        } else {
            let value = ctx.input(0)?.clone();
            let out = ctx
                .allocate_output_to_overwrite(0, value_shape)?
                .as_mut_slice::<T>()?;
            add_bias(out, Some(value.as_slice::<T>()?), bias, inner);
        }
        Ok(())
    }
}

/// `out[i] = src[i] + bias[(i / inner) % bias.len()]` (`src` = `out` when
/// `None`).
fn add_bias<T: BiasElement>(out: &mut [T], src: Option<&[T]>, bias: &[T], inner: usize) {
    let block = bias.len() * inner;
    if block == 0 || out.is_empty() {
        return;
    }
    let run = |out: &mut [T], src: Option<&[T]>| {
        let out_blocks = out.chunks_mut(block);
        if inner == 1 {
            // Channels last (NHWC, MatMul outputs): each block is one row
            // of channels, added to the bias element-wise (vectorized;
            // chunks of one element per channel are not).
            match src {
                Some(src) => {
                    for (o, s) in out_blocks.zip(src.chunks(block)) {
                        for ((o, &s), &b) in o.iter_mut().zip(s).zip(bias) {
                            *o = s.bias_add(b);
                        }
                    }
                }
                None => {
                    for o in out_blocks {
                        for (o, &b) in o.iter_mut().zip(bias) {
                            *o = o.bias_add(b);
                        }
                    }
                }
            }
            return;
        }
        match src {
            Some(src) => {
                for (o, s) in out_blocks.zip(src.chunks(block)) {
                    for ((o, s), &b) in o.chunks_mut(inner).zip(s.chunks(inner)).zip(bias) {
                        o.iter_mut().zip(s).for_each(|(o, &s)| *o = s.bias_add(b));
                    }
                }
            }
            None => {
                for o in out_blocks {
                    for (o, &b) in o.chunks_mut(inner).zip(bias) {
                        o.iter_mut().for_each(|o| *o = o.bias_add(b));
                    }
                }
            }
        }
    };
    let min_parallel = crate::split::min_parallel_work(PARALLEL_ELEMENTS);
    if out.len() < min_parallel {
        run(out, src);
        return;
    }
    // Whole blocks per task, at least half of that many elements each.
    let task = block * (min_parallel / 2).div_ceil(block);
    match src {
        Some(src) => out
            .par_chunks_mut(task)
            .zip(src.par_chunks(task))
            .for_each(|(o, s)| run(o, Some(s))),
        None => out.par_chunks_mut(task).for_each(|o| run(o, None)),
    }
}

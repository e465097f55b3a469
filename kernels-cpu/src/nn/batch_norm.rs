//! `FusedBatchNormV3` (TF's `FusedBatchNormOpV3` with the CPU functors).

use std::marker::PhantomData;

use opreg_standard_ops::FusedBatchNormV3;
use rayon::prelude::*;
use registry_core::kernel;
use registry_core::kernel::{
    BuildKernel, KernelError, OpKernel, OpKernelConstruction, OpKernelContext,
};
use registry_core::tensor::TensorShape;

use crate::numeric::Float;
use opreg_op_logic::batch_norm::{BatchNormAttrs, Blocks, bessel_adjust};

/// Elements below this count are computed on one thread.
const PARALLEL_ELEMENTS: usize = 1 << 15;

/// `FusedBatchNormV3` on the CPU, `T` in {float, half, bfloat16} with
/// `U = float`; 4-D or 5-D `x` in any of the op's data formats.
///
/// - Inference (`is_training = false`): `y = (x - mean) * (scale /
///   sqrt(variance + epsilon)) + offset`; `batch_mean`/`batch_variance`
///   echo `mean`/`variance`; the reserve spaces are zeros.
/// - Training: the batch moments over every dimension but the channel one
///   (summed in `f64`, then rounded to `f32`); `y` uses the biased
///   variance; `batch_variance` is Bessel-corrected (`n / (n - 1)`) and both
///   moments are blended with `mean`/`variance` by `exponential_avg_factor`
///   when it is not 1; `reserve_space_1`/`_2` hold the batch mean and biased
///   variance (what TF's CPU kernel saves).
/// - `reserve_space_3` is a scalar 0; an empty `x` gives NaN moments.
#[kernel(op = FusedBatchNormV3, device = CPU, T = [float, half, bfloat16], U = [float])]
#[derive(Debug)]
pub struct FusedBatchNormV3Kernel<T> {
    attrs: BatchNormAttrs,
    _t: PhantomData<fn() -> T>,
}

impl<T: Float> BuildKernel for FusedBatchNormV3Kernel<T> {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        Ok(Self {
            attrs: BatchNormAttrs::from_attrs(ctx.attrs())?,
            _t: PhantomData,
        })
    }
}

impl<T: Float> OpKernel for FusedBatchNormV3Kernel<T> {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        let x = ctx.input(0)?.clone();
        let [scale, offset, mean, variance] = [1, 2, 3, 4].map(|i| ctx.input(i).cloned());
        let (scale, offset, mean, variance) = (scale?, offset?, mean?, variance?);
        let blocks = self.attrs.check_inputs(ctx)?;
        let moments_shape = scale.shape().clone();
        for i in 1..5 {
            ctx.allocate_output(i, moments_shape.clone())?;
        }
        ctx.allocate_output(5, TensorShape::scalar())?;
        ctx.allocate_output(0, x.shape().clone())?;
        if x.num_elements() == 0 {
            for i in 1..3 {
                ctx.output_mut(i)?.as_mut_slice::<f32>()?.fill(f32::NAN);
            }
            return Ok(());
        }
        let xs = x.as_slice::<T>()?;
        let (scale, offset) = (scale.as_slice::<f32>()?, offset.as_slice::<f32>()?);
        let (mean, variance) = (mean.as_slice::<f32>()?, variance.as_slice::<f32>()?);
        let (use_mean, use_var) = if self.attrs.is_training {
            let (batch_mean, batch_var) = moments(xs, blocks);
            self.write_training_moments(ctx, &batch_mean, &batch_var, mean, variance, blocks)?;
            (batch_mean, batch_var)
        } else {
            ctx.output_mut(1)?
                .as_mut_slice::<f32>()?
                .copy_from_slice(mean);
            ctx.output_mut(2)?
                .as_mut_slice::<f32>()?
                .copy_from_slice(variance);
            (mean.to_vec(), variance.to_vec())
        };
        // TF: scaling = rsqrt(variance + epsilon) * scale, per channel.
        let factor: Vec<f32> = use_var
            .iter()
            .zip(scale)
            .map(|(&v, &s)| (v + self.attrs.epsilon).sqrt().recip() * s)
            .collect();
        let y = ctx.output_mut(0)?.as_mut_slice::<T>()?;
        normalize(y, xs, blocks, &use_mean, &factor, offset);
        Ok(())
    }
}

impl<T> FusedBatchNormV3Kernel<T> {
    /// Outputs 1..=4 of a training step.
    fn write_training_moments(
        &self,
        ctx: &mut OpKernelContext<'_>,
        batch_mean: &[f32],
        batch_var: &[f32],
        old_mean: &[f32],
        old_var: &[f32],
        blocks: Blocks,
    ) -> Result<(), KernelError> {
        let adjust = bessel_adjust(blocks.outer * blocks.inner);
        let f = self.attrs.exponential_avg_factor;
        let running_mean: Vec<f32> = if f == 1.0 {
            batch_mean.to_vec()
        } else {
            batch_mean
                .iter()
                .zip(old_mean)
                .map(|(&b, &o)| (1.0 - f) * o + f * b)
                .collect()
        };
        let running_var: Vec<f32> = if f == 1.0 {
            batch_var.iter().map(|&v| v * adjust).collect()
        } else {
            batch_var
                .iter()
                .zip(old_var)
                .map(|(&b, &o)| (1.0 - f) * o + (f * adjust) * b)
                .collect()
        };
        ctx.output_mut(1)?
            .as_mut_slice::<f32>()?
            .copy_from_slice(&running_mean);
        ctx.output_mut(2)?
            .as_mut_slice::<f32>()?
            .copy_from_slice(&running_var);
        ctx.output_mut(3)?
            .as_mut_slice::<f32>()?
            .copy_from_slice(batch_mean);
        ctx.output_mut(4)?
            .as_mut_slice::<f32>()?
            .copy_from_slice(batch_var);
        Ok(())
    }
}

/// The per-channel mean and biased variance of `x` (two passes, `f64`
/// sums).
fn moments<T: Float>(x: &[T], b: Blocks) -> (Vec<f32>, Vec<f32>) {
    let inv = 1.0f32 / (b.outer * b.inner) as f32;
    let sums = channel_sums(x, b, |v, _| f64::from(v));
    let mean: Vec<f32> = sums.iter().map(|&s| s as f32 * inv).collect();
    let sq = channel_sums(x, b, |v, c| {
        let d = v - mean[c];
        f64::from(d * d)
    });
    let var: Vec<f32> = sq.iter().map(|&s| s as f32 * inv).collect();
    (mean, var)
}

/// Per-channel sums of `f(x as f32, channel)` in `f64`, split over threads
/// by blocks of `channels * inner` elements.
fn channel_sums<T: Float>(x: &[T], b: Blocks, f: impl Fn(f32, usize) -> f64 + Sync) -> Vec<f64> {
    let block = b.channels * b.inner;
    let add_block = |mut acc: Vec<f64>, chunk: &[T]| {
        if b.inner == 1 {
            for row in chunk.chunks(b.channels) {
                for (ch, (a, &v)) in acc.iter_mut().zip(row).enumerate() {
                    *a += f(v.to_f32(), ch);
                }
            }
        } else {
            for (c, run) in chunk.chunks(b.inner).enumerate() {
                let ch = c % b.channels;
                acc[ch] += run.iter().map(|&v| f(v.to_f32(), ch)).sum::<f64>();
            }
        }
        acc
    };
    let zero = || vec![0.0f64; b.channels];
    if x.len() < PARALLEL_ELEMENTS {
        return x.chunks(block).fold(zero(), add_block);
    }
    let task = block * PARALLEL_ELEMENTS.div_ceil(block);
    x.par_chunks(task)
        .map(|chunk| chunk.chunks(block).fold(zero(), add_block))
        .reduce(zero, |mut a, b| {
            a.iter_mut().zip(b).for_each(|(a, b)| *a += b);
            a
        })
}

/// `y = (x - mean[c]) * factor[c] + offset[c]`, rounded to `T`.
fn normalize<T: Float>(
    y: &mut [T],
    x: &[T],
    b: Blocks,
    mean: &[f32],
    factor: &[f32],
    offset: &[f32],
) {
    let block = b.channels * b.inner;
    let run = |y: &mut [T], x: &[T]| {
        for (yb, xb) in y.chunks_mut(block).zip(x.chunks(block)) {
            if b.inner == 1 {
                let params = mean.iter().zip(factor).zip(offset);
                for ((y, &x), ((&m, &f), &o)) in yb.iter_mut().zip(xb).zip(params) {
                    *y = T::from_f32((x.to_f32() - m) * f + o);
                }
                continue;
            }
            let runs = yb.chunks_mut(b.inner).zip(xb.chunks(b.inner));
            for (((yr, xr), &m), (&f, &o)) in runs.zip(mean).zip(factor.iter().zip(offset)) {
                for (y, &x) in yr.iter_mut().zip(xr) {
                    *y = T::from_f32((x.to_f32() - m) * f + o);
                }
            }
        }
    };
    if y.len() < PARALLEL_ELEMENTS {
        run(y, x);
    } else {
        let task = block * PARALLEL_ELEMENTS.div_ceil(block);
        y.par_chunks_mut(task)
            .zip(x.par_chunks(task))
            .for_each(|(y, x)| run(y, x));
    }
}

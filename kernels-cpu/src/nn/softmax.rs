//! `Softmax` and `LogSoftmax` over the last dimension.

use num_traits::Float as _;
use opreg_standard_ops::{LogSoftmax, Softmax};
use rayon::prelude::*;
use registry_core::kernel;
use registry_core::kernel::{KernelError, OpKernelContext};
use registry_core::tensor::{bf16, f16};

use crate::math::scalar::Transcendental;
use crate::numeric::Element;

/// Elements below this count are computed on one thread.
const PARALLEL_ELEMENTS: usize = 1 << 15;

/// A float type computed in a wider type (`f32` for
/// `half`/`bfloat16`, rounded once at the end).
pub(crate) trait WideFloat: Element {
    /// The computation type.
    type Acc: num_traits::Float + Transcendental + Send + Sync + Default + Copy;
    /// Widens to the computation type.
    fn widen(self) -> Self::Acc;
    /// Rounds back from the computation type.
    fn narrow(v: Self::Acc) -> Self;
    /// A count as the computation type.
    fn widen_count(n: usize) -> Self::Acc {
        <Self::Acc as num_traits::NumCast>::from(n).unwrap_or_else(Self::Acc::infinity)
    }
}

impl WideFloat for f32 {
    type Acc = f32;
    fn widen(self) -> f32 {
        self
    }
    fn narrow(v: f32) -> Self {
        v
    }
}

impl WideFloat for f64 {
    type Acc = f64;
    fn widen(self) -> f64 {
        self
    }
    fn narrow(v: f64) -> Self {
        v
    }
}

impl WideFloat for f16 {
    type Acc = f32;
    fn widen(self) -> f32 {
        self.to_f32()
    }
    fn narrow(v: f32) -> Self {
        f16::from_f32(v)
    }
}

impl WideFloat for bf16 {
    type Acc = f32;
    fn widen(self) -> f32 {
        self.to_f32()
    }
    fn narrow(v: f32) -> Self {
        bf16::from_f32(v)
    }
}

/// `Softmax` on the CPU: for each row of the last dimension,
/// `exp(x - max(x)) * (1 / sum(exp(x - max(x))))`, TensorFlow's formula
/// (numerically stable; a row holding NaN, or +inf, gives NaN).
///
/// `LogSoftmax`: `(x - max(x)) - log(sum(exp(x - max(x))))` per row, as
/// TF's `SoftmaxEigenImpl` with `log = true`.
#[kernel(op = Softmax, device = CPU, T = [half, bfloat16, float, double])]
#[kernel(op = LogSoftmax, device = CPU, T = [half, bfloat16, float, double])]
fn softmax<T: WideFloat>(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    let log = ctx.info().op() == "LogSoftmax";
    let x = ctx.input(0)?.clone();
    registry_core::kernel_ensure!(
        x.shape().rank() >= 1,
        "logits must have >= 1 dimension, got {}",
        x.shape()
    );
    let classes = x.dims().last().copied().unwrap_or(0);
    let out = ctx
        .allocate_output(0, x.shape().clone())?
        .as_mut_slice::<T>()?;
    let x = x.as_slice::<T>()?;
    if classes == 0 || out.is_empty() {
        return Ok(());
    }
    if out.len() < PARALLEL_ELEMENTS {
        rows(out, x, classes, log);
    } else {
        let task = classes * PARALLEL_ELEMENTS.div_ceil(classes);
        out.par_chunks_mut(task)
            .zip(x.par_chunks(task))
            .for_each(|(o, x)| rows(o, x, classes, log));
    }
    Ok(())
}

/// Softmax (log softmax when `log`) of each `classes`-long row of `x` into
/// `out`.
fn rows<T: WideFloat>(out: &mut [T], x: &[T], classes: usize, log: bool) {
    let mut exps: Vec<T::Acc> = vec![T::Acc::default(); classes];
    for (o, x) in out.chunks_exact_mut(classes).zip(x.chunks_exact(classes)) {
        let max = x
            .iter()
            .map(|v| v.widen())
            .fold(T::Acc::neg_infinity(), |m, v| {
                if v > m || v.is_nan() { v } else { m }
            });
        // The exponentials first (a loop that vectorizes), then their sum
        // in order.
        for (e, v) in exps.iter_mut().zip(x) {
            *e = (v.widen() - max).tf_exp();
        }
        let sum = exps.iter().fold(T::Acc::default(), |sum, &e| sum + e);
        if log {
            let log_sum = sum.ln();
            for (o, v) in o.iter_mut().zip(x) {
                *o = T::narrow((v.widen() - max) - log_sum);
            }
        } else {
            let inv = sum.recip();
            for (o, &e) in o.iter_mut().zip(&exps) {
                *o = T::narrow(e * inv);
            }
        }
    }
}

//! `ClipByValue` (`min(max(t, lo), hi)` as Eigen's `t.cwiseMin(hi).cwiseMax(lo)`,
//! bounds scalar or of `t`'s shape; complex numbers clip each part) and
//! `Cumsum` (the running sum along one axis, `exclusive` and `reverse`,
//! integers wrapping), with TF's messages.

use std::marker::PhantomData;

use opreg_standard_ops::{ClipByValue, Cumsum};
use rayon::prelude::*;
use registry_core::kernel;
use registry_core::kernel::{
    BuildKernel, KernelError, OpKernel, OpKernelConstruction, OpKernelContext,
};
use registry_core::tensor::{Complex64, Complex128, bf16, f16};

use crate::numeric::{Element, Number};
use opreg_op_logic::clip_cumsum::{ScanGeometry, check_clip_bounds};

/// An element `ClipByValue` clips: ordered types as Eigen's `mini`/`maxi`
/// (`hi < t ? hi : t`, then `m < lo ? lo : m`: NaN in `t` stays), complex
/// numbers part by part.
pub trait ClipElement: Element {
    /// `max(min(self, hi), lo)`.
    fn clip(self, lo: Self, hi: Self) -> Self;
}

#[inline(always)]
fn clip_ordered<T: PartialOrd>(t: T, lo: T, hi: T) -> T {
    let m = if hi < t { hi } else { t };
    if m < lo { lo } else { m }
}

macro_rules! ordered_clip {
    ($($t:ty),*) => {$(
        impl ClipElement for $t {
            #[inline(always)]
            fn clip(self, lo: Self, hi: Self) -> Self {
                clip_ordered(self, lo, hi)
            }
        }
    )*};
}

ordered_clip!(f32, f64, f16, bf16, i8, i16, i32, i64, u8, u16);

macro_rules! complex_clip {
    ($($c:ident),*) => {$(
        impl ClipElement for $c {
            #[inline(always)]
            fn clip(self, lo: Self, hi: Self) -> Self {
                $c::new(clip_ordered(self.re, lo.re, hi.re), clip_ordered(self.im, lo.im, hi.im))
            }
        }
    )*};
}

complex_clip!(Complex64, Complex128);

/// `ClipByValue` on the CPU, for every type TF's CPU kernel has.
#[kernel(
    op = ClipByValue,
    device = CPU,
    T = [float, double, half, bfloat16, int8, int16, int32, int64, uint8, uint16, complex64,
         complex128]
)]
fn clip_by_value<T: ClipElement>(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    let t = ctx.input(0)?.clone();
    let lo = ctx.input(1)?.clone();
    let hi = ctx.input(2)?.clone();
    check_clip_bounds(t.shape(), lo.shape(), hi.shape())?;
    let out = ctx.allocate_output(0, t.shape().clone())?;
    let (x, lo, hi) = (t.as_slice::<T>()?, lo.as_slice::<T>()?, hi.as_slice::<T>()?);
    let out = out.as_mut_slice::<T>()?;
    let bound = |b: &[T], i: usize| if b.len() == 1 { b[0] } else { b[i] };
    for (i, (o, &v)) in out.iter_mut().zip(x).enumerate() {
        *o = v.clip(bound(lo, i), bound(hi, i));
    }
    Ok(())
}

/// `Cumsum` on the CPU, for every type TF's CPU kernel has; `axis` is a
/// scalar.
#[kernel(
    op = Cumsum,
    device = CPU,
    T = [realnumbertype, complex64, complex128],
    Tidx = [int32, int64]
)]
#[derive(Debug)]
pub struct CumsumKernel<T> {
    exclusive: bool,
    reverse: bool,
    _t: PhantomData<fn() -> T>,
}

impl<T: Number> BuildKernel for CumsumKernel<T> {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        Ok(Self {
            exclusive: ctx.attr("exclusive")?,
            reverse: ctx.attr("reverse")?,
            _t: PhantomData,
        })
    }
}

impl<T: Number> OpKernel for CumsumKernel<T> {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        let x = ctx.input(0)?.clone();
        let ScanGeometry { len: n, inner, .. } = ScanGeometry::new(x.dims(), ctx.input(1)?)?;
        let out = ctx.allocate_output(0, x.shape().clone())?;
        let out = out.as_mut_slice::<T>()?;
        let x = x.as_slice::<T>()?;
        if out.is_empty() {
            return Ok(());
        }
        let (exclusive, reverse) = (self.exclusive, self.reverse);
        let block = n * inner;
        let scan = |(dst, src): (&mut [T], &[T])| {
            let mut acc = vec![T::ZERO; inner];
            for step in 0..n {
                let k = if reverse { n - 1 - step } else { step };
                let row = &src[k * inner..(k + 1) * inner];
                let o = &mut dst[k * inner..(k + 1) * inner];
                for ((o, a), &v) in o.iter_mut().zip(acc.iter_mut()).zip(row) {
                    if exclusive {
                        *o = *a;
                        *a = a.add_wrap(v);
                    } else {
                        *a = a.add_wrap(v);
                        *o = *a;
                    }
                }
            }
        };
        if out.len() >= 1 << 15 {
            out.par_chunks_mut(block)
                .zip(x.par_chunks(block))
                .for_each(scan);
        } else {
            out.chunks_mut(block).zip(x.chunks(block)).for_each(scan);
        }
        Ok(())
    }
}

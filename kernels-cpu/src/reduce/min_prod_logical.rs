//! `Min`, `Prod`, `All` and `Any` (over a set of axes, with `keep_dims`),
//! on the shared reduction engine, with TensorFlow's numerics:
//!
//! - Min: NaN propagates (as `Max`); of equal values (`0` and `-0`) the
//!   later; the minimum of nothing is the highest value (`inf`, `MAX`);
//!   `half`/`bfloat16` compare as `f32` and keep an input's own bits.
//! - Prod: integers wrap; `half`/`bfloat16` multiply in `f32` and round once;
//!   the product of nothing is 1.
//! - All / Any: of `bool`s; of nothing, `true` / `false`.

use std::marker::PhantomData;

use opreg_standard_ops::{All, Any, Min, Prod};
use registry_core::kernel;
use registry_core::kernel::{
    BuildKernel, KernelError, OpKernel, OpKernelConstruction, OpKernelContext,
};
use registry_core::tensor::{Complex64, Complex128, TensorElement, bf16, f16};

use super::engine::Reducer;
use super::sum_mean_max::compute_reduction;
use crate::numeric::Element;

/// An element type Min and Prod support.
pub trait MinProdElement: Element + TensorElement {
    /// The accumulator of Min (the element's bits for `half`/`bfloat16`).
    type MinAcc: Copy + Send + Sync;
    /// The minimum of nothing.
    const HIGHEST: Self::MinAcc;
    /// `min(acc, x)`, NaN-propagating.
    fn min_step(acc: Self::MinAcc, x: Self) -> Self::MinAcc;
    /// `min(a, b)` of two partial minima.
    fn min_merge(a: Self::MinAcc, b: Self::MinAcc) -> Self::MinAcc;
    /// The accumulator as an element.
    fn min_finish(acc: Self::MinAcc) -> Self;
    /// The accumulator of Prod (`f32` for `half`/`bfloat16`).
    type ProdAcc: Copy + Send + Sync;
    /// 1.
    const PROD_ONE: Self::ProdAcc;
    /// `acc * x` (wrapping for integers).
    fn prod_step(acc: Self::ProdAcc, x: Self) -> Self::ProdAcc;
    /// `a * b` of two partial products.
    fn prod_merge(a: Self::ProdAcc, b: Self::ProdAcc) -> Self::ProdAcc;
    /// The accumulator as an element.
    fn prod_finish(acc: Self::ProdAcc) -> Self;
}

macro_rules! int_min_prod {
    ($($t:ty),*) => {$(
        impl MinProdElement for $t {
            type MinAcc = $t;
            const HIGHEST: $t = <$t>::MAX;
            #[inline]
            fn min_step(acc: $t, x: $t) -> $t { acc.min(x) }
            #[inline]
            fn min_merge(a: $t, b: $t) -> $t { a.min(b) }
            #[inline]
            fn min_finish(acc: $t) -> $t { acc }
            type ProdAcc = $t;
            const PROD_ONE: $t = 1;
            #[inline]
            fn prod_step(acc: $t, x: $t) -> $t { acc.wrapping_mul(x) }
            #[inline]
            fn prod_merge(a: $t, b: $t) -> $t { a.wrapping_mul(b) }
            #[inline]
            fn prod_finish(acc: $t) -> $t { acc }
        }
    )*};
}

int_min_prod!(i8, i16, i32, i64, u8, u16, u32, u64);

/// NaN-propagating minimum: a NaN `acc` stays, a NaN `x` wins.
macro_rules! nan_min {
    ($acc:expr, $x:expr) => {{
        let (acc, x) = ($acc, $x);
        #[allow(clippy::eq_op)]
        let acc_nan = acc != acc;
        if acc_nan || acc < x { acc } else { x }
    }};
}

macro_rules! float_min_prod {
    ($($t:ty),*) => {$(
        impl MinProdElement for $t {
            type MinAcc = $t;
            const HIGHEST: $t = <$t>::INFINITY;
            #[inline]
            fn min_step(acc: $t, x: $t) -> $t { nan_min!(acc, x) }
            #[inline]
            fn min_merge(a: $t, b: $t) -> $t { nan_min!(a, b) }
            #[inline]
            fn min_finish(acc: $t) -> $t { acc }
            type ProdAcc = $t;
            const PROD_ONE: $t = 1.0;
            #[inline]
            fn prod_step(acc: $t, x: $t) -> $t { acc * x }
            #[inline]
            fn prod_merge(a: $t, b: $t) -> $t { a * b }
            #[inline]
            fn prod_finish(acc: $t) -> $t { acc }
        }
    )*};
}

float_min_prod!(f32, f64);

macro_rules! half_min_prod {
    ($($t:ident),*) => {$(
        impl MinProdElement for $t {
            type MinAcc = u16;
            const HIGHEST: u16 = $t::INFINITY.to_bits();
            #[inline]
            fn min_step(acc: u16, x: $t) -> u16 {
                let a = $t::from_bits(acc).to_f32();
                let b = x.to_f32();
                #[allow(clippy::eq_op)]
                let acc_nan = a != a;
                if acc_nan || a < b { acc } else { x.to_bits() }
            }
            #[inline]
            fn min_merge(a: u16, b: u16) -> u16 {
                Self::min_step(a, $t::from_bits(b))
            }
            #[inline]
            fn min_finish(acc: u16) -> $t { $t::from_bits(acc) }
            type ProdAcc = f32;
            const PROD_ONE: f32 = 1.0;
            #[inline]
            fn prod_step(acc: f32, x: $t) -> f32 { acc * x.to_f32() }
            #[inline]
            fn prod_merge(a: f32, b: f32) -> f32 { a * b }
            #[inline]
            fn prod_finish(acc: f32) -> $t { $t::from_f32(acc) }
        }
    )*};
}

half_min_prod!(f16, bf16);

/// Complex numbers: Prod only (TF has no complex Min; the Min methods are
/// never used).
macro_rules! complex_prod {
    ($($c:ident),*) => {$(
        impl MinProdElement for $c {
            type MinAcc = $c;
            const HIGHEST: $c = $c::new(0.0, 0.0);
            fn min_step(acc: $c, _x: $c) -> $c { acc }
            fn min_merge(a: $c, _b: $c) -> $c { a }
            fn min_finish(acc: $c) -> $c { acc }
            type ProdAcc = $c;
            const PROD_ONE: $c = $c::new(1.0, 0.0);
            #[inline]
            fn prod_step(acc: $c, x: $c) -> $c { acc * x }
            #[inline]
            fn prod_merge(a: $c, b: $c) -> $c { a * b }
            #[inline]
            fn prod_finish(acc: $c) -> $c { acc }
        }
    )*};
}

complex_prod!(Complex64, Complex128);

/// Min of `T`.
#[derive(Debug)]
struct MinReducer<T>(PhantomData<fn() -> T>);
/// Prod of `T`.
#[derive(Debug)]
struct ProdReducer<T>(PhantomData<fn() -> T>);

macro_rules! copy_marker {
    ($($name:ident),*) => {$(
        impl<T> Clone for $name<T> {
            fn clone(&self) -> Self {
                *self
            }
        }
        impl<T> Copy for $name<T> {}
    )*};
}
copy_marker!(MinReducer, ProdReducer);

impl<T: MinProdElement> Reducer for MinReducer<T> {
    type In = T;
    type Acc = T::MinAcc;
    type Out = T;
    fn init(self) -> T::MinAcc {
        T::HIGHEST
    }
    #[inline]
    fn step(self, acc: T::MinAcc, x: T) -> T::MinAcc {
        T::min_step(acc, x)
    }
    fn merge(self, a: T::MinAcc, b: T::MinAcc) -> T::MinAcc {
        T::min_merge(a, b)
    }
    fn finish(self, acc: T::MinAcc, _count: usize) -> T {
        T::min_finish(acc)
    }
}

impl<T: MinProdElement> Reducer for ProdReducer<T> {
    type In = T;
    type Acc = T::ProdAcc;
    type Out = T;
    fn init(self) -> T::ProdAcc {
        T::PROD_ONE
    }
    #[inline]
    fn step(self, acc: T::ProdAcc, x: T) -> T::ProdAcc {
        T::prod_step(acc, x)
    }
    fn merge(self, a: T::ProdAcc, b: T::ProdAcc) -> T::ProdAcc {
        T::prod_merge(a, b)
    }
    fn finish(self, acc: T::ProdAcc, _count: usize) -> T {
        T::prod_finish(acc)
    }
}

/// All (`AND = true`) or Any of `bool`s.
#[derive(Debug, Clone, Copy)]
struct LogicalReducer<const AND: bool>;

impl<const AND: bool> Reducer for LogicalReducer<AND> {
    type In = bool;
    type Acc = bool;
    type Out = bool;
    fn init(self) -> bool {
        AND
    }
    #[inline]
    fn step(self, acc: bool, x: bool) -> bool {
        if AND { acc & x } else { acc | x }
    }
    fn merge(self, a: bool, b: bool) -> bool {
        self.step(a, b)
    }
    fn finish(self, acc: bool, _count: usize) -> bool {
        acc
    }
}

/// `Min` or `Prod` (by the node's op) of every type TF's CPU kernel has.
#[kernel(
    op = Min,
    device = CPU,
    T = realnumbertype,
    Tidx = [int32, int64]
)]
#[kernel(
    op = Prod,
    device = CPU,
    T = [realnumbertype, complex64, complex128],
    Tidx = [int32, int64]
)]
#[derive(Debug)]
pub struct MinProdKernel<T> {
    keep_dims: bool,
    prod: bool,
    _t: PhantomData<fn() -> T>,
}

impl<T: MinProdElement> BuildKernel for MinProdKernel<T> {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        Ok(Self {
            keep_dims: ctx.attr("keep_dims")?,
            prod: ctx.op() == "Prod",
            _t: PhantomData,
        })
    }
}

impl<T: MinProdElement> OpKernel for MinProdKernel<T> {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        if self.prod {
            compute_reduction(ctx, self.keep_dims, ProdReducer::<T>(PhantomData))
        } else {
            compute_reduction(ctx, self.keep_dims, MinReducer::<T>(PhantomData))
        }
    }
}

/// `All` or `Any` (by the node's op).
#[kernel(op = All, device = CPU, Tidx = [int32, int64], host_memory = ["reduction_indices"])]
#[kernel(op = Any, device = CPU, Tidx = [int32, int64], host_memory = ["reduction_indices"])]
#[derive(Debug)]
pub struct AllAnyKernel {
    keep_dims: bool,
    all: bool,
}

impl BuildKernel for AllAnyKernel {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        Ok(Self {
            keep_dims: ctx.attr("keep_dims")?,
            all: ctx.op() == "All",
        })
    }
}

impl OpKernel for AllAnyKernel {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        if self.all {
            compute_reduction(ctx, self.keep_dims, LogicalReducer::<true>)
        } else {
            compute_reduction(ctx, self.keep_dims, LogicalReducer::<false>)
        }
    }
}

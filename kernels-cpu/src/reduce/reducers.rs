//! The accumulators of Sum, Mean and Max, with TensorFlow's numerics:
//!
//! - Sum: integers wrap (two's complement); `half`/`bfloat16` accumulate in
//!   `f32` and round once at the end; complex sums both parts.
//! - Mean: the sum divided by the count. `int8`/`int16`/`int32` accumulate in
//!   `i64` and unsigned ones in `u64` (TF's casting specialization), then
//!   divide with integer division (truncating) and narrow; `int64`/`uint64`
//!   wrap in their own type. The mean of nothing is NaN for floating-point
//!   types and 0 for integers and complex (TF's `Identity<MeanReducer>`).
//! - Max: the maximum; NaN propagates (TF's own result with NaN depends on
//!   Eigen's evaluation order, so we follow its `Maximum` op, which
//!   propagates NaN). The maximum of nothing is the lowest value: `-inf` for
//!   floating-point types, `MIN` for integers.

use std::marker::PhantomData;

use half::slice::HalfFloatSliceExt;
use registry_core::tensor::{Complex64, Complex128, TensorElement, bf16, f16};

use super::engine::{Reducer, reduce_slice};
use crate::numeric::Element;

/// `half`/`bfloat16` inputs are widened to `f32` this many at a time (with
/// the `half` crate's SIMD conversion) before they are reduced.
const WIDEN_BLOCK: usize = 256;

/// Reduces a run of `half`/`bfloat16` with an `f32` reducer.
#[inline]
fn widened_run<H, R>(r: R, xs: &[H]) -> R::Acc
where
    [H]: HalfFloatSliceExt,
    R: Reducer<In = f32>,
{
    let mut buf = [0.0f32; WIDEN_BLOCK];
    let mut acc = r.init();
    for block in xs.chunks(WIDEN_BLOCK) {
        let wide = &mut buf[..block.len()];
        block.convert_to_f32_slice(wide);
        acc = r.merge(acc, reduce_slice(r, wide));
    }
    acc
}

/// Accumulates a row of `half`/`bfloat16` with an `f32` reducer.
#[inline]
fn widened_row<H, R>(r: R, acc: &mut [R::Acc], row: &[H])
where
    [H]: HalfFloatSliceExt,
    R: Reducer<In = f32>,
{
    let mut buf = [0.0f32; WIDEN_BLOCK];
    for (a, block) in acc.chunks_mut(WIDEN_BLOCK).zip(row.chunks(WIDEN_BLOCK)) {
        let wide = &mut buf[..block.len()];
        block.convert_to_f32_slice(wide);
        r.accumulate_row(a, wide);
    }
}

/// An element type Sum and Mean support.
pub trait SumElement: Element + TensorElement {
    /// The accumulator of a sum.
    type SumAcc: Copy + Send + Sync;
    /// The accumulator of a mean.
    type MeanAcc: Copy + Send + Sync;
    /// Zero.
    const SUM_ZERO: Self::SumAcc;
    /// Zero.
    const MEAN_ZERO: Self::MeanAcc;
    /// `acc + x` in the sum's accumulator.
    fn sum_add(acc: Self::SumAcc, x: Self) -> Self::SumAcc;
    /// Adds two partial sums.
    fn sum_merge(a: Self::SumAcc, b: Self::SumAcc) -> Self::SumAcc;
    /// The sum as an element.
    fn sum_finish(acc: Self::SumAcc) -> Self;
    /// `acc + x` in the mean's accumulator.
    fn mean_add(acc: Self::MeanAcc, x: Self) -> Self::MeanAcc;
    /// Adds two partial sums.
    fn mean_merge(a: Self::MeanAcc, b: Self::MeanAcc) -> Self::MeanAcc;
    /// The sum divided by `count` (`count` is at least 1).
    fn mean_finish(acc: Self::MeanAcc, count: usize) -> Self;
    /// The mean of no elements.
    const EMPTY_MEAN: Self;
    /// The sum of a contiguous run.
    #[inline]
    fn sum_run(xs: &[Self]) -> Self::SumAcc {
        reduce_slice(SumReducer::<Self>::new(), xs)
    }
    /// Adds `row` to `acc` element-wise.
    #[inline]
    fn sum_row(acc: &mut [Self::SumAcc], row: &[Self]) {
        for (a, &v) in acc.iter_mut().zip(row) {
            *a = Self::sum_add(*a, v);
        }
    }
    /// The mean's sum of a contiguous run.
    #[inline]
    fn mean_run(xs: &[Self]) -> Self::MeanAcc {
        reduce_slice(MeanReducer::<Self>::new(), xs)
    }
    /// Adds `row` to `acc` element-wise (mean accumulator).
    #[inline]
    fn mean_row(acc: &mut [Self::MeanAcc], row: &[Self]) {
        for (a, &v) in acc.iter_mut().zip(row) {
            *a = Self::mean_add(*a, v);
        }
    }
}

/// Integers: wrapping sums; the mean in a wider accumulator `$wide`.
macro_rules! int_sum {
    ($($t:ty => $wide:ty),* $(,)?) => {$(
        impl SumElement for $t {
            type SumAcc = $t;
            type MeanAcc = $wide;
            const SUM_ZERO: $t = 0;
            const MEAN_ZERO: $wide = 0;
            #[inline]
            fn sum_add(acc: $t, x: $t) -> $t {
                acc.wrapping_add(x)
            }
            #[inline]
            fn sum_merge(a: $t, b: $t) -> $t {
                a.wrapping_add(b)
            }
            #[inline]
            fn sum_finish(acc: $t) -> $t {
                acc
            }
            #[inline]
            fn mean_add(acc: $wide, x: $t) -> $wide {
                acc.wrapping_add(<$wide>::from(x))
            }
            #[inline]
            fn mean_merge(a: $wide, b: $wide) -> $wide {
                a.wrapping_add(b)
            }
            #[inline]
            fn mean_finish(acc: $wide, count: usize) -> $t {
                // Tensor sizes fit in i64, so `count` fits in `$wide`;
                // `count >= 1`, so the division cannot overflow.
                let count = <$wide>::try_from(count).unwrap_or(<$wide>::MAX);
                // Narrowing truncates, as TF's `static_cast` does.
                acc.checked_div(count).unwrap_or(0) as $t
            }
            const EMPTY_MEAN: $t = 0;
        }
    )*};
}

int_sum!(
    i8 => i64, i16 => i64, i32 => i64, i64 => i64,
    u8 => u64, u16 => u64, u32 => u64, u64 => u64,
);

/// `f32`/`f64`: accumulate in the type itself.
macro_rules! float_sum {
    ($($t:ty),*) => {$(
        impl SumElement for $t {
            type SumAcc = $t;
            type MeanAcc = $t;
            const SUM_ZERO: $t = 0.0;
            const MEAN_ZERO: $t = 0.0;
            #[inline]
            fn sum_add(acc: $t, x: $t) -> $t {
                acc + x
            }
            #[inline]
            fn sum_merge(a: $t, b: $t) -> $t {
                a + b
            }
            #[inline]
            fn sum_finish(acc: $t) -> $t {
                acc
            }
            #[inline]
            fn mean_add(acc: $t, x: $t) -> $t {
                acc + x
            }
            #[inline]
            fn mean_merge(a: $t, b: $t) -> $t {
                a + b
            }
            #[inline]
            fn mean_finish(acc: $t, count: usize) -> $t {
                acc / count as $t
            }
            const EMPTY_MEAN: $t = <$t>::NAN;
        }
    )*};
}

float_sum!(f32, f64);

/// `half`/`bfloat16`: accumulate in `f32`, round once.
macro_rules! half_sum {
    ($($t:ident),*) => {$(
        impl SumElement for $t {
            type SumAcc = f32;
            type MeanAcc = f32;
            const SUM_ZERO: f32 = 0.0;
            const MEAN_ZERO: f32 = 0.0;
            #[inline]
            fn sum_add(acc: f32, x: $t) -> f32 {
                acc + x.to_f32()
            }
            #[inline]
            fn sum_merge(a: f32, b: f32) -> f32 {
                a + b
            }
            #[inline]
            fn sum_finish(acc: f32) -> $t {
                $t::from_f32(acc)
            }
            #[inline]
            fn mean_add(acc: f32, x: $t) -> f32 {
                acc + x.to_f32()
            }
            #[inline]
            fn mean_merge(a: f32, b: f32) -> f32 {
                a + b
            }
            #[inline]
            fn mean_finish(acc: f32, count: usize) -> $t {
                // TF divides the sum as a `$t` (so a sum past the type's
                // range is infinite before the division).
                $t::from_f32($t::from_f32(acc).to_f32() / count as f32)
            }
            const EMPTY_MEAN: $t = $t::NAN;
            #[inline]
            fn sum_run(xs: &[$t]) -> f32 {
                widened_run(SumReducer::<f32>::new(), xs)
            }
            #[inline]
            fn sum_row(acc: &mut [f32], row: &[$t]) {
                widened_row(SumReducer::<f32>::new(), acc, row)
            }
            #[inline]
            fn mean_run(xs: &[$t]) -> f32 {
                widened_run(MeanReducer::<f32>::new(), xs)
            }
            #[inline]
            fn mean_row(acc: &mut [f32], row: &[$t]) {
                widened_row(MeanReducer::<f32>::new(), acc, row)
            }
        }
    )*};
}

half_sum!(f16, bf16);

/// Complex: sum both parts; the mean divides by `count + 0i`.
macro_rules! complex_sum {
    ($($t:ident => $f:ty),*) => {$(
        impl SumElement for $t {
            type SumAcc = $t;
            type MeanAcc = $t;
            const SUM_ZERO: $t = $t::new(0.0, 0.0);
            const MEAN_ZERO: $t = $t::new(0.0, 0.0);
            #[inline]
            fn sum_add(acc: $t, x: $t) -> $t {
                $t::new(acc.re + x.re, acc.im + x.im)
            }
            #[inline]
            fn sum_merge(a: $t, b: $t) -> $t {
                Self::sum_add(a, b)
            }
            #[inline]
            fn sum_finish(acc: $t) -> $t {
                acc
            }
            #[inline]
            fn mean_add(acc: $t, x: $t) -> $t {
                Self::sum_add(acc, x)
            }
            #[inline]
            fn mean_merge(a: $t, b: $t) -> $t {
                Self::sum_add(a, b)
            }
            #[inline]
            fn mean_finish(acc: $t, count: usize) -> $t {
                acc / $t::new(count as $f, 0.0)
            }
            const EMPTY_MEAN: $t = $t::new(0.0, 0.0);
        }
    )*};
}

complex_sum!(Complex64 => f32, Complex128 => f64);

/// An element type Max supports.
pub trait MaxElement: Element + TensorElement {
    /// The accumulator (`f32` for `half`/`bfloat16`).
    type Acc: Copy + Send + Sync;
    /// The maximum of nothing: `-inf` or `MIN`.
    const LOWEST: Self::Acc;
    /// `max(acc, x)`, NaN-propagating.
    fn max_step(acc: Self::Acc, x: Self) -> Self::Acc;
    /// `max(a, b)`, NaN-propagating.
    fn max_merge(a: Self::Acc, b: Self::Acc) -> Self::Acc;
    /// The accumulator as an element.
    fn max_finish(acc: Self::Acc) -> Self;
    /// The maximum of a contiguous run.
    #[inline]
    fn max_run(xs: &[Self]) -> Self::Acc {
        reduce_slice(MaxReducer::<Self>::new(), xs)
    }
    /// `acc = max(acc, row)` element-wise.
    #[inline]
    fn max_row(acc: &mut [Self::Acc], row: &[Self]) {
        for (a, &v) in acc.iter_mut().zip(row) {
            *a = Self::max_step(*a, v);
        }
    }
}

macro_rules! int_max {
    ($($t:ty),*) => {$(
        impl MaxElement for $t {
            type Acc = $t;
            const LOWEST: $t = <$t>::MIN;
            #[inline]
            fn max_step(acc: $t, x: $t) -> $t {
                acc.max(x)
            }
            #[inline]
            fn max_merge(a: $t, b: $t) -> $t {
                a.max(b)
            }
            #[inline]
            fn max_finish(acc: $t) -> $t {
                acc
            }
        }
    )*};
}

int_max!(i8, i16, i32, i64, u8, u16, u32, u64);

/// NaN-propagating maximum: a NaN `x` wins, a NaN `acc` stays.
macro_rules! nan_max {
    ($acc:expr, $x:expr) => {{
        let (acc, x) = ($acc, $x);
        #[allow(clippy::eq_op)]
        let acc_nan = acc != acc;
        // Eigen's order: of two equal values (`0` and `-0`) the later.
        if acc_nan || acc > x { acc } else { x }
    }};
}

macro_rules! float_max {
    ($($t:ty),*) => {$(
        impl MaxElement for $t {
            type Acc = $t;
            const LOWEST: $t = <$t>::NEG_INFINITY;
            #[inline]
            fn max_step(acc: $t, x: $t) -> $t {
                nan_max!(acc, x)
            }
            #[inline]
            fn max_merge(a: $t, b: $t) -> $t {
                nan_max!(a, b)
            }
            #[inline]
            fn max_finish(acc: $t) -> $t {
                acc
            }
        }
    )*};
}

float_max!(f32, f64);

macro_rules! half_max {
    ($($t:ident),*) => {$(
        /// Compared as `f32`, kept as the element's own bits: TF's maximum
        /// of `half`/`bfloat16` is one of the inputs, bit for bit (a
        /// `bfloat16` denormal too, where `f32` arithmetic would flush it).
        impl MaxElement for $t {
            type Acc = u16;
            const LOWEST: u16 = $t::NEG_INFINITY.to_bits();
            #[inline]
            fn max_step(acc: u16, x: $t) -> u16 {
                let a = $t::from_bits(acc).to_f32();
                let b = x.to_f32();
                #[allow(clippy::eq_op)]
                let acc_nan = a != a;
                // Eigen's order: of two equal values (`0` and `-0`) the later.
                if acc_nan || a > b { acc } else { x.to_bits() }
            }
            #[inline]
            fn max_merge(a: u16, b: u16) -> u16 {
                Self::max_step(a, $t::from_bits(b))
            }
            #[inline]
            fn max_finish(acc: u16) -> $t {
                $t::from_bits(acc)
            }
        }
    )*};
}

half_max!(f16, bf16);

/// Sum of `T`.
#[derive(Debug)]
pub(crate) struct SumReducer<T>(PhantomData<fn() -> T>);

/// Mean of `T`.
#[derive(Debug)]
pub(crate) struct MeanReducer<T>(PhantomData<fn() -> T>);

/// Max of `T`.
#[derive(Debug)]
pub(crate) struct MaxReducer<T>(PhantomData<fn() -> T>);

macro_rules! marker_impls {
    ($($name:ident),*) => {$(
        impl<T> $name<T> {
            /// The reducer.
            pub(crate) fn new() -> Self {
                Self(PhantomData)
            }
        }
        impl<T> Clone for $name<T> {
            fn clone(&self) -> Self {
                *self
            }
        }
        impl<T> Copy for $name<T> {}
    )*};
}

marker_impls!(SumReducer, MeanReducer, MaxReducer);

impl<T: SumElement> Reducer for SumReducer<T> {
    type In = T;
    type Acc = T::SumAcc;
    type Out = T;
    #[inline]
    fn init(self) -> T::SumAcc {
        T::SUM_ZERO
    }
    #[inline]
    fn step(self, acc: T::SumAcc, x: T) -> T::SumAcc {
        T::sum_add(acc, x)
    }
    #[inline]
    fn merge(self, a: T::SumAcc, b: T::SumAcc) -> T::SumAcc {
        T::sum_merge(a, b)
    }
    #[inline]
    fn finish(self, acc: T::SumAcc, _count: usize) -> T {
        T::sum_finish(acc)
    }
    #[inline]
    fn reduce_run(self, xs: &[T]) -> T::SumAcc {
        T::sum_run(xs)
    }
    #[inline]
    fn accumulate_row(self, acc: &mut [T::SumAcc], row: &[T]) {
        T::sum_row(acc, row)
    }
}

impl<T: SumElement> Reducer for MeanReducer<T> {
    type In = T;
    type Acc = T::MeanAcc;
    type Out = T;
    #[inline]
    fn init(self) -> T::MeanAcc {
        T::MEAN_ZERO
    }
    #[inline]
    fn step(self, acc: T::MeanAcc, x: T) -> T::MeanAcc {
        T::mean_add(acc, x)
    }
    #[inline]
    fn merge(self, a: T::MeanAcc, b: T::MeanAcc) -> T::MeanAcc {
        T::mean_merge(a, b)
    }
    #[inline]
    fn finish(self, acc: T::MeanAcc, count: usize) -> T {
        if count == 0 {
            T::EMPTY_MEAN
        } else {
            T::mean_finish(acc, count)
        }
    }
    #[inline]
    fn reduce_run(self, xs: &[T]) -> T::MeanAcc {
        T::mean_run(xs)
    }
    #[inline]
    fn accumulate_row(self, acc: &mut [T::MeanAcc], row: &[T]) {
        T::mean_row(acc, row)
    }
}

impl<T: MaxElement> Reducer for MaxReducer<T> {
    type In = T;
    type Acc = T::Acc;
    type Out = T;
    #[inline]
    fn init(self) -> T::Acc {
        T::LOWEST
    }
    #[inline]
    fn step(self, acc: T::Acc, x: T) -> T::Acc {
        T::max_step(acc, x)
    }
    #[inline]
    fn merge(self, a: T::Acc, b: T::Acc) -> T::Acc {
        T::max_merge(a, b)
    }
    #[inline]
    fn finish(self, acc: T::Acc, _count: usize) -> T {
        T::max_finish(acc)
    }
    #[inline]
    fn reduce_run(self, xs: &[T]) -> T::Acc {
        T::max_run(xs)
    }
    #[inline]
    fn accumulate_row(self, acc: &mut [T::Acc], row: &[T]) {
        T::max_row(acc, row)
    }
}

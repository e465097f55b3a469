//! Element-type traits the kernels are generic over: every tensor element
//! ([`Element`]), numbers with arithmetic ([`Number`], complex included),
//! ordered real numbers ([`Real`]) and floating-point types ([`Float`],
//! `half` and `bfloat16` included).
//!
//! Integer arithmetic in TensorFlow wraps (two's complement), while Rust's
//! `+ - *` panic on overflow in debug builds: generic kernels use
//! [`Number::add_wrap`], [`Number::sub_wrap`] and [`Number::mul_wrap`],
//! which wrap for integers and are the plain IEEE (or complex) operations
//! for the other types.
//!
//! ```
//! use kernels_cpu::numeric::Number;
//! assert_eq!(i8::MAX.add_wrap(1), i8::MIN);
//! assert_eq!(0u8.sub_wrap(1), 255);
//! assert_eq!(1.5f32.mul_wrap(2.0), 3.0);
//! ```

use std::fmt::Debug;
use std::ops::{Add, Div, Mul, Neg, Sub};

use registry_core::tensor::{Complex64, Complex128, TensorElement, bf16, f16};

/// Any fixed-size tensor element (numbers, `bool`, complex).
pub trait Element: TensorElement + Copy + Default + Debug + Send + Sync + 'static {}

impl<T: TensorElement + Copy + Default + Debug + Send + Sync + 'static> Element for T {}

/// A number with `+ - * /` (real or complex).
pub trait Number:
    Element
    + Denormal
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
{
    /// Zero.
    const ZERO: Self;
    /// One.
    const ONE: Self;
    /// `self + rhs`, wrapping around for integers (TensorFlow's semantics).
    fn add_wrap(self, rhs: Self) -> Self;
    /// `self - rhs`, wrapping around for integers.
    fn sub_wrap(self, rhs: Self) -> Self;
    /// `self * rhs`, wrapping around for integers.
    fn mul_wrap(self, rhs: Self) -> Self;
}

/// The arithmetic of a type whose `+ - *` never overflow-panic (floats,
/// complex): the wrapping forms are the plain operators.
macro_rules! plain_arith {
    () => {
        #[inline(always)]
        fn add_wrap(self, rhs: Self) -> Self {
            self + rhs
        }
        #[inline(always)]
        fn sub_wrap(self, rhs: Self) -> Self {
            self - rhs
        }
        #[inline(always)]
        fn mul_wrap(self, rhs: Self) -> Self {
            self * rhs
        }
    };
}

/// A real (ordered) number: integers and floating-point types.
pub trait Real: Number + PartialOrd {
    /// The smallest value (negative infinity for floats).
    const LOWEST: Self;
    /// The largest value (infinity for floats).
    const HIGHEST: Self;
}

/// A floating-point type: `f32`, `f64`, `f16`, `bf16`.
pub trait Float: Real + Neg<Output = Self> + num_traits::Float {
    /// Widens to `f32` (exact for `f16`/`bf16`/`f32`).
    fn to_f32(self) -> f32;
    /// Rounds an `f32` to this type (round to nearest even).
    fn from_f32(v: f32) -> Self;
    /// Widens to `f64`.
    fn to_f64(self) -> f64;
    /// Rounds an `f64` to this type.
    fn from_f64(v: f64) -> Self;
}

macro_rules! int_number {
    ($($t:ty),*) => {$(
        impl Number for $t {
            const ZERO: Self = 0;
            const ONE: Self = 1;
            #[inline(always)]
            fn add_wrap(self, rhs: Self) -> Self {
                self.wrapping_add(rhs)
            }
            #[inline(always)]
            fn sub_wrap(self, rhs: Self) -> Self {
                self.wrapping_sub(rhs)
            }
            #[inline(always)]
            fn mul_wrap(self, rhs: Self) -> Self {
                self.wrapping_mul(rhs)
            }
        }
        impl Real for $t {
            const LOWEST: Self = <$t>::MIN;
            const HIGHEST: Self = <$t>::MAX;
        }
    )*};
}

int_number!(i8, i16, i32, i64, u8, u16, u32, u64);

impl Number for f32 {
    const ZERO: Self = 0.0;
    const ONE: Self = 1.0;
    plain_arith!();
}
impl Real for f32 {
    const LOWEST: Self = f32::NEG_INFINITY;
    const HIGHEST: Self = f32::INFINITY;
}
impl Float for f32 {
    #[inline]
    fn to_f32(self) -> f32 {
        self
    }
    #[inline]
    fn from_f32(v: f32) -> Self {
        v
    }
    #[inline]
    fn to_f64(self) -> f64 {
        f64::from(self)
    }
    #[inline]
    fn from_f64(v: f64) -> Self {
        v as f32
    }
}

impl Number for f64 {
    const ZERO: Self = 0.0;
    const ONE: Self = 1.0;
    plain_arith!();
}
impl Real for f64 {
    const LOWEST: Self = f64::NEG_INFINITY;
    const HIGHEST: Self = f64::INFINITY;
}
impl Float for f64 {
    #[inline]
    fn to_f32(self) -> f32 {
        self as f32
    }
    #[inline]
    fn from_f32(v: f32) -> Self {
        f64::from(v)
    }
    #[inline]
    fn to_f64(self) -> f64 {
        self
    }
    #[inline]
    fn from_f64(v: f64) -> Self {
        v
    }
}

macro_rules! half_float {
    ($($t:ident),*) => {$(
        impl Number for $t {
            const ZERO: Self = $t::ZERO;
            const ONE: Self = $t::ONE;
            plain_arith!();
        }
        impl Real for $t {
            const LOWEST: Self = $t::NEG_INFINITY;
            const HIGHEST: Self = $t::INFINITY;
        }
        impl Float for $t {
            #[inline]
            fn to_f32(self) -> f32 {
                $t::to_f32(self)
            }
            #[inline]
            fn from_f32(v: f32) -> Self {
                $t::from_f32(v)
            }
            #[inline]
            fn to_f64(self) -> f64 {
                $t::to_f64(self)
            }
            #[inline]
            fn from_f64(v: f64) -> Self {
                $t::from_f64(v)
            }
        }
    )*};
}

half_float!(f16, bf16);

impl Number for Complex64 {
    const ZERO: Self = Complex64::new(0.0, 0.0);
    const ONE: Self = Complex64::new(1.0, 0.0);
    plain_arith!();
}

impl Number for Complex128 {
    const ZERO: Self = Complex128::new(0.0, 0.0);
    const ONE: Self = Complex128::new(1.0, 0.0);
    plain_arith!();
}

/// Denormal flushing as TensorFlow's CPU kernels see it: with the thread in
/// [`DenormalMode::FlushToZero`](registry_core::denormal::DenormalMode)
/// (TF's default), the processor flushes the denormals its float
/// instructions read and write, but the C library's functions (`log`,
/// `fmod`, `floor`...) and `bfloat16`'s comparisons work on the bits, so
/// kernels flush those values themselves with [`flushed`](Self::flushed).
pub trait Denormal: Copy {
    /// True when the processor's switches act on this type's own arithmetic
    /// (`float` and `double`): a sum, product or quotient is already
    /// flushed, and so is whatever a comparison then selects from such
    /// values and constants.
    const ARITHMETIC_FLUSHES: bool = false;

    /// A denormal becomes a zero of its sign; other values are unchanged.
    /// `half` is unchanged (TF computes `half` in `float`, where its
    /// denormals are normal numbers), and so are integers and `bool`.
    #[inline(always)]
    fn flushed(self) -> Self {
        self
    }
}

impl Denormal for f32 {
    const ARITHMETIC_FLUSHES: bool = true;

    #[inline(always)]
    fn flushed(self) -> Self {
        // A compare and a select (zeros map to themselves, NaN compares
        // false), which vectorizes; `is_subnormal`'s classification does
        // not, and made the flushing kernels 4 to 7 times slower.
        if self.abs() < f32::MIN_POSITIVE {
            0.0f32.copysign(self)
        } else {
            self
        }
    }
}

impl Denormal for f64 {
    const ARITHMETIC_FLUSHES: bool = true;

    #[inline(always)]
    fn flushed(self) -> Self {
        // A compare and a select (zeros map to themselves, NaN compares
        // false), which vectorizes; `is_subnormal`'s classification does
        // not, and made the flushing kernels 4 to 7 times slower.
        if self.abs() < f64::MIN_POSITIVE {
            0.0f64.copysign(self)
        } else {
            self
        }
    }
}

impl Denormal for bf16 {
    /// `bfloat16` widens to `float` bit for bit, so its denormals are
    /// `float` denormals.
    #[inline(always)]
    fn flushed(self) -> Self {
        let bits = self.to_bits();
        if bits & 0x7f80 == 0 && bits & 0x007f != 0 {
            bf16::from_bits(bits & 0x8000)
        } else {
            self
        }
    }
}

macro_rules! keeps_denormals {
    ($($t:ty),*) => {$(
        impl Denormal for $t {}
    )*};
}

keeps_denormals!(
    i8, i16, i32, i64, u8, u16, u32, u64, bool, f16, Complex64, Complex128
);

/// True when the current thread flushes denormals (read once per kernel
/// call: the mode is per thread, set by the runtime).
#[inline]
pub fn flushing_denormals() -> bool {
    registry_core::denormal::DenormalMode::current()
        == registry_core::denormal::DenormalMode::FlushToZero
}

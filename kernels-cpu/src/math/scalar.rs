//! Per-type scalar functions with TensorFlow's (Eigen's) semantics, one
//! trait per op family, implemented for exactly the types TF's CPU kernels
//! support:
//!
//! - integers wrap (two's complement); `abs(MIN) = MIN`, `-MIN = MIN`;
//! - `half` and `bfloat16` compute in `f32` and round to nearest even;
//! - integer floor division and modulo round toward negative infinity, the
//!   float modulo takes the sign of the divisor (`fmod`, then `+ y` when
//!   the signs differ); callers reject zero integer divisors first;
//! - complex functions follow Eigen's and the C library's formulas.

use registry_core::tensor::{Complex64, Complex128, bf16, f16};

use crate::numeric::{Denormal, Float, Number, Real};

/// `Abs` for signed integers (wrapping: `abs(MIN) = MIN`) and floats
/// (clears the sign bit, as `fabs`).
pub trait AbsOp: Real {
    /// The absolute value.
    fn tf_abs(self) -> Self;
}

/// `Relu`: `max(x, 0)` as TF 2.21's CPU kernels answer: for integers,
/// `float` and `double`, `x` where it is greater than zero or NaN, else `+0`
/// (`Relu(-0.0) = 0.0`); for `half` and `bfloat16` (Eigen's `max(x, 0)` in
/// `float`), `x < 0 ? 0 : x` (`Relu(-0.0) = -0.0`). NaN stays NaN.
pub trait ReluOp: Real {
    /// `max(self, 0)`, keeping NaN.
    fn tf_relu(self) -> Self;
}

macro_rules! relu_signed {
    ($($t:ty),*) => {$(
        impl ReluOp for $t {
            #[inline(always)]
            fn tf_relu(self) -> Self {
                // One compare and a select (NaN compares false and stays):
                // vectorizes, where `> 0 || is_nan` did not.
                if self <= <$t as Number>::ZERO { <$t as Number>::ZERO } else { self }
            }
        }
    )*};
}

relu_signed!(i8, i16, i32, i64, f32, f64);

macro_rules! relu_half {
    ($($t:ty),*) => {$(
        impl ReluOp for $t {
            #[inline(always)]
            fn tf_relu(self) -> Self {
                if self < <$t as Number>::ZERO { <$t as Number>::ZERO } else { self }
            }
        }
    )*};
}

relu_half!(f16, bf16);

macro_rules! relu_unsigned {
    ($($t:ty),*) => {$(
        impl ReluOp for $t {
            #[inline(always)]
            fn tf_relu(self) -> Self {
                self
            }
        }
    )*};
}

relu_unsigned!(u8, u16, u32, u64);

/// `Neg` for signed integers (wrapping), floats and complex numbers.
pub trait NegOp: Number {
    /// `-self`.
    fn tf_neg(self) -> Self;
}

/// Complex conjugate (the identity for real numbers), for
/// `SquaredDifference`'s `conj(x - y) * (x - y)`.
pub trait Conjugate: Number {
    /// The conjugate.
    fn conj(self) -> Self;
}

/// Floating-point and complex functions: `Exp`, `Log`, `Sqrt`, `Rsqrt`,
/// `Sigmoid`, `Tanh`, and `Pow` for non-integers.
pub trait Transcendental: Number {
    /// `e^x`.
    fn tf_exp(self) -> Self;
    /// Natural logarithm (principal branch for complex).
    fn tf_log(self) -> Self;
    /// Square root (principal branch for complex).
    fn tf_sqrt(self) -> Self;
    /// `1 / sqrt(x)`.
    fn tf_rsqrt(self) -> Self;
    /// `1 / (1 + e^-x)`, computed without overflow: for real types as
    /// Eigen's `scalar_logistic_op`, `e / (1 + e)` with `e = exp(x)` and 1
    /// where `e` overflows.
    fn tf_sigmoid(self) -> Self;
    /// Hyperbolic tangent.
    fn tf_tanh(self) -> Self;
    /// `self ^ y`.
    fn tf_pow(self, y: Self) -> Self;
}

/// `FloorDiv` and `FloorMod` for real types.
pub trait FloorDivMod: Real {
    /// True for integers, whose zero divisors are an error.
    const INTEGER: bool;
    /// `floor(self / y)`.
    fn floor_div(self, y: Self) -> Self;
    /// `self - floor(self / y) * y`, with the sign of `y`.
    fn floor_mod(self, y: Self) -> Self;
    /// [`floor_mod`](Self::floor_mod) on a thread that flushes denormals,
    /// as TF's `fmod` then sign fix-up behaves there: a denormal divisor is
    /// a zero (NaN results), a denormal remainder passes through `fmod` as
    /// is but compares as zero (no fix-up).
    #[inline(always)]
    fn floor_mod_flushing(self, y: Self) -> Self {
        self.floor_mod(y)
    }
}

/// `Pow` for every type TF supports: integers by repeated squaring
/// (wrapping; callers reject negative exponents first), others through
/// [`Transcendental::tf_pow`].
pub trait PowOp: Number {
    /// True for integers, whose negative exponents are an error.
    const INTEGER: bool;
    /// Whether this exponent is a negative integer.
    fn is_negative_int(self) -> bool;
    /// `self ^ y`.
    fn pow_op(self, y: Self) -> Self;
    /// [`pow_op`](Self::pow_op) on a thread that flushes denormals, as TF
    /// computes it there: `float` and `double` through Eigen's vectorized
    /// `pow`, whose arithmetic flushes (but `x ^ 1` is `x` as it is); the
    /// other types through the C library, which does not.
    #[inline(always)]
    fn pow_op_flushing(self, y: Self) -> Self {
        self.pow_op(y)
    }
}

/// Whether `x` is a NaN (`x != x`; always false for integers).
#[inline(always)]
#[allow(clippy::eq_op)]
pub fn is_nan<T: PartialEq>(x: T) -> bool {
    x != x
}

/// `Maximum` and `Minimum` as TF 2.21's CPU kernels answer them (Eigen's
/// `scalar_max_op`/`scalar_min_op` with NaN propagation):
///
/// - integers, `float`, `double`: a NaN first operand is the result, else
///   `a > b ? a : b` (`a < b ? a : b` for the minimum), so a NaN second
///   operand is the result and of two equal values, `-0` and `0`
///   included, the second;
/// - `half`, `bfloat16`: the first NaN operand, else `a < b ? b : a`
///   (`b < a ? b : a`), so of two equal values the first.
pub trait MinMaxOp: Real {
    /// The larger.
    fn tf_max(self, b: Self) -> Self;
    /// The smaller.
    fn tf_min(self, b: Self) -> Self;
}

macro_rules! second_of_equals {
    ($($t:ty),*) => {$(
        impl MinMaxOp for $t {
            #[inline(always)]
            fn tf_max(self, b: Self) -> Self {
                if is_nan(self) || self > b { self } else { b }
            }
            #[inline(always)]
            fn tf_min(self, b: Self) -> Self {
                if is_nan(self) || self < b { self } else { b }
            }
        }
    )*};
}

second_of_equals!(i8, i16, i32, i64, u8, u16, u32, u64, f32, f64);

macro_rules! first_of_equals {
    ($($t:ty),*) => {$(
        impl MinMaxOp for $t {
            #[inline(always)]
            fn tf_max(self, b: Self) -> Self {
                if is_nan(self) { self } else if is_nan(b) || self < b { b } else { self }
            }
            #[inline(always)]
            fn tf_min(self, b: Self) -> Self {
                if is_nan(self) { self } else if is_nan(b) || b < self { b } else { self }
            }
        }
    )*};
}

first_of_equals!(f16, bf16);

macro_rules! signed_int {
    ($($t:ty),*) => {$(
        impl AbsOp for $t {
            #[inline(always)]
            fn tf_abs(self) -> Self {
                self.wrapping_abs()
            }
        }
        impl NegOp for $t {
            #[inline(always)]
            fn tf_neg(self) -> Self {
                self.wrapping_neg()
            }
        }
    )*};
}
signed_int!(i8, i16, i32, i64);

macro_rules! any_int {
    ($($t:ty),*) => {$(
        impl Conjugate for $t {
            #[inline(always)]
            fn conj(self) -> Self {
                self
            }
        }
        impl FloorDivMod for $t {
            const INTEGER: bool = true;
            #[inline(always)]
            #[allow(unused_comparisons)]
            fn floor_div(self, y: Self) -> Self {
                // wrapping_div: MIN / -1 = MIN, as TF (which divides -MIN by 1).
                let q = self.wrapping_div(y);
                let r = self.wrapping_rem(y);
                if r != 0 && ((r < 0) != (y < 0)) { q.wrapping_sub(1) } else { q }
            }
            #[inline(always)]
            #[allow(unused_comparisons)]
            fn floor_mod(self, y: Self) -> Self {
                let r = self.wrapping_rem(y);
                if r != 0 && ((y < 0) != (r < 0)) { r.wrapping_add(y) } else { r }
            }
        }
        impl PowOp for $t {
            const INTEGER: bool = true;
            #[inline(always)]
            #[allow(unused_comparisons)]
            fn is_negative_int(self) -> bool {
                self < 0
            }
            #[inline]
            fn pow_op(self, y: Self) -> Self {
                // Eigen's integer pow: square and multiply, wrapping.
                let (mut base, mut exp, mut acc): (Self, Self, Self) = (self, y, 1);
                while exp > 0 {
                    if exp & 1 == 1 {
                        acc = acc.wrapping_mul(base);
                    }
                    exp >>= 1;
                    base = base.wrapping_mul(base);
                }
                acc
            }
        }
    )*};
}
any_int!(i8, i16, i32, i64, u8, u16, u32, u64);

/// `fmod(x, y)` computed exactly in `f64` (the remainder is exact in any
/// binary float format, so this equals the type's own `fmod`).
#[inline(always)]
fn fmod<T: Float>(x: T, y: T) -> T {
    T::from_f64(Float::to_f64(x) % Float::to_f64(y))
}

macro_rules! float_common {
    ($($t:ty),*) => {$(
        impl AbsOp for $t {
            #[inline(always)]
            fn tf_abs(self) -> Self {
                num_traits::Float::abs(self)
            }
        }
        impl NegOp for $t {
            #[inline(always)]
            fn tf_neg(self) -> Self {
                -self
            }
        }
        impl Conjugate for $t {
            #[inline(always)]
            fn conj(self) -> Self {
                self
            }
        }
        impl FloorDivMod for $t {
            const INTEGER: bool = false;
            #[inline(always)]
            fn floor_div(self, y: Self) -> Self {
                num_traits::Float::floor(self / y)
            }
            #[inline(always)]
            fn floor_mod(self, y: Self) -> Self {
                let zero = <$t as Number>::ZERO;
                let m = fmod(self, y);
                if m != zero && ((y < zero) != (m < zero)) { m + y } else { m }
            }
            #[inline(always)]
            fn floor_mod_flushing(self, y: Self) -> Self {
                let zero = <$t as Number>::ZERO;
                let y = y.flushed();
                let m = fmod(self, y);
                let flushed = m.flushed();
                if flushed != zero && ((y < zero) != (flushed < zero)) {
                    (flushed + y).flushed()
                } else {
                    m
                }
            }
        }
    )*};
}
float_common!(f32, f64, f16, bf16);

macro_rules! float_pow {
    ($($t:ty => $flushing:literal),*) => {$(
        impl PowOp for $t {
            const INTEGER: bool = false;
            #[inline(always)]
            fn is_negative_int(self) -> bool {
                false
            }
            #[inline(always)]
            fn pow_op(self, y: Self) -> Self {
                self.tf_pow(y)
            }
            #[inline(always)]
            fn pow_op_flushing(self, y: Self) -> Self {
                if !$flushing {
                    return self.tf_pow(y);
                }
                let y = y.flushed();
                if y == <$t as Number>::ONE {
                    self
                } else {
                    self.flushed().tf_pow(y).flushed()
                }
            }
        }
    )*};
}
float_pow!(f32 => true, f64 => true, f16 => false, bf16 => false);

macro_rules! native_float {
    ($($t:ty => $exp:path),*) => {$(
        impl Transcendental for $t {
            #[inline(always)]
            fn tf_exp(self) -> Self {
                $exp(self)
            }
            #[inline(always)]
            fn tf_log(self) -> Self {
                self.ln()
            }
            #[inline(always)]
            fn tf_sqrt(self) -> Self {
                self.sqrt()
            }
            #[inline(always)]
            fn tf_rsqrt(self) -> Self {
                1.0 / self.sqrt()
            }
            #[inline(always)]
            fn tf_sigmoid(self) -> Self {
                let e = self.tf_exp();
                if e.is_infinite() { 1.0 } else { e / (1.0 + e) }
            }
            #[inline(always)]
            fn tf_tanh(self) -> Self {
                self.tanh()
            }
            #[inline(always)]
            fn tf_pow(self, y: Self) -> Self {
                self.powf(y)
            }
        }
    )*};
}
// `float`'s exponential is Eigen's vectorizable polynomial (as TF's);
// `double`'s the C library's.
native_float!(f32 => super::exp::exp_f32, f64 => f64::exp);

macro_rules! half_float {
    ($($t:ty),*) => {$(
        impl Transcendental for $t {
            #[inline(always)]
            fn tf_exp(self) -> Self {
                <$t>::from_f32(self.to_f32().tf_exp())
            }
            #[inline(always)]
            fn tf_log(self) -> Self {
                <$t>::from_f32(self.to_f32().tf_log())
            }
            #[inline(always)]
            fn tf_sqrt(self) -> Self {
                <$t>::from_f32(self.to_f32().tf_sqrt())
            }
            #[inline(always)]
            fn tf_rsqrt(self) -> Self {
                <$t>::from_f32(self.to_f32().tf_rsqrt())
            }
            /// Eigen's generic `scalar_logistic_op` on half types:
            /// `e / (1 + e)` with `e = exp(x)`, each step rounded to the
            /// type (1 where `e` overflows).
            #[inline(always)]
            fn tf_sigmoid(self) -> Self {
                let e = <$t>::from_f32(self.to_f32().tf_exp());
                if e.is_infinite() {
                    return <$t>::ONE;
                }
                let d = <$t>::from_f32(1.0 + e.to_f32());
                <$t>::from_f32(e.to_f32() / d.to_f32())
            }
            #[inline(always)]
            fn tf_tanh(self) -> Self {
                <$t>::from_f32(self.to_f32().tf_tanh())
            }
            #[inline(always)]
            fn tf_pow(self, y: Self) -> Self {
                <$t>::from_f32(self.to_f32().tf_pow(y.to_f32()))
            }
        }
    )*};
}
half_float!(f16, bf16);

macro_rules! complex {
    ($c:ident, $f:ty, $tanh_cutoff:expr) => {
        impl NegOp for $c {
            #[inline(always)]
            fn tf_neg(self) -> Self {
                -self
            }
        }
        impl Conjugate for $c {
            #[inline(always)]
            fn conj(self) -> Self {
                $c::new(self.re, -self.im)
            }
        }
        impl PowOp for $c {
            const INTEGER: bool = false;
            #[inline(always)]
            fn is_negative_int(self) -> bool {
                false
            }
            #[inline(always)]
            fn pow_op(self, y: Self) -> Self {
                self.tf_pow(y)
            }
        }
        impl Transcendental for $c {
            fn tf_exp(self) -> Self {
                let e = self.re.exp();
                if self.im == 0.0 {
                    // Keeps exp(inf) = inf + 0i (inf * sin(0) would be NaN).
                    return $c::new(e, self.im);
                }
                $c::new(e * self.im.cos(), e * self.im.sin())
            }
            fn tf_log(self) -> Self {
                $c::new(self.re.hypot(self.im).ln(), self.im.atan2(self.re))
            }
            /// Eigen's `complex_sqrt`.
            fn tf_sqrt(self) -> Self {
                let (x, y) = (self.re, self.im);
                let w = (0.5 * (x.abs() + x.hypot(y))).sqrt();
                if y.is_infinite() {
                    $c::new(<$f>::INFINITY, y)
                } else if x == 0.0 {
                    $c::new(w, if y < 0.0 { -w } else { w })
                } else if x > 0.0 {
                    $c::new(w, y / (2.0 * w))
                } else {
                    $c::new(y.abs() / (2.0 * w), if y < 0.0 { -w } else { w })
                }
            }
            /// Eigen's `complex_rsqrt`.
            fn tf_rsqrt(self) -> Self {
                let (x, y) = (self.re, self.im);
                let abs_z = x.hypot(y);
                let w = (0.5 * (x.abs() + abs_z)).sqrt();
                let woz = w / abs_z;
                if abs_z == 0.0 {
                    $c::new(<$f>::INFINITY, <$f>::NAN)
                } else if x.is_infinite() || y.is_infinite() {
                    $c::new(0.0, 0.0)
                } else if x == 0.0 {
                    $c::new(woz, if y < 0.0 { woz } else { -woz })
                } else if x > 0.0 {
                    $c::new(woz, -y / (2.0 * w * abs_z))
                } else {
                    $c::new(
                        y.abs() / (2.0 * w * abs_z),
                        if y < 0.0 { woz } else { -woz },
                    )
                }
            }
            fn tf_sigmoid(self) -> Self {
                let one = <$c as Number>::ONE;
                if self.re >= 0.0 {
                    one / (one + (-self).tf_exp())
                } else {
                    let e = self.tf_exp();
                    e / (one + e)
                }
            }
            /// Kahan's algorithm (as the C library's `ctanh`).
            fn tf_tanh(self) -> Self {
                let (x, y) = (self.re, self.im);
                if x.abs() >= $tanh_cutoff {
                    let im = 4.0 * y.sin() * y.cos() * (-2.0 * x.abs()).exp();
                    return $c::new((1.0 as $f).copysign(x), im);
                }
                let t = y.tan();
                let beta = 1.0 + t * t;
                let s = x.sinh();
                let rho = (1.0 + s * s).sqrt();
                let denom = 1.0 + beta * s * s;
                $c::new(beta * rho * s / denom, t / denom)
            }
            /// `exp(y * log(x))` (the C library's `cpow`), with `0^y = 0`
            /// for `Re(y) > 0`.
            fn tf_pow(self, y: Self) -> Self {
                if self.re == 0.0 && self.im == 0.0 && y.re > 0.0 {
                    return $c::new(0.0, 0.0);
                }
                (y * self.tf_log()).tf_exp()
            }
        }
    };
}
complex!(Complex64, f32, 9.0);
complex!(Complex128, f64, 22.0);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_floor_semantics() {
        assert_eq!((-7i32).floor_div(2), -4);
        assert_eq!(7i32.floor_div(-2), -4);
        assert_eq!((-6i32).floor_div(2), -3);
        assert_eq!((-7i32).floor_mod(2), 1);
        assert_eq!(7i32.floor_mod(-2), -1);
        assert_eq!(i32::MIN.floor_div(-1), i32::MIN);
        assert_eq!(i32::MIN.floor_mod(-1), 0);
        assert_eq!(7u8.floor_div(2), 3);
        assert_eq!(3i8.pow_op(5), 3i8.wrapping_pow(5));
        assert_eq!(2i64.pow_op(0), 1);
    }

    #[test]
    fn float_floor_mod_takes_divisor_sign() {
        assert_eq!((-7.5f32).floor_mod(2.0), 0.5);
        assert_eq!(7.5f64.floor_mod(-2.0), -0.5);
        assert_eq!((-7.5f32).floor_div(2.0), -4.0);
        assert_eq!(
            f16::from_f32(-7.5).floor_mod(f16::from_f32(2.0)),
            f16::from_f32(0.5)
        );
    }

    #[test]
    fn nan_propagates_through_max_min() {
        assert!(f32::NAN.tf_max(1.0).is_nan());
        assert!(1.0f32.tf_max(f32::NAN).is_nan());
        assert!(f64::NAN.tf_min(1.0).is_nan());
        assert!(bf16::ONE.tf_max(bf16::NAN).is_nan());
        assert_eq!(2.tf_max(3), 3);
        assert_eq!(2u8.tf_min(3), 2);
    }

    #[test]
    fn equal_values_pick_as_tensorflow_does() {
        // float/double: the second of two equals; half/bfloat16: the first.
        assert_eq!(0.0f32.tf_max(-0.0).to_bits(), (-0.0f32).to_bits());
        assert_eq!((-0.0f64).tf_min(0.0).to_bits(), 0.0f64.to_bits());
        assert_eq!(f16::ZERO.tf_max(f16::NEG_ZERO).to_bits(), 0);
        assert_eq!(bf16::NEG_ZERO.tf_min(bf16::ZERO).to_bits(), 0x8000);
        assert_eq!((-0.0f32).tf_relu().to_bits(), 0);
        assert_eq!(f16::NEG_ZERO.tf_relu().to_bits(), 0x8000);
        assert!(f64::NAN.tf_relu().is_nan());
    }

    #[test]
    fn flushing_floor_mod_and_pow() {
        let tiny = f64::from_bits(1);
        assert!(1.0f64.floor_mod_flushing(tiny).is_nan());
        assert_eq!(
            tiny.floor_mod_flushing(-1.0),
            tiny,
            "a denormal remainder passes"
        );
        assert_eq!(tiny.pow_op_flushing(1.0), tiny, "x ^ 1 is x as it is");
        assert_eq!(0.0f64.pow_op_flushing(tiny), 1.0, "x ^ 0 after the flush");
        let bf_tiny = bf16::from_bits(1);
        assert_eq!(
            bf16::ZERO.pow_op_flushing(bf_tiny),
            bf16::ZERO,
            "bfloat16 pow keeps denormals"
        );
    }

    #[test]
    fn complex_functions() {
        let z = Complex128::new(0.5, -1.25);
        let s = z.tf_sqrt();
        let back = s * s;
        assert!((back.re - z.re).abs() < 1e-14 && (back.im - z.im).abs() < 1e-14);
        let r = z.tf_rsqrt() * s;
        assert!((r.re - 1.0).abs() < 1e-14 && r.im.abs() < 1e-14);
        let e = z.tf_log().tf_exp();
        assert!((e.re - z.re).abs() < 1e-14 && (e.im - z.im).abs() < 1e-14);
        let t = Complex128::new(0.3, 0.0).tf_tanh();
        assert!((t.re - 0.3f64.tanh()).abs() < 1e-15 && t.im == 0.0);
        let big = Complex64::new(50.0, 1.0).tf_tanh();
        assert_eq!(big.re, 1.0);
        let p = Complex128::new(2.0, 0.0).tf_pow(Complex128::new(3.0, 0.0));
        assert!((p.re - 8.0).abs() < 1e-12 && p.im.abs() < 1e-12);
    }
}

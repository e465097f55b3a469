//! Scalar semantics of the activations and special functions of the unary
//! table beyond the standard set's: `Relu6`, `Elu`, `Selu`, `Softplus`,
//! `Softsign`, `Erf`, `Erfc`, `Log1p`, `Expm1`, `Sin`, `Cos`, `Ceil`,
//! `Round`, `Sign`, `Reciprocal`, and `LeakyRelu`'s `alpha` form, as
//! TensorFlow 2.21's CPU kernels (Eigen's functors) answer:
//!
//! - `Elu` and `Selu` select on `x < 0` (so `-0` and NaN pass through the
//!   linear branch) and compute `exp(x) - 1` there;
//! - `Softplus` returns `x` above `-threshold` and `exp(x)` below
//!   `threshold`, `threshold = log(epsilon) + 2` of the type (`half`
//!   computes in `float`, with `float`'s threshold);
//! - `Relu6` keeps NaN; `-0` gives `+0` for `float` and `double`, and stays
//!   `-0` for `half` and `bfloat16` (as `Relu`);
//! - `Sign` gives NaN for NaN and `+0` for `-0`; `Round` rounds half to even;
//! - `half` and `bfloat16` compute in `f32` and round once; `Erf`/`Erfc`
//!   use the C library's functions (`libm`), within a few ulps of Eigen's
//!   approximations.

use registry_core::tensor::{Complex64, Complex128, bf16, f16};

use super::scalar::Transcendental;
use crate::numeric::{Number, Real};

/// `Relu6`: `min(max(x, 0), 6)`, keeping NaN.
pub trait Relu6Op: Real {
    /// `min(max(self, 0), 6)`.
    fn tf_relu6(self) -> Self;
}

/// `Sign` for reals: -1, 0 or 1 (NaN for NaN, `+0` for `-0`).
pub trait SignOp: Number {
    /// The sign.
    fn tf_sign(self) -> Self;
}

/// `Round`: to the nearest integer, half to even (the identity on
/// integers).
pub trait RoundOp: Real {
    /// Rounded half to even.
    fn tf_round(self) -> Self;
}

/// The float-only activations and special functions.
pub trait SpecialFloat: Real {
    /// `x < 0 ? exp(x) - 1 : x`.
    fn tf_elu(self) -> Self;
    /// `x < 0 ? scale * alpha * (exp(x) - 1) : scale * x`.
    fn tf_selu(self) -> Self;
    /// `log(exp(x) + 1)` with TF's thresholds.
    fn tf_softplus(self) -> Self;
    /// `x / (|x| + 1)`.
    fn tf_softsign(self) -> Self;
    /// The error function.
    fn tf_erf(self) -> Self;
    /// The complementary error function.
    fn tf_erfc(self) -> Self;
    /// The smallest integer not less than `x`.
    fn tf_ceil(self) -> Self;
    /// `x > 0 ? x : x * alpha` (`alpha` given as `f32`, TF's attr type).
    fn tf_leaky_relu(self, alpha: f32) -> Self;
}

/// The functions TF also defines for complex numbers.
pub trait SpecialComplexible: Number {
    /// `log(1 + x)`, precise near 0.
    fn tf_log1p(self) -> Self;
    /// `exp(x) - 1`, precise near 0.
    fn tf_expm1(self) -> Self;
    /// The sine.
    fn tf_sin(self) -> Self;
    /// The cosine.
    fn tf_cos(self) -> Self;
    /// `1 / x`.
    fn tf_reciprocal(self) -> Self;
}

const SELU_SCALE: f64 = 1.050_700_987_355_480_5;
const SELU_SCALE_ALPHA: f64 = 1.758_099_340_847_376_9;

/// The computing core of one float type: `f32` or `f64`.
macro_rules! native_special {
    ($t:ty, $erf:path, $erfc:path, $eps:expr) => {
        impl Relu6Op for $t {
            #[inline(always)]
            fn tf_relu6(self) -> Self {
                // Compares and selects (NaN compares false and stays):
                // vectorizes, where `is_nan` then `min` did not.
                if self <= 0.0 {
                    0.0
                } else if self > 6.0 {
                    6.0
                } else {
                    self
                }
            }
        }
        impl SignOp for $t {
            #[inline(always)]
            fn tf_sign(self) -> Self {
                if self.is_nan() {
                    self
                } else if self > 0.0 {
                    1.0
                } else if self < 0.0 {
                    -1.0
                } else {
                    0.0
                }
            }
        }
        impl RoundOp for $t {
            #[inline(always)]
            fn tf_round(self) -> Self {
                self.round_ties_even()
            }
        }
        impl SpecialFloat for $t {
            #[inline(always)]
            fn tf_elu(self) -> Self {
                if self < 0.0 {
                    self.tf_exp() - 1.0
                } else {
                    self
                }
            }
            #[inline(always)]
            fn tf_selu(self) -> Self {
                if self < 0.0 {
                    (SELU_SCALE_ALPHA as $t) * (self.tf_exp() - 1.0)
                } else {
                    (SELU_SCALE as $t) * self
                }
            }
            #[inline(always)]
            fn tf_softplus(self) -> Self {
                let threshold: $t = ($eps as $t).ln() + 2.0;
                if self > -threshold {
                    self
                } else if self < threshold {
                    self.tf_exp()
                } else {
                    self.tf_exp().ln_1p()
                }
            }
            #[inline(always)]
            fn tf_softsign(self) -> Self {
                self / (self.abs() + 1.0)
            }
            #[inline(always)]
            fn tf_erf(self) -> Self {
                $erf(self)
            }
            #[inline(always)]
            fn tf_erfc(self) -> Self {
                $erfc(self)
            }
            #[inline(always)]
            fn tf_ceil(self) -> Self {
                self.ceil()
            }
            #[inline(always)]
            fn tf_leaky_relu(self, alpha: f32) -> Self {
                if self > 0.0 {
                    self
                } else {
                    self * (alpha as $t)
                }
            }
        }
        impl SpecialComplexible for $t {
            #[inline(always)]
            fn tf_log1p(self) -> Self {
                self.ln_1p()
            }
            #[inline(always)]
            fn tf_expm1(self) -> Self {
                self.exp_m1()
            }
            #[inline(always)]
            fn tf_sin(self) -> Self {
                self.sin()
            }
            #[inline(always)]
            fn tf_cos(self) -> Self {
                self.cos()
            }
            #[inline(always)]
            fn tf_reciprocal(self) -> Self {
                1.0 / self
            }
        }
    };
}

native_special!(f32, libm::erff, libm::erfcf, f32::EPSILON);
native_special!(f64, libm::erf, libm::erfc, f64::EPSILON);

/// `half` and `bfloat16`: computed in `f32`, rounded once. `Softplus`
/// uses the type's own threshold for `bfloat16` and `float`'s for `half`
/// (as TF's kernels answer).
macro_rules! half_special {
    ($($t:ty => $softplus_eps:expr),*) => {$(
        impl Relu6Op for $t {
            #[inline(always)]
            fn tf_relu6(self) -> Self {
                let x = self.to_f32();
                if x < 0.0 {
                    <$t>::ZERO
                } else if x > 6.0 {
                    <$t>::from_f32(6.0)
                } else {
                    self
                }
            }
        }
        impl SignOp for $t {
            #[inline(always)]
            fn tf_sign(self) -> Self {
                <$t>::from_f32(self.to_f32().tf_sign())
            }
        }
        impl RoundOp for $t {
            #[inline(always)]
            fn tf_round(self) -> Self {
                <$t>::from_f32(self.to_f32().round_ties_even())
            }
        }
        impl SpecialFloat for $t {
            #[inline(always)]
            fn tf_elu(self) -> Self {
                let x = self.to_f32();
                if x < 0.0 {
                    let e = <$t>::from_f32(x.tf_exp());
                    <$t>::from_f32(e.to_f32() - 1.0)
                } else {
                    self
                }
            }
            #[inline(always)]
            fn tf_selu(self) -> Self {
                let x = self.to_f32();
                if x < 0.0 {
                    let e = <$t>::from_f32(x.tf_exp());
                    let m = <$t>::from_f32(e.to_f32() - 1.0);
                    <$t>::from_f32(<$t>::from_f64(SELU_SCALE_ALPHA).to_f32() * m.to_f32())
                } else {
                    <$t>::from_f32(<$t>::from_f64(SELU_SCALE).to_f32() * x)
                }
            }
            #[inline(always)]
            fn tf_softplus(self) -> Self {
                let x = self.to_f32();
                let threshold = ($softplus_eps as f32).ln() + 2.0;
                let y = if x > -threshold {
                    x
                } else if x < threshold {
                    x.tf_exp()
                } else {
                    x.tf_exp().ln_1p()
                };
                <$t>::from_f32(y)
            }
            #[inline(always)]
            fn tf_softsign(self) -> Self {
                let x = self.to_f32();
                let d = <$t>::from_f32(x.abs() + 1.0);
                <$t>::from_f32(x / d.to_f32())
            }
            #[inline(always)]
            fn tf_erf(self) -> Self {
                <$t>::from_f32(libm::erff(self.to_f32()))
            }
            #[inline(always)]
            fn tf_erfc(self) -> Self {
                <$t>::from_f32(libm::erfcf(self.to_f32()))
            }
            #[inline(always)]
            fn tf_ceil(self) -> Self {
                <$t>::from_f32(self.to_f32().ceil())
            }
            #[inline(always)]
            fn tf_leaky_relu(self, alpha: f32) -> Self {
                if self.to_f32() > 0.0 {
                    self
                } else {
                    <$t>::from_f32(self.to_f32() * <$t>::from_f32(alpha).to_f32())
                }
            }
        }
        impl SpecialComplexible for $t {
            #[inline(always)]
            fn tf_log1p(self) -> Self {
                <$t>::from_f32(self.to_f32().ln_1p())
            }
            #[inline(always)]
            fn tf_expm1(self) -> Self {
                <$t>::from_f32(self.to_f32().exp_m1())
            }
            #[inline(always)]
            fn tf_sin(self) -> Self {
                <$t>::from_f32(self.to_f32().sin())
            }
            #[inline(always)]
            fn tf_cos(self) -> Self {
                <$t>::from_f32(self.to_f32().cos())
            }
            #[inline(always)]
            fn tf_reciprocal(self) -> Self {
                <$t>::from_f32(1.0 / self.to_f32())
            }
        }
    )*};
}

half_special!(f16 => f32::EPSILON, bf16 => bf16::EPSILON.to_f32());

macro_rules! int_special {
    (signed: $($s:ty),*; unsigned: $($u:ty),*) => {
        $(
            impl Relu6Op for $s {
                #[inline(always)]
                fn tf_relu6(self) -> Self {
                    self.clamp(0, 6)
                }
            }
            impl SignOp for $s {
                #[inline(always)]
                fn tf_sign(self) -> Self {
                    self.signum()
                }
            }
            impl RoundOp for $s {
                #[inline(always)]
                fn tf_round(self) -> Self {
                    self
                }
            }
        )*
        $(
            impl Relu6Op for $u {
                #[inline(always)]
                fn tf_relu6(self) -> Self {
                    self.min(6)
                }
            }
        )*
    };
}

int_special!(signed: i8, i16, i32, i64; unsigned: u8, u16, u32, u64);

macro_rules! complex_special {
    ($c:ident, $f:ty) => {
        impl SignOp for $c {
            /// `x / |x|`, 0 for 0.
            fn tf_sign(self) -> Self {
                let norm = self.re.hypot(self.im);
                if norm == 0.0 {
                    $c::new(0.0, 0.0)
                } else {
                    $c::new(self.re / norm, self.im / norm)
                }
            }
        }
        impl SpecialComplexible for $c {
            /// Eigen's generic `log1p`: `x * log(1 + x) / ((1 + x) - 1)`.
            fn tf_log1p(self) -> Self {
                use super::scalar::Transcendental;
                let one = <$c as Number>::ONE;
                let x1p = one + self;
                let log_1p = x1p.tf_log();
                if x1p == <$c as Number>::ZERO {
                    // TF answers log1p(-1) = -inf + NaN i (Eigen's formula
                    // below, through std::complex's division).
                    $c::new(log_1p.re, <$f>::NAN)
                } else if x1p == one || x1p == log_1p {
                    self
                } else {
                    self * (log_1p / (x1p - one))
                }
            }
            /// `exp(x) - 1` with the real part from `expm1` and `cos`
            /// (`expm1(a) cos(b) + cos(b) - 1`, with `cos(b) - 1 = -2 sin²(b/2)`).
            fn tf_expm1(self) -> Self {
                let (a, b) = (self.re, self.im);
                let half_sin = (b / 2.0).sin();
                let re = a.exp_m1() * b.cos() - 2.0 * half_sin * half_sin;
                $c::new(re, a.exp() * b.sin())
            }
            fn tf_sin(self) -> Self {
                let (a, b) = (self.re, self.im);
                $c::new(a.sin() * b.cosh(), a.cos() * b.sinh())
            }
            fn tf_cos(self) -> Self {
                let (a, b) = (self.re, self.im);
                $c::new(a.cos() * b.cosh(), -(a.sin() * b.sinh()))
            }
            fn tf_reciprocal(self) -> Self {
                <$c as Number>::ONE / self
            }
        }
    };
}

complex_special!(Complex64, f32);
complex_special!(Complex128, f64);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relu6_and_sign_edges() {
        assert_eq!(7.0f32.tf_relu6(), 6.0);
        assert_eq!((-0.0f32).tf_relu6().to_bits(), 0);
        assert!(f32::NAN.tf_relu6().is_nan());
        assert_eq!(f16::from_f32(-0.0).tf_relu6().to_bits(), 0x8000);
        assert_eq!(9u8.tf_relu6(), 6);
        assert_eq!((-3i32).tf_relu6(), 0);
        assert_eq!((-0.0f64).tf_sign().to_bits(), 0);
        assert!(f64::NAN.tf_sign().is_nan());
        assert_eq!((-7i16).tf_sign(), -1);
        assert_eq!(Complex64::new(3.0, 4.0).tf_sign(), Complex64::new(0.6, 0.8));
    }

    #[test]
    fn elu_selu_keep_the_linear_branch_for_minus_zero() {
        assert_eq!((-0.0f32).tf_elu().to_bits(), (-0.0f32).to_bits());
        assert!(((-1.0f64).tf_elu() - (-0.632_120_558_828_557_7)).abs() < 1e-15);
        assert_eq!((-0.0f32).tf_selu().to_bits(), (-0.0f32).to_bits());
        assert!((1.0f64.tf_selu() - SELU_SCALE).abs() < 1e-15);
        assert_eq!((-2.0f32).tf_leaky_relu(0.2), -2.0 * 0.2);
        assert_eq!(2.5f32.tf_round(), 2.0);
        assert_eq!((-0.5f32).tf_round().to_bits(), (-0.0f32).to_bits());
    }

    #[test]
    fn softplus_thresholds() {
        // float: threshold = ln(2^-23) + 2 ~ -13.94.
        assert_eq!(14.0f32.tf_softplus(), 14.0);
        assert_eq!((-14.0f32).tf_softplus(), (-14.0f32).exp());
        assert!((0.0f32.tf_softplus() - std::f32::consts::LN_2).abs() < 1e-7);
        // bfloat16: threshold = ln(2^-7) + 2 ~ -2.85.
        assert_eq!(bf16::from_f32(3.0).tf_softplus(), bf16::from_f32(3.0));
        assert_eq!(
            bf16::from_f32(-3.0).tf_softplus(),
            bf16::from_f32((-3.0f32).exp())
        );
    }

    #[test]
    fn complex_functions_match_their_definitions() {
        let z = Complex128::new(0.3, -0.7);
        let e = z.tf_expm1() + Complex128::new(1.0, 0.0);
        let exp = Complex128::new(
            0.3f64.exp() * (-0.7f64).cos(),
            0.3f64.exp() * (-0.7f64).sin(),
        );
        assert!((e - exp).norm() < 1e-15);
        let s = z.tf_sin();
        let c = z.tf_cos();
        assert!((s * s + c * c - Complex128::new(1.0, 0.0)).norm() < 1e-14);
        assert!((z.tf_reciprocal() * z - Complex128::new(1.0, 0.0)).norm() < 1e-15);
    }
}

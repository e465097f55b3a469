//! Element conversions with TensorFlow's `Cast` semantics on x86-64 CPUs:
//!
//! - integer to integer: two's complement truncation (`static_cast`);
//! - to `bool`: `x != 0` (NaN is true); from complex only the real part
//!   counts, as in TF's `scalar_cast_op<complex<From>, To>`;
//! - integer to float: rounded to nearest; to `half`/`bfloat16` (from any
//!   type but `f32`) through `f32` first, as Eigen's constructors do;
//! - float to integer: truncation toward zero; NaN and out-of-range values
//!   give what x86's `cvttss2si`/`cvttsd2si` give, which is what TF's CPU
//!   kernels return: `i32::MIN` for `int32`, `i64::MIN` for `int64`; the
//!   narrower types take the low bits of the 32-bit conversion (so NaN is
//!   0), `uint32` the low bits of the 64-bit one, and `uint64` gets
//!   `2^63` for NaN and values of `2^64` or more;
//! - complex to real: the real part; real to complex: imaginary part 0.
//!
//! With `Truncate`, TF zeroes the low mantissa bits of the source that the
//! narrower float type cannot hold before converting (for the pairs of
//! [`truncation_bits`]), so the mantissa is truncated, not rounded.

use registry_core::proto::DataType;
use registry_core::tensor::{Complex64, Complex128, bf16, f16};

use crate::numeric::Element;

/// A destination element type: how each kind of source value converts.
pub trait CastDst: Element {
    /// From a `bool` (0 or 1).
    fn from_bool(v: bool) -> Self;
    /// From a signed integer (exact in `i64`).
    fn from_i64(v: i64) -> Self;
    /// From an unsigned integer (exact in `u64`).
    fn from_u64(v: u64) -> Self;
    /// From `f32` (and `half`/`bfloat16`, exact in `f32`).
    fn from_f32(v: f32) -> Self;
    /// From `f64`.
    fn from_f64(v: f64) -> Self;
    /// From `complex64`.
    fn from_c64(v: Complex64) -> Self;
    /// From `complex128`.
    fn from_c128(v: Complex128) -> Self;
}

/// A source element type: converts to any [`CastDst`].
pub trait CastSrc: Element {
    /// `static_cast<D>(self)` with TF's rules.
    fn cast_to<D: CastDst>(self) -> D;
}

/// x86's `cvttsd2si` (32-bit): truncation, or `i32::MIN` for NaN and
/// values out of range.
#[inline(always)]
pub fn cvtt_i32(v: f64) -> i32 {
    // The range check is done on the truncated value: (-2^31 - 1, 2^31).
    if v > -2_147_483_649.0 && v < 2_147_483_648.0 {
        v as i32
    } else {
        i32::MIN
    }
}

/// x86's `cvttsd2si` (64-bit): truncation, or `i64::MIN` for NaN and
/// values out of range.
#[inline(always)]
pub fn cvtt_i64(v: f64) -> i64 {
    // -2^63 is exact in f64 and in range; 2^63 is the first value out.
    if (-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&v) {
        v as i64
    } else {
        i64::MIN
    }
}

/// The x86-64 lowering of `static_cast<uint64_t>(double)`: exact in
/// `[0, 2^64)`, negative values wrap through `i64`, NaN and values from
/// `2^64` up give `2^63`.
#[inline(always)]
pub fn cvtt_u64(v: f64) -> u64 {
    const TWO_63: f64 = 9_223_372_036_854_775_808.0;
    if (TWO_63..2.0 * TWO_63).contains(&v) {
        v as u64
    } else if v >= TWO_63 {
        1 << 63
    } else {
        cvtt_i64(v) as u64
    }
}

macro_rules! int_dst {
    ($($t:ty => $from_float:expr),* $(,)?) => {$(
        impl CastDst for $t {
            #[inline(always)]
            fn from_bool(v: bool) -> Self {
                <$t>::from(v)
            }
            #[inline(always)]
            fn from_i64(v: i64) -> Self {
                v as $t
            }
            #[inline(always)]
            fn from_u64(v: u64) -> Self {
                v as $t
            }
            #[inline(always)]
            fn from_f32(v: f32) -> Self {
                let f: fn(f64) -> $t = $from_float;
                f(f64::from(v))
            }
            #[inline(always)]
            fn from_f64(v: f64) -> Self {
                let f: fn(f64) -> $t = $from_float;
                f(v)
            }
            #[inline(always)]
            fn from_c64(v: Complex64) -> Self {
                Self::from_f32(v.re)
            }
            #[inline(always)]
            fn from_c128(v: Complex128) -> Self {
                Self::from_f64(v.re)
            }
        }
    )*};
}

int_dst! {
    i8 => |v| cvtt_i32(v) as i8,
    i16 => |v| cvtt_i32(v) as i16,
    i32 => cvtt_i32,
    i64 => cvtt_i64,
    u8 => |v| cvtt_i32(v) as u8,
    u16 => |v| cvtt_i32(v) as u16,
    u32 => |v| cvtt_i64(v) as u32,
    u64 => cvtt_u64,
}

impl CastDst for bool {
    #[inline(always)]
    fn from_bool(v: bool) -> Self {
        v
    }
    #[inline(always)]
    fn from_i64(v: i64) -> Self {
        v != 0
    }
    #[inline(always)]
    fn from_u64(v: u64) -> Self {
        v != 0
    }
    #[inline(always)]
    fn from_f32(v: f32) -> Self {
        v != 0.0
    }
    #[inline(always)]
    fn from_f64(v: f64) -> Self {
        v != 0.0
    }
    #[inline(always)]
    fn from_c64(v: Complex64) -> Self {
        v.re != 0.0
    }
    #[inline(always)]
    fn from_c128(v: Complex128) -> Self {
        v.re != 0.0
    }
}

/// Float destinations, given the conversions from `f32`, `f64`, `i64` and
/// `u64`.
macro_rules! float_dst {
    ($t:ty, $f32:expr, $f64:expr, $i64:expr, $u64:expr) => {
        impl CastDst for $t {
            #[inline(always)]
            fn from_bool(v: bool) -> Self {
                Self::from_f32(f32::from(u8::from(v)))
            }
            #[inline(always)]
            fn from_i64(v: i64) -> Self {
                let f: fn(i64) -> $t = $i64;
                f(v)
            }
            #[inline(always)]
            fn from_u64(v: u64) -> Self {
                let f: fn(u64) -> $t = $u64;
                f(v)
            }
            #[inline(always)]
            fn from_f32(v: f32) -> Self {
                let f: fn(f32) -> $t = $f32;
                f(v)
            }
            #[inline(always)]
            fn from_f64(v: f64) -> Self {
                let f: fn(f64) -> $t = $f64;
                f(v)
            }
            #[inline(always)]
            fn from_c64(v: Complex64) -> Self {
                Self::from_f32(v.re)
            }
            #[inline(always)]
            fn from_c128(v: Complex128) -> Self {
                Self::from_f64(v.re)
            }
        }
    };
}

float_dst!(f32, |v| v, |v| v as f32, |v| v as f32, |v| v as f32);
float_dst!(f64, f64::from, |v| v, |v| v as f64, |v| v as f64);
float_dst!(
    f16,
    f16::from_f32,
    |v| f16::from_f32(v as f32),
    |v| f16::from_f32(v as f32),
    |v| f16::from_f32(v as f32)
);
float_dst!(
    bf16,
    bf16::from_f32,
    |v| bf16::from_f32(v as f32),
    |v| bf16::from_f32(v as f32),
    |v| bf16::from_f32(v as f32)
);

macro_rules! complex_dst {
    ($c:ident, $f:ty) => {
        impl CastDst for $c {
            #[inline(always)]
            fn from_bool(v: bool) -> Self {
                $c::new(<$f>::from(u8::from(v)), 0.0)
            }
            #[inline(always)]
            fn from_i64(v: i64) -> Self {
                $c::new(v as $f, 0.0)
            }
            #[inline(always)]
            fn from_u64(v: u64) -> Self {
                $c::new(v as $f, 0.0)
            }
            #[inline(always)]
            fn from_f32(v: f32) -> Self {
                $c::new(v as $f, 0.0)
            }
            #[inline(always)]
            fn from_f64(v: f64) -> Self {
                $c::new(v as $f, 0.0)
            }
            #[inline(always)]
            fn from_c64(v: Complex64) -> Self {
                $c::new(v.re as $f, v.im as $f)
            }
            #[inline(always)]
            fn from_c128(v: Complex128) -> Self {
                $c::new(v.re as $f, v.im as $f)
            }
        }
    };
}
complex_dst!(Complex64, f32);
complex_dst!(Complex128, f64);

macro_rules! src {
    ($($t:ty => |$v:ident| $conv:expr),* $(,)?) => {$(
        impl CastSrc for $t {
            #[inline(always)]
            fn cast_to<D: CastDst>(self) -> D {
                let $v = self;
                $conv
            }
        }
    )*};
}

src! {
    bool => |v| D::from_bool(v),
    i8 => |v| D::from_i64(i64::from(v)),
    i16 => |v| D::from_i64(i64::from(v)),
    i32 => |v| D::from_i64(i64::from(v)),
    i64 => |v| D::from_i64(v),
    u8 => |v| D::from_u64(u64::from(v)),
    u16 => |v| D::from_u64(u64::from(v)),
    u32 => |v| D::from_u64(u64::from(v)),
    u64 => |v| D::from_u64(v),
    f16 => |v| D::from_f32(v.to_f32()),
    bf16 => |v| D::from_f32(v.to_f32()),
    f32 => |v| D::from_f32(v),
    f64 => |v| D::from_f64(v),
    Complex64 => |v| D::from_c64(v),
    Complex128 => |v| D::from_c128(v),
}

/// A source whose low mantissa bits can be zeroed (TF's `LSBZeroSetter`).
pub trait Truncate: CastSrc {
    /// Zeroes the `bits` lowest mantissa bits (of each part for complex);
    /// NaN is left alone.
    fn zero_low_bits(self, bits: u32) -> Self;
}

impl Truncate for f32 {
    #[inline(always)]
    fn zero_low_bits(self, bits: u32) -> Self {
        if self.is_nan() {
            self
        } else {
            f32::from_bits(self.to_bits() & (u32::MAX << bits))
        }
    }
}

impl Truncate for f64 {
    #[inline(always)]
    fn zero_low_bits(self, bits: u32) -> Self {
        if self.is_nan() {
            self
        } else {
            f64::from_bits(self.to_bits() & (u64::MAX << bits))
        }
    }
}

impl Truncate for Complex64 {
    #[inline(always)]
    fn zero_low_bits(self, bits: u32) -> Self {
        Complex64::new(self.re.zero_low_bits(bits), self.im.zero_low_bits(bits))
    }
}

impl Truncate for Complex128 {
    #[inline(always)]
    fn zero_low_bits(self, bits: u32) -> Self {
        Complex128::new(self.re.zero_low_bits(bits), self.im.zero_low_bits(bits))
    }
}

/// The mantissa bits TF zeroes for a truncating cast from `src` to `dst`,
/// for the pairs TF truncates (`CAST_FUNCTORS` in `cast_op.h`); `None`
/// for every other pair, which ignores `Truncate`.
pub fn truncation_bits(src: DataType, dst: DataType) -> Option<u32> {
    use DataType::*;
    // Mantissa widths with the hidden bit: f64 53, f32 24, f16 11, bf16 8.
    Some(match (src, dst) {
        (DtDouble | DtComplex128, DtFloat) | (DtComplex128 | DtDouble, DtComplex64) => 53 - 24,
        (DtDouble | DtComplex128, DtHalf) => 53 - 11,
        (DtFloat | DtComplex64, DtHalf) => 24 - 11,
        (DtFloat, DtBfloat16) => 24 - 8,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_to_int_follows_x86() {
        assert_eq!(f32::NAN.cast_to::<i32>(), i32::MIN);
        assert_eq!(3e9f32.cast_to::<i32>(), i32::MIN);
        assert_eq!((-2.9f32).cast_to::<i32>(), -2);
        assert_eq!(f64::INFINITY.cast_to::<i64>(), i64::MIN);
        assert_eq!(300.0f32.cast_to::<i8>(), 44);
        assert_eq!(f32::NAN.cast_to::<u8>(), 0);
        assert_eq!((-1.0f32).cast_to::<u8>(), 255);
        assert_eq!((-1.0f64).cast_to::<u32>(), u32::MAX);
        assert_eq!(1e19f64.cast_to::<u64>(), 10_000_000_000_000_000_000);
        assert_eq!(f64::NAN.cast_to::<u64>(), 1 << 63);
        assert_eq!((-2147483648.5f64).cast_to::<i32>(), i32::MIN);
        assert_eq!(2147483647.9f64.cast_to::<i32>(), i32::MAX);
    }

    #[test]
    fn other_rules() {
        assert!(f32::NAN.cast_to::<bool>());
        assert!(!Complex64::new(0.0, 1.0).cast_to::<bool>());
        assert_eq!(Complex128::new(2.5, 1.0).cast_to::<f32>(), 2.5);
        assert_eq!(true.cast_to::<Complex64>(), Complex64::new(1.0, 0.0));
        assert_eq!((-1i32).cast_to::<u16>(), 65535);
        assert_eq!(u64::MAX.cast_to::<i8>(), -1);
        assert_eq!(65505.0f32.cast_to::<f16>(), f16::from_f32(65505.0));
        let h = 1.0 + 2f64.powi(-10);
        assert_eq!(h.zero_low_bits(42).cast_to::<f16>(), f16::from_f64(h));
        // 1 + 2^-11 + 2^-20 rounds up to 1 + 2^-10 in half; truncated it is 1.
        let v = 1.0f32 + 2f32.powi(-11) + 2f32.powi(-20);
        assert_eq!(v.cast_to::<f16>(), f16::from_f32(1.0 + 2f32.powi(-10)));
        assert_eq!(v.zero_low_bits(13).cast_to::<f16>(), f16::ONE);
    }
}

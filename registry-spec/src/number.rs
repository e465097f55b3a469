//! Numbers as TensorFlow's text parser reads them (`strings::safe_strtof`,
//! `safe_strtod`, `safe_strto64`): the whole token or nothing, correctly
//! rounded.
//!
//! A floating-point token is, in C's `strtof` grammar, an optional sign and
//! then one of
//! - a decimal number: digits with an optional `.`, at least one digit, an
//!   optional exponent `e`/`E` with an optional sign and at least one digit
//!   (`1.5`, `.5`, `5.`, `1E+05`);
//! - a hexadecimal number: `0x`/`0X`, hex digits with an optional `.`, at
//!   least one digit, an optional binary exponent `p`/`P` (`0x10`, `0x1.8p1`,
//!   `0x.8P-3`);
//! - `inf`, `infinity` or `nan`, in any case (`-nan` keeps its sign bit).
//!
//! Suffixes (`1.5f`), `nan(...)`, digit separators and a second sign are
//! rejected, as TensorFlow 2.21 rejects them. Values round to nearest, ties to
//! even, straight to the target precision (no double rounding through `f64`
//! for `f32`); too large gives infinity, too small gives zero or a denormal.
//!
//! ```
//! use registry_spec::number::{parse_f32, parse_f64};
//!
//! assert_eq!(parse_f32("0x1.8p1"), Some(3.0));
//! assert_eq!(parse_f32("1e39"), Some(f32::INFINITY));
//! assert_eq!(parse_f64("1000000000000000.5"), Some(1000000000000000.5));
//! assert_eq!(parse_f32("1.5f"), None);
//! ```

/// A binary floating-point format: significand bits (with the hidden bit),
/// the smallest and largest normal exponents.
struct Format {
    precision: u32,
    min_exponent: i64,
    max_exponent: i64,
}

const F32: Format = Format {
    precision: 24,
    min_exponent: -126,
    max_exponent: 127,
};

const F64: Format = Format {
    precision: 53,
    min_exponent: -1022,
    max_exponent: 1023,
};

impl Format {
    /// The bits of +infinity: every exponent bit set, mantissa zero.
    fn infinity(&self) -> u64 {
        let biased_max = (self.max_exponent - self.min_exponent + 2) as u64;
        biased_max << (self.precision - 1)
    }
}

/// `text` as an `f32`, by TensorFlow's rules (see the module docs).
pub fn parse_f32(text: &str) -> Option<f32> {
    parse_float(text, &F32, f32::INFINITY, f32::NAN, |bits| {
        f32::from_bits(bits as u32)
    })
}

/// `text` as an `f64`, by TensorFlow's rules (see the module docs).
pub fn parse_f64(text: &str) -> Option<f64> {
    parse_float(text, &F64, f64::INFINITY, f64::NAN, f64::from_bits)
}

/// The sign, then a special word, a hexadecimal or a decimal number.
fn parse_float<F>(
    text: &str,
    format: &Format,
    infinity: F,
    nan: F,
    from_bits: impl Fn(u64) -> F,
) -> Option<F>
where
    F: std::str::FromStr + std::ops::Neg<Output = F>,
{
    let (negative, body) = split_sign(text);
    let magnitude = match special(body) {
        Some(Special::Infinity) => infinity,
        Some(Special::NaN) => nan,
        None => match hex_body(body) {
            Some(hex) => from_bits(hex_bits(hex, format)?),
            None if is_decimal(body) => body.parse::<F>().ok()?,
            None => return None,
        },
    };
    Some(if negative { -magnitude } else { magnitude })
}

/// `text` as a decimal integer: an optional sign and decimal digits, in range
/// (`0x10`, `1e3`, `1.0` are rejected, as TF rejects them).
pub fn parse_int<T: std::str::FromStr>(text: &str) -> Option<T> {
    let digits = text.strip_prefix(['+', '-']).unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse::<T>().ok()
}

fn split_sign(text: &str) -> (bool, &str) {
    match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    }
}

enum Special {
    Infinity,
    NaN,
}

fn special(body: &str) -> Option<Special> {
    if body.eq_ignore_ascii_case("inf") || body.eq_ignore_ascii_case("infinity") {
        Some(Special::Infinity)
    } else if body.eq_ignore_ascii_case("nan") {
        Some(Special::NaN)
    } else {
        None
    }
}

/// digits [`.` digits] [(`e`|`E`) [sign] digits], at least one mantissa digit.
fn is_decimal(body: &str) -> bool {
    let (mantissa, exponent) = match body.find(['e', 'E']) {
        Some(at) => (&body[..at], Some(&body[at + 1..])),
        None => (body, None),
    };
    let Some(exponent_ok) = exponent.map(|e| {
        let digits = e.strip_prefix(['+', '-']).unwrap_or(e);
        !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
    }) else {
        return mantissa_ok(mantissa, |b| b.is_ascii_digit());
    };
    exponent_ok && mantissa_ok(mantissa, |b| b.is_ascii_digit())
}

/// Digits with at most one `.` and at least one digit.
fn mantissa_ok(mantissa: &str, digit: impl Fn(u8) -> bool) -> bool {
    let mut dots = 0;
    let mut digits = 0;
    for b in mantissa.bytes() {
        if b == b'.' {
            dots += 1;
        } else if digit(b) {
            digits += 1;
        } else {
            return false;
        }
    }
    dots <= 1 && digits > 0
}

/// A hexadecimal body split into mantissa and binary exponent, once its
/// grammar is checked.
struct HexBody<'a> {
    mantissa: &'a str,
    exponent: i64,
}

/// `Some` when `body` starts with `0x`; the inner `Option` is `None` when the
/// rest is not a hexadecimal number (so `0xg` is rejected, not decimal).
fn hex_body(body: &str) -> Option<Option<HexBody<'_>>> {
    let rest = body.strip_prefix("0x").or(body.strip_prefix("0X"))?;
    let (mantissa, exponent) = match rest.find(['p', 'P']) {
        Some(at) => (&rest[..at], Some(&rest[at + 1..])),
        None => (rest, None),
    };
    if !mantissa_ok(mantissa, |b| b.is_ascii_hexdigit()) {
        return Some(None);
    }
    let exponent = match exponent {
        None => 0,
        Some(text) => {
            let digits = text.strip_prefix(['+', '-']).unwrap_or(text);
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return Some(None);
            }
            // Saturate: anything beyond ±10^6 is zero or infinity anyway.
            let magnitude = digits
                .bytes()
                .try_fold(0i64, |acc, b| {
                    acc.checked_mul(10)?.checked_add(i64::from(b - b'0'))
                })
                .unwrap_or(i64::MAX)
                .min(1_000_000);
            if text.starts_with('-') {
                -magnitude
            } else {
                magnitude
            }
        }
    };
    Some(Some(HexBody { mantissa, exponent }))
}

/// The bits of the hexadecimal number in `format`, rounded to nearest, ties
/// to even.
fn hex_bits(hex: Option<HexBody<'_>>, format: &Format) -> Option<u64> {
    let hex = hex?;
    // The significant hex digits in a u64 (16 at most), the rest kept as a
    // sticky bit; `exponent` is the binary exponent of the u64's unit.
    let mut significand: u64 = 0;
    let mut sticky = false;
    let mut exponent = hex.exponent;
    let mut kept = 0;
    let mut after_point = false;
    for b in hex.mantissa.bytes() {
        if b == b'.' {
            after_point = true;
            continue;
        }
        let digit = u64::from((b as char).to_digit(16).unwrap_or(0) as u8);
        if kept < 16 {
            if significand != 0 || digit != 0 {
                significand = significand << 4 | digit;
                kept += 1;
            }
            if after_point {
                exponent -= 4;
            }
        } else {
            sticky |= digit != 0;
            if !after_point {
                exponent += 4;
            }
        }
    }
    if significand == 0 {
        return Some(0);
    }
    // Normalise so the leading 1 is bit 63: value = significand * 2^(top - 63).
    let shift = significand.leading_zeros();
    significand <<= shift;
    let top = exponent + 63 - i64::from(shift);
    let bits_kept = if top >= format.min_exponent {
        i64::from(format.precision)
    } else {
        i64::from(format.precision) - (format.min_exponent - top)
    };
    let mantissa_bits = format.precision - 1;
    if top > format.max_exponent {
        return Some(format.infinity());
    }
    if bits_kept < 0 {
        return Some(0);
    }
    // Round the top `bits_kept` bits of the significand.
    let drop = 64 - bits_kept as u32;
    let (mut rounded, remainder, half) = if drop == 64 {
        (0u64, significand, 1u64 << 63)
    } else {
        (
            significand >> drop,
            significand & ((1u64 << drop) - 1),
            1u64 << (drop - 1),
        )
    };
    let tie = remainder == half && !sticky;
    if remainder > half || (remainder == half && sticky) || (tie && rounded & 1 == 1) {
        rounded += 1;
    }
    if top < format.min_exponent {
        // A denormal (or the smallest normal, if rounding carried into it):
        // its bits are the rounded significand itself.
        return Some(rounded);
    }
    let mut biased = (top - format.min_exponent + 1) as u64;
    if rounded >> format.precision != 0 {
        rounded >>= 1;
        biased += 1;
    }
    let bits = biased << mantissa_bits | (rounded & ((1u64 << mantissa_bits) - 1));
    Some(bits.min(format.infinity()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_forms() {
        assert_eq!(parse_f32("1.5"), Some(1.5));
        assert_eq!(parse_f32("+.5"), Some(0.5));
        assert_eq!(parse_f32("5."), Some(5.0));
        assert_eq!(parse_f32("1E+0005"), Some(1e5));
        for bad in [
            "1.5f", "1e", "1e+", ".", "-.", "+-1", "1..5", "1_0", "e5", "1d5", "",
        ] {
            assert_eq!(parse_f32(bad), None, "{bad}");
        }
    }

    #[test]
    fn specials_keep_their_sign() {
        assert_eq!(parse_f32("Infinity"), Some(f32::INFINITY));
        assert_eq!(parse_f32("-INF"), Some(f32::NEG_INFINITY));
        assert_eq!(parse_f32("nan").map(f32::to_bits), Some(0x7fc0_0000));
        assert_eq!(parse_f32("-NaN").map(f32::to_bits), Some(0xffc0_0000));
        assert_eq!(parse_f32("infinit"), None);
        assert_eq!(parse_f32("nan(1)"), None);
    }

    #[test]
    fn decimal_rounds_straight_to_f32() {
        // 1 + 2^-24 and a hair: through f64 it would tie and round down.
        assert_eq!(
            parse_f32("1.0000000596046447755").map(f32::to_bits),
            Some(0x3f80_0001)
        );
        assert_eq!(parse_f32("3.4028235677973366e38"), Some(f32::MAX));
        assert_eq!(
            parse_f32("3.40282356779733661637539395458142568448e38"),
            Some(f32::INFINITY)
        );
        assert_eq!(parse_f32("7e-46"), Some(0.0));
        assert_eq!(parse_f32("7.1e-46").map(f32::to_bits), Some(1));
        assert_eq!(
            parse_f64("1000000000000000.5"),
            Some(1_000_000_000_000_000.5)
        );
    }

    #[test]
    fn hexadecimal() {
        assert_eq!(parse_f32("0x10"), Some(16.0));
        assert_eq!(parse_f32("0X1P3"), Some(8.0));
        assert_eq!(parse_f32("0x.8p1"), Some(1.0));
        assert_eq!(parse_f32("-0x1.8p1"), Some(-3.0));
        assert_eq!(parse_f32("-0x0p0").map(f32::to_bits), Some(0x8000_0000));
        assert_eq!(parse_f32("0x1.fffffep127"), Some(f32::MAX));
        assert_eq!(parse_f32("0x1.ffffffp127"), Some(f32::INFINITY));
        assert_eq!(parse_f32("0x1.fffffefp127"), Some(f32::MAX));
        assert_eq!(parse_f32("0x1p128"), Some(f32::INFINITY));
        assert_eq!(parse_f32("0x1P-126"), Some(f32::MIN_POSITIVE));
        assert_eq!(parse_f32("0x1p-149").map(f32::to_bits), Some(1));
        assert_eq!(parse_f32("0x1p-150"), Some(0.0), "a tie rounds to even");
        assert_eq!(parse_f32("0x1.8p-150").map(f32::to_bits), Some(1));
        assert_eq!(parse_f32("0x1.0000001p-150").map(f32::to_bits), Some(1));
        assert_eq!(parse_f32("0x1.000001p0"), Some(1.0), "a tie rounds to even");
        assert_eq!(
            parse_f32("0x1.000003p0").map(f32::to_bits),
            Some(0x3f80_0002)
        );
        assert_eq!(parse_f32("0x1p-1074"), Some(0.0));
        assert_eq!(parse_f64("0x1p-1074").map(f64::to_bits), Some(1));
        assert_eq!(parse_f64("0x1.fffffffffffff8p1023"), Some(f64::INFINITY));
        assert_eq!(
            parse_f64("0x123456789abcdef0123p-40"),
            Some(0x123456789abcdef0123u128 as f64 / (1u64 << 40) as f64)
        );
        assert_eq!(parse_f32("0x1p99999999999999999999"), Some(f32::INFINITY));
        assert_eq!(parse_f32("0x1p-99999999999999999999"), Some(0.0));
        for bad in [
            "0x", "-0x", "0xg", "0x1p", "0x1.8p", "0x1p3f", "0x-1", "0x1p3p3",
        ] {
            assert_eq!(parse_f32(bad), None, "{bad}");
        }
    }

    #[test]
    fn integers() {
        assert_eq!(parse_int::<i64>("+5"), Some(5));
        assert_eq!(parse_int::<i64>("-9223372036854775808"), Some(i64::MIN));
        assert_eq!(parse_int::<i64>("9223372036854775808"), None);
        for bad in ["0x10", "1e3", "1.0", "--5", "+-5", "5L", "", "-"] {
            assert_eq!(parse_int::<i64>(bad), None, "{bad}");
        }
    }
}

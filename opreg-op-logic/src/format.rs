//! Numbers written as TensorFlow's error messages write them (`absl::StrCat`):
//! integers in full, floating-point values with six significant digits as
//! C's `%g` (`0.1`, `1.23457`, `1e+20`, `1.23457e-07`, `nan`, `-inf`),
//! whatever their type (`half` and `bfloat16` are widened to `float`
//! first).
//!
//! ```
//! use opreg_op_logic::format::float_g6;
//! assert_eq!(float_g6(0.1f32 as f64), "0.1");
//! assert_eq!(float_g6(1.234567891), "1.23457");
//! assert_eq!(float_g6(1e20), "1e+20");
//! assert_eq!(float_g6(f64::NAN), "nan");
//! ```

/// `value` as C's `printf("%g", value)`: six significant digits, fixed
/// notation for exponents in `[-4, 6)`, otherwise `d.ddddde±XX`; trailing
/// zeros (and a trailing point) removed; `nan`, `inf`, `-inf`.
pub fn float_g6(value: f64) -> String {
    const PRECISION: i32 = 6;
    if value.is_nan() {
        return if value.is_sign_negative() {
            "-nan"
        } else {
            "nan"
        }
        .to_owned();
    }
    if value.is_infinite() {
        return if value < 0.0 { "-inf" } else { "inf" }.to_owned();
    }
    if value == 0.0 {
        return if value.is_sign_negative() { "-0" } else { "0" }.to_owned();
    }
    // The value rounded to PRECISION significant digits, and its exponent.
    let sci = format!("{:.*e}", (PRECISION - 1) as usize, value);
    let Some((mantissa, exponent)) = sci.split_once('e') else {
        return sci;
    };
    let exponent: i32 = exponent.parse().unwrap_or(0);
    if (-4..PRECISION).contains(&exponent) {
        let decimals = usize::try_from(PRECISION - 1 - exponent).unwrap_or(0);
        return strip_zeros(format!("{value:.decimals$}"));
    }
    let sign = if exponent < 0 { '-' } else { '+' };
    format!(
        "{}e{sign}{:02}",
        strip_zeros(mantissa.to_owned()),
        exponent.unsigned_abs()
    )
}

/// `text` without the trailing zeros of its fraction (and without the
/// point when nothing is left after it).
fn strip_zeros(text: String) -> String {
    if !text.contains('.') {
        return text;
    }
    text.trim_end_matches('0').trim_end_matches('.').to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_as_printf_g() {
        // Values printed by TF 2.21 in Range's messages.
        assert_eq!(float_g6(1.5), "1.5");
        assert_eq!(float_g6(f64::from(0.1f32)), "0.1");
        assert_eq!(float_g6(0.0999755859375), "0.0999756");
        assert_eq!(float_g6(0.100097656), "0.100098");
        assert_eq!(float_g6(f64::from(1.234_567_9e-7_f32)), "1.23457e-07");
        assert_eq!(float_g6(1e-7), "1e-07");
        assert_eq!(float_g6(f64::from(1e20f32)), "1e+20");
        assert_eq!(float_g6(0.0), "0");
        assert_eq!(float_g6(3.0), "3");
        assert_eq!(float_g6(-2.5), "-2.5");
        // Boundaries of fixed notation, and rounding to 6 digits.
        assert_eq!(float_g6(123456.0), "123456");
        assert_eq!(float_g6(1234567.0), "1.23457e+06");
        assert_eq!(float_g6(999999.5), "1e+06");
        assert_eq!(float_g6(0.0001), "0.0001");
        assert_eq!(float_g6(0.00001234), "1.234e-05");
        assert_eq!(float_g6(1e100), "1e+100");
        assert_eq!(float_g6(f64::INFINITY), "inf");
        assert_eq!(float_g6(f64::NEG_INFINITY), "-inf");
        assert_eq!(float_g6(-0.0), "-0");
    }
}

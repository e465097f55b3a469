//! `Range`'s checks and size, as TF's kernel (`RangeOp`) and TF's shape
//! function compute them: they differ (the kernel checks `delta != 0`
//! first, the shape function last; the kernel rejects a NaN bound, the
//! shape function lets it through), so each has its function here, shared
//! by the shape function, the CPU kernel and a GPU kernel.
//!
//! Sizes are computed as TF does: for integers `⌈|limit - start| / |delta|⌉`
//! exactly (no overflow, whatever the type), for floating-point types
//! `⌈|(limit - start) / delta|⌉` in the type itself (`half` and `bfloat16`
//! round every step), and a size above `i64::MAX` is an error. Element `i`
//! is `start + T(i) * delta` in the type ([`RangeElement::element`]), not
//! an accumulated sum: TF 2.21's `range(2.0, -1.0, -0.7)` has
//! `-0.09999999999999964` (`2 + 3 * -0.7`), not `-0.09999999999999987`.
//!
//! ```
//! use opreg_op_logic::range::{kernel_size, shape_fn_size};
//! assert_eq!(kernel_size(1i32, 10, 3).unwrap(), 3);
//! assert_eq!(kernel_size(0.1f32, 1.0000001, 0.3).unwrap(), 4);
//! assert_eq!(shape_fn_size(5i64, 1, -2).unwrap(), Some(2));
//! assert_eq!(
//!     kernel_size(1.5f64, 0.1, 1.0).unwrap_err().to_string(),
//!     "Requires start <= limit when delta > 0: 1.5/0.1"
//! );
//! ```

use registry_core::kernel::KernelError;
use registry_core::tensor::{TensorElement, bf16, f16};

use crate::format::float_g6;

/// A `Range` size as TF computes it, before it is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RangeSize {
    /// A size that fits `i64`.
    Size(i64),
    /// A size above `i64::MAX` (infinite included).
    TooLarge,
    /// A NaN size (from NaN inputs, or `inf / inf`).
    NaN,
}

/// A type `Range` can count in: TF's `Tidx` types.
pub trait RangeElement: TensorElement + PartialOrd {
    /// Zero.
    const ZERO: Self;
    /// `⌈|limit - start| / |delta|⌉` as TF computes it: exact for integers,
    /// in the type itself for floating-point types.
    fn size(start: Self, limit: Self, delta: Self) -> RangeSize;
    /// The value as TF writes it in messages.
    fn display(self) -> String;
    /// Element `index` of the range: `start + T(index) * delta` in the
    /// type, as TF's CPU kernel computes each element (integers wrap;
    /// `T(index)` rounds for floating-point types, through `f32` for
    /// `half` and `bfloat16` as Eigen converts).
    fn element(start: Self, delta: Self, index: usize) -> Self;
}

/// `⌈range / delta⌉` of exact magnitudes.
fn int_size(range: u128, delta: u128) -> RangeSize {
    let size = range.div_ceil(delta.max(1));
    i64::try_from(size).map_or(RangeSize::TooLarge, RangeSize::Size)
}

macro_rules! int_range {
    ($($t:ty),*) => {$(
        impl RangeElement for $t {
            const ZERO: Self = 0;
            fn size(start: Self, limit: Self, delta: Self) -> RangeSize {
                let range = (i128::from(limit) - i128::from(start)).unsigned_abs();
                int_size(range, i128::from(delta).unsigned_abs())
            }
            fn display(self) -> String {
                self.to_string()
            }
            #[allow(clippy::cast_possible_truncation, clippy::cast_possible_wrap)]
            fn element(start: Self, delta: Self, index: usize) -> Self {
                // C++'s static_cast<T>(int64): modular.
                start.wrapping_add((index as $t).wrapping_mul(delta))
            }
        }
    )*};
}

int_range!(i8, i16, i32, i64, u16, u32, u64);

/// A floating-point size (already `⌈·⌉`, non-negative) as `i64`, when it is
/// below 2^63 (TF compares it with `i64::MAX` in the float type, where that
/// is 2^63; 2^63 itself would overflow the cast, so it is too large here).
fn float_size(size: f64) -> RangeSize {
    // 2^63, exactly representable in every float type.
    const LIMIT: f64 = 9_223_372_036_854_775_808.0;
    if size.is_nan() {
        RangeSize::NaN
    } else if size >= LIMIT {
        RangeSize::TooLarge
    } else {
        // Non-negative, integral and below 2^63: exact.
        RangeSize::Size(size as i64)
    }
}

macro_rules! float_range {
    ($($t:ty => $zero:expr, $from_index:expr);*) => {$(
        impl RangeElement for $t {
            const ZERO: Self = $zero;
            fn size(start: Self, limit: Self, delta: Self) -> RangeSize {
                // In the type: each operation rounds to it, as Eigen's do.
                let quotient: Self = (limit - start) / delta;
                let magnitude = f64::from(quotient).abs();
                float_size(f64::from(Self::from_f64_rounded(magnitude.ceil())))
            }
            fn display(self) -> String {
                float_g6(f64::from(self))
            }
            fn element(start: Self, delta: Self, index: usize) -> Self {
                let convert: fn(usize) -> Self = $from_index;
                start + convert(index) * delta
            }
        }
    )*};
}

/// Rounding an `f64` to a floating-point type (exact for the integers
/// `⌈·⌉` produces from a value of that type).
trait FromF64Rounded {
    fn from_f64_rounded(v: f64) -> Self;
}

impl FromF64Rounded for f32 {
    fn from_f64_rounded(v: f64) -> Self {
        v as f32
    }
}
impl FromF64Rounded for f64 {
    fn from_f64_rounded(v: f64) -> Self {
        v
    }
}
impl FromF64Rounded for f16 {
    fn from_f64_rounded(v: f64) -> Self {
        f16::from_f64(v)
    }
}
impl FromF64Rounded for bf16 {
    fn from_f64_rounded(v: f64) -> Self {
        bf16::from_f64(v)
    }
}

float_range!(
    f32 => 0.0, |i| i as f32;
    f64 => 0.0, |i| i as f64;
    f16 => f16::ZERO, |i| f16::from_f32(i as f32);
    bf16 => bf16::ZERO, |i| bf16::from_f32(i as f32)
);

/// The message for a size over `i64::MAX`.
fn too_large() -> String {
    format!("Requires ((limit - start) / delta) <= {}", i64::MAX)
}

/// The number of elements of `Range(start, limit, delta)` with the checks
/// and messages of TF's CPU kernel: `delta != 0` first, then the direction
/// (`start <= limit` for a positive delta, `start >= limit` otherwise; a
/// NaN fails them), then the size.
pub fn kernel_size<T: RangeElement>(start: T, limit: T, delta: T) -> Result<usize, KernelError> {
    if delta == T::ZERO {
        return Err(KernelError::invalid_argument(format!(
            "Requires delta != 0: {}",
            delta.display()
        )));
    }
    // Negated comparisons: a NaN bound fails them, as in TF.
    if delta > T::ZERO {
        if start.partial_cmp(&limit).is_none_or(|o| o.is_gt()) {
            return Err(KernelError::invalid_argument(format!(
                "Requires start <= limit when delta > 0: {}/{}",
                start.display(),
                limit.display()
            )));
        }
    } else if start.partial_cmp(&limit).is_none_or(|o| o.is_lt()) {
        return Err(KernelError::invalid_argument(format!(
            "Requires start >= limit when delta < 0: {}/{}",
            start.display(),
            limit.display()
        )));
    }
    match T::size(start, limit, delta) {
        RangeSize::Size(size) => {
            usize::try_from(size).map_err(|_| KernelError::invalid_argument(too_large()))
        }
        // A NaN size compares false with the limit too.
        RangeSize::TooLarge | RangeSize::NaN => Err(KernelError::invalid_argument(too_large())),
    }
}

/// The size of `Range(start, limit, delta)` as TF's shape function computes
/// it: the direction checks first (they pass when a bound is NaN), then
/// `delta != 0` ("Requires delta != 0", without the value), then the size.
/// `Ok(None)` where TF's shape function produces a meaningless (negative)
/// dimension: a NaN size.
pub fn shape_fn_size<T: RangeElement>(start: T, limit: T, delta: T) -> Result<Option<i64>, String> {
    if start > limit && delta > T::ZERO {
        return Err(format!(
            "Requires start <= limit when delta > 0: {}/{}",
            start.display(),
            limit.display()
        ));
    }
    if start < limit && delta < T::ZERO {
        return Err(format!(
            "Requires start >= limit when delta < 0: {}/{}",
            start.display(),
            limit.display()
        ));
    }
    if delta == T::ZERO {
        return Err("Requires delta != 0".to_owned());
    }
    match T::size(start, limit, delta) {
        RangeSize::Size(size) => Ok(Some(size)),
        RangeSize::TooLarge => Err(too_large()),
        // NaN passes TF's `size > i64::MAX` check and is cast to a
        // negative dimension: unknown here.
        RangeSize::NaN => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kerr<T: RangeElement>(s: T, l: T, d: T) -> String {
        kernel_size(s, l, d).unwrap_err().to_string()
    }

    #[test]
    fn kernel_sizes_and_messages_match_tf() {
        // Values and messages from TF 2.21's CPU kernel.
        assert_eq!(kernel_size(i32::MIN, i32::MAX, 1 << 30).unwrap(), 4);
        assert_eq!(kernel_size(i64::MIN, i64::MAX, 1 << 62).unwrap(), 4);
        assert_eq!(kernel_size(i64::MIN, i64::MAX, i64::MAX).unwrap(), 3);
        assert_eq!(
            kerr(i64::MIN, i64::MAX, 1),
            "Requires ((limit - start) / delta) <= 9223372036854775807"
        );
        assert_eq!(kernel_size(2.0f64, -1.0, -0.7).unwrap(), 5);
        assert_eq!(
            kernel_size(f16::from_f32(1.0), f16::from_f32(2.0), f16::from_f32(0.1)).unwrap(),
            10
        );
        assert_eq!(kernel_size(3i32, 3, 1).unwrap(), 0);
        assert_eq!(kerr(1i32, 3, 0), "Requires delta != 0: 0");
        assert_eq!(kerr(1.0f32, 1.0, 0.0), "Requires delta != 0: 0");
        assert_eq!(
            kerr(5i64, 1, 1),
            "Requires start <= limit when delta > 0: 5/1"
        );
        assert_eq!(
            kerr(1i32, 3, -1),
            "Requires start >= limit when delta < 0: 1/3"
        );
        assert_eq!(
            kerr(f16::from_f32(1.5), f16::from_f32(0.1), f16::ONE),
            "Requires start <= limit when delta > 0: 1.5/0.0999756"
        );
        assert_eq!(
            kerr(bf16::from_f32(1.5), bf16::from_f32(0.1), bf16::ONE),
            "Requires start <= limit when delta > 0: 1.5/0.100098"
        );
        assert_eq!(
            kerr(1.234_567_9e-7_f32, 0.0, 1.0),
            "Requires start <= limit when delta > 0: 1.23457e-07/0"
        );
        assert_eq!(
            kerr(f32::NAN, 1.0, 1.0),
            "Requires start <= limit when delta > 0: nan/1"
        );
        assert_eq!(
            kerr(0.0f32, f32::NAN, 1.0),
            "Requires start <= limit when delta > 0: 0/nan"
        );
        assert_eq!(
            kerr(0.0f32, f32::INFINITY, 1.0),
            "Requires ((limit - start) / delta) <= 9223372036854775807"
        );
        assert_eq!(
            kerr(0.0f32, 1e19, 1.0),
            "Requires ((limit - start) / delta) <= 9223372036854775807"
        );
    }

    #[test]
    fn elements_are_start_plus_index_times_delta() {
        // TF 2.21's values.
        let e: Vec<f64> = (0..5).map(|i| f64::element(2.0, -0.7, i)).collect();
        assert_eq!(
            e,
            [
                2.0,
                1.3,
                0.6000000000000001,
                -0.09999999999999964,
                -0.7999999999999998
            ]
        );
        assert_eq!(f32::element(0.1, 0.3, 2), 0.700_000_05);
        assert_eq!(
            f16::element(f16::ZERO, f16::ONE, 2049),
            f16::from_f32(2048.0)
        );
        assert_eq!(
            f16::element(f16::ONE, f16::from_f32(0.1), 2),
            f16::from_f32(1.200_195_3)
        );
        assert_eq!(
            bf16::element(bf16::ONE, bf16::ONE, 258),
            bf16::from_f32(260.0)
        );
        assert_eq!(i32::element(i32::MIN, 1 << 30, 3), 1 << 30);
        assert_eq!(i64::element(i64::MIN, i64::MAX, 2), i64::MAX - 1);
        assert_eq!(u16::element(5, 3, 2), 11);
    }

    #[test]
    fn shape_fn_sizes_and_messages_match_tf() {
        // Values and messages from TF 2.21's shape function.
        assert_eq!(shape_fn_size(1i8, 10, 3), Ok(Some(3)));
        assert_eq!(shape_fn_size(-100i8, 100, 1), Ok(Some(200)));
        assert_eq!(
            shape_fn_size(i32::MIN, i32::MAX, 1),
            Ok(Some(4_294_967_295))
        );
        assert_eq!(shape_fn_size(0u32, u32::MAX, 7), Ok(Some(613_566_757)));
        assert_eq!(shape_fn_size(0u64, u64::MAX, 1 << 62), Ok(Some(4)));
        assert_eq!(
            shape_fn_size(0u64, u64::MAX, 1),
            Err("Requires ((limit - start) / delta) <= 9223372036854775807".to_owned())
        );
        assert_eq!(shape_fn_size(3i32, -5, -3), Ok(Some(3)));
        assert_eq!(shape_fn_size(0.1f32, 1.000_000_1, 0.3), Ok(Some(4)));
        assert_eq!(shape_fn_size(3.0f32, 1.0, -0.5), Ok(Some(4)));
        assert_eq!(
            shape_fn_size(5u16, 1, 1),
            Err("Requires start <= limit when delta > 0: 5/1".to_owned())
        );
        assert_eq!(
            shape_fn_size(u64::MAX, 0, 1),
            Err("Requires start <= limit when delta > 0: 18446744073709551615/0".to_owned())
        );
        assert_eq!(
            shape_fn_size(1e-7f64, 0.0, 1.0),
            Err("Requires start <= limit when delta > 0: 1e-07/0".to_owned())
        );
        // delta == 0 is checked after the direction, without the value.
        assert_eq!(
            shape_fn_size(1i32, 3, 0),
            Err("Requires delta != 0".to_owned())
        );
        assert_eq!(
            shape_fn_size(1.0f64, 1.0, 0.0),
            Err("Requires delta != 0".to_owned())
        );
        assert_eq!(
            shape_fn_size(0.0f32, 1e20, 1e-10),
            Err("Requires ((limit - start) / delta) <= 9223372036854775807".to_owned())
        );
        // A NaN bound passes the checks; TF then makes a negative dimension.
        assert_eq!(shape_fn_size(0.0f32, f32::NAN, 1.0), Ok(None));
    }
}

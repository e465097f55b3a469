//! [`Dim`]: one dimension of a [`Shape`](super::Shape), known or unknown, and
//! TensorFlow's dimension arithmetic (`InferenceContext::Add`, `Multiply`,
//! `Subtract`, `Divide`, `Merge`).

use std::fmt;

use super::ShapeError;

/// One dimension of a shape: a known size (`>= 0`) or unknown (TF's
/// `DimensionHandle`; `-1` in a `TensorShapeProto`).
///
/// Arithmetic propagates unknowns as TensorFlow does: `x + 0` and `x * 1`
/// are `x` even when `x` is unknown, `x * 0` is 0, and otherwise a result
/// with an unknown operand is unknown.
///
/// ```
/// use registry_core::shape::Dim;
///
/// let four = Dim::new(4);
/// assert_eq!(four.value(), Some(4));
/// assert_eq!(four.add(3).unwrap(), Dim::new(7));
/// assert_eq!(Dim::UNKNOWN.add(0).unwrap(), Dim::UNKNOWN);
/// assert_eq!(Dim::UNKNOWN.multiply(0).unwrap(), Dim::new(0));
/// assert_eq!(Dim::new(7).divide(2, false).unwrap(), Dim::new(3));
/// assert!(Dim::new(7).divide(2, true).is_err());
/// assert_eq!(Dim::new(2).to_string(), "2");
/// assert_eq!(Dim::UNKNOWN.to_string(), "?");
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Dim(i64);

impl Dim {
    /// The unknown dimension.
    pub const UNKNOWN: Dim = Dim(-1);

    /// A dimension of size `value`; a negative value (TF writes -1) means
    /// unknown, as in a `TensorShapeProto`.
    pub const fn new(value: i64) -> Dim {
        if value < 0 { Dim::UNKNOWN } else { Dim(value) }
    }

    /// The unknown dimension (same as [`Dim::UNKNOWN`]).
    pub const fn unknown() -> Dim {
        Dim::UNKNOWN
    }

    /// The size, if known.
    pub const fn value(self) -> Option<i64> {
        if self.0 < 0 { None } else { Some(self.0) }
    }

    /// Whether the size is known.
    pub const fn is_known(self) -> bool {
        self.0 >= 0
    }

    /// The size as TensorFlow stores it: the value, or -1 when unknown.
    pub const fn to_i64(self) -> i64 {
        if self.0 < 0 { -1 } else { self.0 }
    }

    /// Whether the two dimensions may be equal: either is unknown, or both
    /// have the same size.
    pub fn is_compatible(self, other: impl Into<Dim>) -> bool {
        let other = other.into();
        match (self.value(), other.value()) {
            (Some(a), Some(b)) => a == b,
            _ => true,
        }
    }

    /// The more specific of two compatible dimensions (TF's `Merge`): the
    /// known one if either is known. Two different known sizes are a
    /// [`ShapeError::DimMismatch`].
    pub fn merge(self, other: impl Into<Dim>) -> Result<Dim, ShapeError> {
        let other = other.into();
        match (self.value(), other.value()) {
            (None, _) => Ok(other),
            (_, None) => Ok(self),
            (Some(a), Some(b)) if a == b => Ok(self),
            (Some(a), Some(b)) => Err(ShapeError::DimMismatch { a, b }),
        }
    }

    /// `self + other` (TF's `Add`): `x + 0` is `x`; unknown if either is
    /// unknown; an overflow is a [`ShapeError::DimOverflow`].
    #[allow(clippy::should_implement_trait)]
    pub fn add(self, other: impl Into<Dim>) -> Result<Dim, ShapeError> {
        let other = other.into();
        match (self.value(), other.value()) {
            (_, Some(0)) => Ok(self),
            (Some(0), _) => Ok(other),
            (Some(a), Some(b)) => {
                a.checked_add(b)
                    .map(Dim)
                    .ok_or(ShapeError::DimOverflow { a, op: '+', b })
            }
            _ => Ok(Dim::UNKNOWN),
        }
    }

    /// `self * other` (TF's `Multiply`): `x * 1` is `x`, `x * 0` is 0 even
    /// for an unknown `x`; otherwise unknown if either is unknown; an
    /// overflow is a [`ShapeError::DimOverflow`].
    pub fn multiply(self, other: impl Into<Dim>) -> Result<Dim, ShapeError> {
        let other = other.into();
        match (self.value(), other.value()) {
            (Some(1), _) => Ok(other),
            (_, Some(1)) => Ok(self),
            (Some(0), _) | (_, Some(0)) => Ok(Dim(0)),
            (Some(a), Some(b)) => {
                a.checked_mul(b)
                    .map(Dim)
                    .ok_or(ShapeError::DimOverflow { a, op: '*', b })
            }
            _ => Ok(Dim::UNKNOWN),
        }
    }

    /// `self - other` (TF's `Subtract`): `x - 0` is `x`; unknown if either
    /// is unknown; a negative result is a [`ShapeError::NegativeDim`].
    pub fn subtract(self, other: impl Into<Dim>) -> Result<Dim, ShapeError> {
        let other = other.into();
        match (self.value(), other.value()) {
            (_, Some(0)) => Ok(self),
            (Some(a), Some(b)) if a < b => Err(ShapeError::NegativeDim { a, b }),
            (Some(a), Some(b)) => Ok(Dim(a - b)),
            _ => Ok(Dim::UNKNOWN),
        }
    }

    /// `self / divisor` rounded down (TF's `Divide`): `x / 1` is `x`;
    /// unknown if either is unknown; otherwise the divisor must be positive
    /// ([`ShapeError::NonPositiveDivisor`]). With `evenly_divisible`, a remainder is
    /// a [`ShapeError::NotEvenlyDivisible`].
    pub fn divide(
        self,
        divisor: impl Into<Dim>,
        evenly_divisible: bool,
    ) -> Result<Dim, ShapeError> {
        let divisor = divisor.into();
        match (self.value(), divisor.value()) {
            (_, Some(1)) => Ok(self),
            (Some(_), Some(d)) if d <= 0 => Err(ShapeError::NonPositiveDivisor { divisor: d }),
            (Some(a), Some(d)) => {
                if evenly_divisible && a % d != 0 {
                    Err(ShapeError::NotEvenlyDivisible {
                        dividend: a,
                        divisor: d,
                    })
                } else {
                    Ok(Dim(a / d))
                }
            }
            _ => Ok(Dim::UNKNOWN),
        }
    }
}

impl From<i64> for Dim {
    /// [`Dim::new`]: negative values are unknown.
    fn from(value: i64) -> Dim {
        Dim::new(value)
    }
}

impl From<i32> for Dim {
    /// [`Dim::new`]: negative values are unknown.
    fn from(value: i32) -> Dim {
        Dim::new(i64::from(value))
    }
}

impl From<usize> for Dim {
    /// A known dimension (saturating at `i64::MAX`).
    fn from(value: usize) -> Dim {
        Dim::new(i64::try_from(value).unwrap_or(i64::MAX))
    }
}

impl From<Option<i64>> for Dim {
    /// `None` is unknown; `Some(v)` is [`Dim::new`]`(v)`.
    fn from(value: Option<i64>) -> Dim {
        value.map_or(Dim::UNKNOWN, Dim::new)
    }
}

impl fmt::Display for Dim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.value() {
            Some(v) => write!(f, "{v}"),
            None => f.write_str("?"),
        }
    }
}

impl fmt::Debug for Dim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

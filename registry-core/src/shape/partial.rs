//! [`Shape`]: a partially known tensor shape (unknown rank, or a known rank
//! with known or unknown dimensions) and TensorFlow's shape algebra on it
//! (`InferenceContext::Merge`, `WithRank`, `Concatenate`, `Subshape`, ...).

use std::fmt;

use opreg_proto::TensorShapeProto;
use opreg_proto::tensor_shape_proto::Dim as ProtoDim;

use super::{Dim, ShapeError};
use crate::attr::{AttrValueError, FromAttrValue};
use crate::tensor::TensorShape;

/// A partially known shape (TF's `ShapeHandle` / `PartialTensorShape`):
/// either the rank is unknown, or the rank is known and each [`Dim`] is
/// known or unknown.
///
/// Displayed as TensorFlow does: `?` for an unknown rank, `[2,?,3]`
/// otherwise (`[]` for a scalar).
///
/// ```
/// use registry_core::shape::{Dim, Shape};
///
/// let a = Shape::from([2, -1, 3]);
/// assert_eq!(a.to_string(), "[2,?,3]");
/// assert_eq!(a.rank(), Some(3));
/// assert!(!a.is_fully_defined());
///
/// let merged = a.merge(&Shape::from([-1, 5, 3])).unwrap();
/// assert_eq!(merged, Shape::from([2, 5, 3]));
/// assert_eq!(merged.num_elements(), Some(30));
///
/// assert!(a.with_rank(2).is_err());
/// assert_eq!(Shape::unknown().with_rank(2).unwrap().to_string(), "[?,?]");
/// assert_eq!(Shape::unknown().to_string(), "?");
/// ```
#[derive(Clone, PartialEq, Eq, Hash, Default)]
pub struct Shape {
    /// `None`: unknown rank.
    dims: Option<Vec<Dim>>,
}

impl Shape {
    /// The largest rank a shape may be given from a value (TF's
    /// `TensorShape::MaxDimensions()`): [`with_rank`](Self::with_rank)
    /// refuses larger ones, so a malformed input cannot make inference
    /// allocate without bound.
    pub const MAX_RANK: usize = 254;

    /// The shape of unknown rank (TF's `UnknownShape`).
    pub const fn unknown() -> Shape {
        Shape { dims: None }
    }

    /// A shape of known rank with these dimensions (TF's `MakeShape`).
    pub fn new(dims: impl IntoIterator<Item = Dim>) -> Shape {
        Shape {
            dims: Some(dims.into_iter().collect()),
        }
    }

    /// A shape from TensorFlow's dimension sizes, where a negative size
    /// (-1) is an unknown dimension.
    pub fn from_dims(dims: &[i64]) -> Shape {
        Shape::new(dims.iter().map(|&d| Dim::new(d)))
    }

    /// The shape of a scalar: rank 0.
    pub const fn scalar() -> Shape {
        Shape {
            dims: Some(Vec::new()),
        }
    }

    /// A rank-1 shape of length `dim`.
    pub fn vector(dim: impl Into<Dim>) -> Shape {
        Shape {
            dims: Some(vec![dim.into()]),
        }
    }

    /// A rank-2 shape.
    pub fn matrix(rows: impl Into<Dim>, cols: impl Into<Dim>) -> Shape {
        Shape {
            dims: Some(vec![rows.into(), cols.into()]),
        }
    }

    /// A shape of rank `rank` whose dimensions are all unknown (TF's
    /// `UnknownShapeOfRank`). For a rank read from untrusted data, use
    /// `Shape::unknown().with_rank(rank)`, which checks
    /// [`MAX_RANK`](Self::MAX_RANK).
    pub fn unknown_of_rank(rank: usize) -> Shape {
        Shape {
            dims: Some(vec![Dim::UNKNOWN; rank]),
        }
    }

    /// The rank, if known.
    pub fn rank(&self) -> Option<usize> {
        self.dims.as_ref().map(Vec::len)
    }

    /// Whether the rank is known.
    pub fn is_rank_known(&self) -> bool {
        self.dims.is_some()
    }

    /// The dimensions, if the rank is known.
    pub fn dims(&self) -> Option<&[Dim]> {
        self.dims.as_deref()
    }

    /// Dimension `index`, counted from the end when negative (TF's `Dim`).
    /// Any dimension of a shape of unknown rank is unknown; an index out of
    /// range of a known rank is a [`ShapeError::DimIndex`].
    pub fn dim(&self, index: i64) -> Result<Dim, ShapeError> {
        let Some(dims) = &self.dims else {
            return Ok(Dim::UNKNOWN);
        };
        normalize_index(index, dims.len())
            .and_then(|i| dims.get(i).copied())
            .ok_or(ShapeError::DimIndex {
                index,
                rank: dims.len(),
            })
    }

    /// Whether the rank and every dimension are known.
    pub fn is_fully_defined(&self) -> bool {
        self.dims
            .as_ref()
            .is_some_and(|dims| dims.iter().all(|d| d.is_known()))
    }

    /// The dimension sizes, if the shape is fully defined.
    pub fn to_known_dims(&self) -> Option<Vec<i64>> {
        self.dims.as_ref()?.iter().map(|d| d.value()).collect()
    }

    /// The number of elements (TF's `NumElements`), if the shape is fully
    /// defined and the count fits an `i64`.
    pub fn num_elements(&self) -> Option<i64> {
        self.dims
            .as_ref()?
            .iter()
            .try_fold(1i64, |acc, d| acc.checked_mul(d.value()?))
    }

    /// Whether the two shapes may describe the same tensor: either rank is
    /// unknown, or the ranks are equal and every pair of dimensions is
    /// compatible.
    pub fn is_compatible(&self, other: &Shape) -> bool {
        match (&self.dims, &other.dims) {
            (Some(a), Some(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.is_compatible(*y))
            }
            _ => true,
        }
    }

    /// The most specific shape compatible with both (TF's `Merge`): an
    /// unknown rank takes the other's; known dimensions win over unknown
    /// ones. Different ranks are a [`ShapeError::RankMismatch`], different
    /// known sizes a [`ShapeError::ShapeMismatch`].
    pub fn merge(&self, other: &Shape) -> Result<Shape, ShapeError> {
        let (a, b) = match (&self.dims, &other.dims) {
            (None, _) => return Ok(other.clone()),
            (_, None) => return Ok(self.clone()),
            (Some(a), Some(b)) => (a, b),
        };
        if a.len() != b.len() {
            return Err(ShapeError::RankMismatch {
                a: a.len(),
                b: b.len(),
            });
        }
        let mut dims = Vec::with_capacity(a.len());
        for (index, (x, y)) in a.iter().zip(b).enumerate() {
            match x.merge(*y) {
                Ok(d) => dims.push(d),
                Err(_) => {
                    return Err(ShapeError::ShapeMismatch {
                        index,
                        a: x.to_i64(),
                        b: y.to_i64(),
                        shape_a: self.clone(),
                        shape_b: other.clone(),
                    });
                }
            }
        }
        Ok(Shape { dims: Some(dims) })
    }

    /// This shape, constrained to rank `rank` (TF's `WithRank`): an
    /// unknown rank becomes `rank` unknown dimensions; another known rank is
    /// a [`ShapeError::Rank`], a rank above [`MAX_RANK`](Self::MAX_RANK) a
    /// [`ShapeError::RankTooLarge`].
    pub fn with_rank(&self, rank: usize) -> Result<Shape, ShapeError> {
        match self.rank() {
            None if rank > Shape::MAX_RANK => Err(ShapeError::RankTooLarge { rank }),
            None => Ok(Shape::unknown_of_rank(rank)),
            Some(r) if r == rank => Ok(self.clone()),
            Some(found) => Err(ShapeError::Rank {
                expected: rank,
                found,
            }),
        }
    }

    /// This shape, checked to have rank `>= min` (TF's `WithRankAtLeast`);
    /// an unknown rank stays unknown.
    pub fn with_rank_at_least(&self, min: usize) -> Result<Shape, ShapeError> {
        match self.rank() {
            Some(found) if found < min => Err(ShapeError::RankAtLeast { min, found }),
            _ => Ok(self.clone()),
        }
    }

    /// This shape, checked to have rank `<= max` (TF's `WithRankAtMost`);
    /// an unknown rank stays unknown.
    pub fn with_rank_at_most(&self, max: usize) -> Result<Shape, ShapeError> {
        match self.rank() {
            Some(found) if found > max => Err(ShapeError::RankAtMost { max, found }),
            _ => Ok(self.clone()),
        }
    }

    /// The dimensions of `self` followed by those of `other` (TF's
    /// `Concatenate`); unknown if either rank is unknown.
    pub fn concatenate(&self, other: &Shape) -> Shape {
        match (&self.dims, &other.dims) {
            (Some(a), Some(b)) => Shape::new(a.iter().chain(b).copied()),
            _ => Shape::unknown(),
        }
    }

    /// Dimensions `start..end` (TF's `Subshape`). Negative bounds count
    /// from the end, bounds past the rank are clamped to it, and
    /// `i64::MAX` as `end` means "to the end". A shape of unknown rank gives
    /// an unknown shape (or itself, for the whole range). A start before 0
    /// or after the end is a [`ShapeError::Subshape`].
    pub fn subshape(&self, start: i64, end: i64) -> Result<Shape, ShapeError> {
        let Some(dims) = &self.dims else {
            return Ok(Shape::unknown());
        };
        let rank = i64::try_from(dims.len()).unwrap_or(i64::MAX);
        let error = || ShapeError::Subshape {
            start,
            end,
            rank: dims.len(),
        };
        let mut s = start.min(rank);
        let mut e = end.min(rank);
        if s < 0 {
            s += rank;
            if s < 0 {
                return Err(error());
            }
        }
        if e < 0 {
            e += rank;
            if e < 0 {
                return Err(error());
            }
        }
        if s > e {
            return Err(error());
        }
        // 0 <= s <= e <= rank here.
        let range =
            usize::try_from(s).map_err(|_| error())?..usize::try_from(e).map_err(|_| error())?;
        dims.get(range)
            .map(|d| Shape::new(d.iter().copied()))
            .ok_or_else(error)
    }

    /// Dimensions `start..` ([`subshape`](Self::subshape) to the end).
    pub fn subshape_from(&self, start: i64) -> Result<Shape, ShapeError> {
        self.subshape(start, i64::MAX)
    }

    /// This shape with dimension `index` (negative: from the end) replaced
    /// by `dim` (TF's `ReplaceDim`). Unknown rank stays unknown; an index
    /// out of range is a [`ShapeError::DimIndex`].
    pub fn replace_dim(&self, index: i64, dim: impl Into<Dim>) -> Result<Shape, ShapeError> {
        let Some(dims) = &self.dims else {
            return Ok(Shape::unknown());
        };
        let i = normalize_index(index, dims.len())
            .filter(|&i| i < dims.len())
            .ok_or(ShapeError::DimIndex {
                index,
                rank: dims.len(),
            })?;
        let mut dims = dims.clone();
        dims[i] = dim.into();
        Ok(Shape { dims: Some(dims) })
    }

    /// The shape `self` and `other` broadcast to (TF's
    /// `BroadcastBinaryOpOutputShapeFnHelper` with
    /// `incompatible_shape_error`): unknown if either rank is unknown;
    /// dimensions aligned from the end, a missing or size-1 dimension takes
    /// the other's, and two different known sizes are a
    /// [`ShapeError::Broadcast`].
    ///
    /// ```
    /// use registry_core::shape::Shape;
    ///
    /// let out = Shape::from([4, 1]).broadcast(&Shape::from([-1, 5])).unwrap();
    /// assert_eq!(out.to_string(), "[4,5]");
    /// assert!(Shape::from([2]).broadcast(&Shape::from([3])).is_err());
    /// ```
    pub fn broadcast(&self, other: &Shape) -> Result<Shape, ShapeError> {
        self.broadcast_with(other, true)
    }

    /// [`broadcast`](Self::broadcast) with TF's `incompatible_shape_error`
    /// flag. When it is false (`Equal`'s attr of that name), shapes that
    /// cannot broadcast give a scalar (the op then returns `false`) instead
    /// of an error, and a known size > 1 against an unknown one gives an
    /// unknown shape.
    pub(crate) fn broadcast_with(
        &self,
        other: &Shape,
        incompatible_shape_error: bool,
    ) -> Result<Shape, ShapeError> {
        let (Some(x), Some(y)) = (&self.dims, &other.dims) else {
            return Ok(Shape::unknown());
        };
        let rank = x.len().max(y.len());
        let mut dims = Vec::with_capacity(rank);
        for i in 0..rank {
            // Leading dimensions missing from the shorter shape act as 1.
            let pick = |d: &[Dim]| {
                (i + d.len())
                    .checked_sub(rank)
                    .and_then(|j| d.get(j).copied())
                    .unwrap_or(Dim::new(1))
            };
            let (dx, dy) = (pick(x), pick(y));
            let dim = match (dx.value(), dy.value()) {
                (Some(a), Some(b)) => {
                    if b == 1 {
                        dx
                    } else if a == 1 || a == b {
                        dy
                    } else if incompatible_shape_error {
                        return Err(ShapeError::Broadcast {
                            index: i,
                            a,
                            b,
                            shape_a: self.clone(),
                            shape_b: other.clone(),
                        });
                    } else {
                        return Ok(Shape::scalar());
                    }
                }
                // One or both unknown. A known size > 1 is the result (the
                // unknown one must be 1 or equal at run time); a 1 yields
                // the other; otherwise nothing is known.
                (a, b) => {
                    let (a, b) = (a.unwrap_or(-1), b.unwrap_or(-1));
                    if a > 1 || b > 1 {
                        if !incompatible_shape_error {
                            return Ok(Shape::unknown());
                        }
                        if a > 1 { dx } else { dy }
                    } else if a == 1 {
                        dy
                    } else if b == 1 {
                        dx
                    } else if a < 0 && b < 0 {
                        Dim::UNKNOWN
                    } else if !incompatible_shape_error {
                        return Ok(Shape::unknown());
                    } else {
                        Dim::UNKNOWN
                    }
                }
            };
            dims.push(dim);
        }
        Ok(Shape { dims: Some(dims) })
    }

    /// Reads a `TensorShapeProto`: `unknown_rank` is an unknown shape, a
    /// size of -1 an unknown dimension; a size below -1 is a
    /// [`ShapeError::InvalidDim`].
    pub fn from_proto(proto: &TensorShapeProto) -> Result<Shape, ShapeError> {
        if proto.unknown_rank {
            return Ok(Shape::unknown());
        }
        proto
            .dim
            .iter()
            .enumerate()
            .map(|(index, d)| {
                if d.size < -1 {
                    Err(ShapeError::InvalidDim {
                        index,
                        value: d.size,
                    })
                } else {
                    Ok(Dim::new(d.size))
                }
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Shape::new)
    }

    /// The `TensorShapeProto` of this shape (`unknown_rank: true`, or -1 for
    /// each unknown dimension).
    pub fn to_proto(&self) -> TensorShapeProto {
        match &self.dims {
            None => TensorShapeProto {
                dim: Vec::new(),
                unknown_rank: true,
            },
            Some(dims) => TensorShapeProto {
                dim: dims
                    .iter()
                    .map(|d| ProtoDim {
                        size: d.to_i64(),
                        name: String::new(),
                    })
                    .collect(),
                unknown_rank: false,
            },
        }
    }
}

/// `index` (negative: from the end) as a position in `0..=len`, or `None`
/// when it is before the start.
fn normalize_index(index: i64, len: usize) -> Option<usize> {
    if index < 0 {
        let back = usize::try_from(index.unsigned_abs()).ok()?;
        len.checked_sub(back)
    } else {
        usize::try_from(index).ok()
    }
}

impl From<&[i64]> for Shape {
    /// [`Shape::from_dims`]: -1 is an unknown dimension.
    fn from(dims: &[i64]) -> Shape {
        Shape::from_dims(dims)
    }
}

impl<const N: usize> From<[i64; N]> for Shape {
    /// [`Shape::from_dims`]: -1 is an unknown dimension.
    fn from(dims: [i64; N]) -> Shape {
        Shape::from_dims(&dims)
    }
}

impl From<Vec<i64>> for Shape {
    /// [`Shape::from_dims`]: -1 is an unknown dimension.
    fn from(dims: Vec<i64>) -> Shape {
        Shape::from_dims(&dims)
    }
}

impl From<Vec<Dim>> for Shape {
    fn from(dims: Vec<Dim>) -> Shape {
        Shape { dims: Some(dims) }
    }
}

impl From<&TensorShape> for Shape {
    /// The fully defined shape of a tensor.
    fn from(shape: &TensorShape) -> Shape {
        Shape::new(shape.dims().iter().map(|&d| Dim::from(d)))
    }
}

impl fmt::Display for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Some(dims) = &self.dims else {
            return f.write_str("?");
        };
        f.write_str("[")?;
        for (i, d) in dims.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{d}")?;
        }
        f.write_str("]")
    }
}

impl fmt::Debug for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// A `shape` attr as a partially known shape.
impl<'a> FromAttrValue<'a> for Shape {
    fn from_attr_value(value: &'a opreg_proto::AttrValue) -> Result<Self, AttrValueError> {
        let proto = <&TensorShapeProto>::from_attr_value(value)?;
        Shape::from_proto(proto).map_err(|e| AttrValueError::Invalid(e.to_string()))
    }
}

//! [`TensorShape`]: the dimensions of a tensor with an overflow-checked
//! element count.

use std::fmt;

use opreg_proto::{TensorShapeProto, tensor_shape_proto::Dim};
use smallvec::SmallVec;

use super::TensorError;

/// The fully known shape of a tensor: its dimension sizes, outermost first.
///
/// Every constructor checks that the element count (the product of the
/// dimensions) and every dimension fit in an `i64` (TensorFlow's limit), so
/// [`num_elements`](Self::num_elements) never overflows.
///
/// ```
/// use registry_core::tensor::TensorShape;
/// let s = TensorShape::new([2, 3]).unwrap();
/// assert_eq!(s.num_elements(), 6);
/// assert_eq!(s.to_string(), "[2,3]");
/// assert!(TensorShape::from_i64(&[2, -1]).is_err());
/// assert!(TensorShape::new([usize::MAX, 2]).is_err());
/// ```
#[derive(Clone, PartialEq, Eq, Hash, Default)]
pub struct TensorShape {
    dims: Dims,
    num_elements: usize,
}

impl TensorShape {
    /// A shape from dimension sizes; errors if the element count overflows.
    pub fn new(dims: impl AsRef<[usize]>) -> Result<Self, TensorError> {
        let dims = dims.as_ref();
        let mut n: usize = 1;
        for &d in dims {
            if i64::try_from(d).is_err() {
                return Err(TensorError::ShapeOverflow {
                    dims: format!("{dims:?}"),
                });
            }
            n = n
                .checked_mul(d)
                .filter(|&n| i64::try_from(n).is_ok())
                .ok_or_else(|| TensorError::ShapeOverflow {
                    dims: format!("{dims:?}"),
                })?;
        }
        Ok(Self {
            dims: Dims::from_slice(dims),
            num_elements: n,
        })
    }

    /// A shape from TensorFlow's signed dimension sizes; errors for a
    /// negative (unknown) dimension or an overflowing element count.
    pub fn from_i64(dims: &[i64]) -> Result<Self, TensorError> {
        let mut out: SmallVec<[usize; 4]> = SmallVec::with_capacity(dims.len());
        for (index, &d) in dims.iter().enumerate() {
            let d = usize::try_from(d).map_err(|_| TensorError::NegativeDim {
                dims: dims.to_vec(),
                index,
            })?;
            out.push(d);
        }
        Self::new(&out).map_err(|_| TensorError::ShapeOverflow {
            dims: format!("{dims:?}"),
        })
    }

    /// The shape of a scalar: rank 0, one element.
    pub fn scalar() -> Self {
        Self {
            dims: Dims::default(),
            num_elements: 1,
        }
    }

    /// The dimension sizes, outermost first.
    pub fn dims(&self) -> &[usize] {
        self.dims.as_slice()
    }

    /// The number of dimensions.
    pub fn rank(&self) -> usize {
        self.dims().len()
    }

    /// The size of dimension `index`, or `None` past the rank.
    pub fn dim(&self, index: usize) -> Option<usize> {
        self.dims().get(index).copied()
    }

    /// The number of elements (the product of the dimensions; 1 for a
    /// scalar).
    pub fn num_elements(&self) -> usize {
        self.num_elements
    }

    /// Reads a [`TensorShapeProto`]; errors for an unknown rank, a negative
    /// dimension or an overflowing element count.
    pub fn from_proto(proto: &TensorShapeProto) -> Result<Self, TensorError> {
        if proto.unknown_rank {
            return Err(TensorError::UnknownRank);
        }
        let dims: Vec<i64> = proto.dim.iter().map(|d| d.size).collect();
        Self::from_i64(&dims)
    }

    /// Writes this shape as a [`TensorShapeProto`].
    pub fn to_proto(&self) -> TensorShapeProto {
        TensorShapeProto {
            dim: self
                .dims()
                .iter()
                // Cannot saturate: `new` checks every dimension fits in i64.
                .map(|&d| Dim {
                    size: i64::try_from(d).unwrap_or(i64::MAX),
                    name: String::new(),
                })
                .collect(),
            unknown_rank: false,
        }
    }
}

impl fmt::Display for TensorShape {
    /// Formats as TensorFlow does: `[2,3]`, `[]` for a scalar.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[")?;
        for (i, d) in self.dims().iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{d}")?;
        }
        f.write_str("]")
    }
}

impl fmt::Debug for TensorShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TensorShape")
            .field("dims", &self.dims())
            .field("num_elements", &self.num_elements)
            .finish()
    }
}

/// The dimensions most tensors have, stored inline.
const INLINE_RANK: usize = 4;

/// Dimension sizes: inline up to [`INLINE_RANK`], on the heap beyond.
#[derive(PartialEq, Eq, Hash, Default)]
struct Dims(SmallVec<[usize; INLINE_RANK]>);

impl Dims {
    fn from_slice(dims: &[usize]) -> Self {
        Dims(SmallVec::from_slice(dims))
    }

    #[inline]
    fn as_slice(&self) -> &[usize] {
        &self.0
    }
}

impl Clone for Dims {
    /// Shapes are cloned on every output allocation. `SmallVec`'s own clone
    /// pushes the dimensions one by one, and a slice copy of a run-time
    /// length is a `memcpy` call; an inline shape is copied here as one
    /// fixed-size array instead.
    #[inline]
    fn clone(&self) -> Self {
        let dims = self.as_slice();
        if dims.len() > INLINE_RANK {
            return Dims(SmallVec::from_slice(dims));
        }
        let at = |i: usize| dims.get(i).copied().unwrap_or(0);
        Dims(SmallVec::from_buf_and_len(
            [at(0), at(1), at(2), at(3)],
            dims.len(),
        ))
    }
}

/// Things a tensor constructor accepts as a shape: a [`TensorShape`] or
/// `usize` dimension sizes (`[2, 3]`, `&[2, 3]`, `vec![2, 3]`).
pub trait IntoShape {
    /// Converts to a checked [`TensorShape`].
    fn into_shape(self) -> Result<TensorShape, TensorError>;
}

impl IntoShape for TensorShape {
    #[inline]
    fn into_shape(self) -> Result<TensorShape, TensorError> {
        Ok(self)
    }
}
impl IntoShape for &TensorShape {
    #[inline]
    fn into_shape(self) -> Result<TensorShape, TensorError> {
        Ok(self.clone())
    }
}
impl IntoShape for &[usize] {
    #[inline]
    fn into_shape(self) -> Result<TensorShape, TensorError> {
        TensorShape::new(self)
    }
}
impl<const N: usize> IntoShape for [usize; N] {
    #[inline]
    fn into_shape(self) -> Result<TensorShape, TensorError> {
        TensorShape::new(self)
    }
}
impl<const N: usize> IntoShape for &[usize; N] {
    #[inline]
    fn into_shape(self) -> Result<TensorShape, TensorError> {
        TensorShape::new(self)
    }
}
impl IntoShape for Vec<usize> {
    #[inline]
    fn into_shape(self) -> Result<TensorShape, TensorError> {
        TensorShape::new(self)
    }
}

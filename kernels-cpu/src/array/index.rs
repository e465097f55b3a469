//! Reading the integer inputs of the array kernels (shapes, axes, begin/end
//! vectors, indices) whatever their integer dtype, and shape helpers.

use registry_core::kernel::KernelError;
use registry_core::proto::{DataType, DataTypeExt};
use registry_core::tensor::{Tensor, TensorElement, TensorShape};
use smallvec::SmallVec;

/// Small integer vectors (one value per dimension, typically).
pub(crate) type Ints = SmallVec<[i64; 8]>;

/// An integer element type that indexes (`Tindices`, `TI`): read as `i64`.
pub(crate) trait IndexElement: TensorElement {
    /// The largest value of the type, as `i64`.
    const MAX: i64;
    /// The value as `i64` (exact).
    fn to_i64(self) -> i64;
}

macro_rules! index_element {
    ($($t:ty),*) => {$(
        impl IndexElement for $t {
            const MAX: i64 = <$t>::MAX as i64;
            #[inline]
            fn to_i64(self) -> i64 {
                i64::from(self)
            }
        }
    )*};
}

index_element!(i8, u8, i16, i32, i64);

/// The values of an integer tensor (`int8`, `uint8`, `int16`, `int32` or
/// `int64`) as `i64`, in row-major order.
pub(crate) fn int_values(t: &Tensor) -> Result<Ints, KernelError> {
    fn widen<T: IndexElement>(t: &Tensor) -> Result<Ints, KernelError> {
        Ok(t.as_slice::<T>()?.iter().map(|&v| v.to_i64()).collect())
    }
    match t.dtype() {
        DataType::DtInt32 => widen::<i32>(t),
        DataType::DtInt64 => widen::<i64>(t),
        DataType::DtInt16 => widen::<i16>(t),
        DataType::DtInt8 => widen::<i8>(t),
        DataType::DtUint8 => widen::<u8>(t),
        other => Err(KernelError::invalid_argument(format!(
            "expected an integer tensor, got dtype {}",
            other.type_name()
        ))),
    }
}

/// The single value of a one-element integer tensor, or `None` when it does
/// not have exactly one element.
pub(crate) fn single_int(t: &Tensor) -> Result<Option<i64>, KernelError> {
    if t.num_elements() != 1 {
        return Ok(None);
    }
    Ok(int_values(t)?.first().copied())
}

/// True for a rank-1 shape (TF's `TensorShapeUtils::IsVector`).
pub(crate) fn is_vector(shape: &TensorShape) -> bool {
    shape.rank() == 1
}

/// A dimension size as `i64` (tensor shapes always fit).
pub(crate) fn dim_i64(d: usize) -> i64 {
    i64::try_from(d).unwrap_or(i64::MAX)
}

/// `d` as a dimension size: non-negative and within `usize`.
pub(crate) fn to_dim(d: i64) -> Option<usize> {
    usize::try_from(d).ok()
}

/// A shape from computed dimensions, or InvalidArgument naming the
/// overflow (TF's `TensorShape::AddDimWithStatus`).
pub(crate) fn shape_of(dims: &[usize]) -> Result<TensorShape, KernelError> {
    TensorShape::new(dims).map_err(|_| {
        KernelError::invalid_argument(format!(
            "Encountered overflow when computing the shape {dims:?}: it has more than 2**63 - 1 \
             elements"
        ))
    })
}

/// Row-major element strides of `dims`.
pub(crate) fn strides(dims: &[usize]) -> SmallVec<[usize; 8]> {
    let mut out: SmallVec<[usize; 8]> = SmallVec::from_elem(1, dims.len());
    for i in (0..dims.len().saturating_sub(1)).rev() {
        // Bounded by the element count of a valid shape.
        out[i] = out[i + 1].saturating_mul(dims[i + 1]);
    }
    out
}

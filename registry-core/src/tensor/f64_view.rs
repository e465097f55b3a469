//! Tensors to and from `f64` values, whatever their real-number dtype (what
//! tests, tolerances and printing want when they compare values across
//! dtypes and devices), and integer tensors as `i64` values (what shape
//! functions and kernels read from shape, axis and index inputs).

use half::{bf16, f16};
use opreg_proto::DataType;

use super::proto::with_storage_type;
use super::{Complex64, Complex128, IntoShape, Tensor, TensorElement, TensorError, check_count};

/// An element type with a real-number value.
trait RealElement: TensorElement {
    fn to_f64(self) -> Option<f64>;
    fn from_f64(value: f64) -> Option<Self>;
}

macro_rules! real_by_cast {
    ($($t:ty),*) => {$(
        impl RealElement for $t {
            fn to_f64(self) -> Option<f64> {
                Some(self as f64)
            }
            // `as` rounds floats to nearest and saturates integers (NaN -> 0).
            fn from_f64(value: f64) -> Option<Self> {
                Some(value as $t)
            }
        }
    )*};
}

real_by_cast!(f32, f64, i8, i16, i32, i64, u8, u16, u32, u64);

impl RealElement for f16 {
    fn to_f64(self) -> Option<f64> {
        Some(f16::to_f64(self))
    }
    fn from_f64(value: f64) -> Option<Self> {
        Some(f16::from_f64(value))
    }
}

impl RealElement for bf16 {
    fn to_f64(self) -> Option<f64> {
        Some(bf16::to_f64(self))
    }
    fn from_f64(value: f64) -> Option<Self> {
        Some(bf16::from_f64(value))
    }
}

impl RealElement for bool {
    fn to_f64(self) -> Option<f64> {
        Some(f64::from(u8::from(self)))
    }
    fn from_f64(value: f64) -> Option<Self> {
        Some(value != 0.0)
    }
}

macro_rules! not_real {
    ($($t:ty),*) => {$(
        impl RealElement for $t {
            fn to_f64(self) -> Option<f64> {
                None
            }
            fn from_f64(_: f64) -> Option<Self> {
                None
            }
        }
    )*};
}

not_real!(Complex64, Complex128);

impl Tensor {
    /// The elements as `f64` values, row-major: floats widened exactly,
    /// integers (and the quantized types' integers) converted, bools as 0 or
    /// 1. Errors for strings, complex numbers and tensors not on the host.
    ///
    /// ```
    /// use registry_core::tensor::{Tensor, f16};
    ///
    /// let t = Tensor::from_vec([3], vec![f16::from_f32(0.5), f16::MAX, f16::NEG_INFINITY]).unwrap();
    /// assert_eq!(t.to_f64().unwrap(), [0.5, 65504.0, f64::NEG_INFINITY]);
    /// let b = Tensor::from_vec([2], vec![true, false]).unwrap();
    /// assert_eq!(b.to_f64().unwrap(), [1.0, 0.0]);
    /// assert!(Tensor::scalar_string("x").to_f64().is_err());
    /// ```
    pub fn to_f64(&self) -> Result<Vec<f64>, TensorError> {
        if !self.is_on_host() {
            // The typed view's error says where the tensor is.
            self.as_bytes()?;
        }
        with_storage_type!(self.dtype, S => {
            self.storage_slice::<S>()
                .iter()
                .map(|&v| RealElement::to_f64(v))
                .collect::<Option<Vec<f64>>>()
                .ok_or(TensorError::NotReal(self.dtype))
        }, _ => Err(TensorError::NotReal(self.dtype)))
    }

    /// The elements of an integer tensor (`int8` to `int64`, `uint8` to
    /// `uint64`) as `i64` values, row-major: what shape, axis, size and index
    /// inputs hold. Errors for other dtypes
    /// ([`TensorError::NotInteger`]), for `uint64` values above `i64::MAX`,
    /// and for tensors not on the host.
    ///
    /// ```
    /// use registry_core::tensor::Tensor;
    ///
    /// let t = Tensor::from_vec([3], vec![4i32, -1, 7]).unwrap();
    /// assert_eq!(t.int_values().unwrap(), [4, -1, 7]);
    /// assert!(Tensor::scalar(1.5f32).int_values().is_err());
    /// ```
    pub fn int_values(&self) -> Result<Vec<i64>, TensorError> {
        fn widen<T: TensorElement + Into<i64>>(t: &Tensor) -> Result<Vec<i64>, TensorError> {
            Ok(t.as_slice::<T>()?.iter().map(|&v| v.into()).collect())
        }
        match self.dtype {
            DataType::DtInt8 => widen::<i8>(self),
            DataType::DtInt16 => widen::<i16>(self),
            DataType::DtInt32 => widen::<i32>(self),
            DataType::DtInt64 => widen::<i64>(self),
            DataType::DtUint8 => widen::<u8>(self),
            DataType::DtUint16 => widen::<u16>(self),
            DataType::DtUint32 => widen::<u32>(self),
            DataType::DtUint64 => self
                .as_slice::<u64>()?
                .iter()
                .map(|&v| i64::try_from(v).map_err(|_| TensorError::NotInteger(self.dtype)))
                .collect(),
            other => Err(TensorError::NotInteger(other)),
        }
    }

    /// A tensor of `dtype` and `shape` holding `values` (row-major),
    /// converted as Rust's `as` does: floats round to nearest (f16 and
    /// bf16 too), integers truncate toward zero and saturate (NaN becomes
    /// 0), bools are `value != 0`. Errors for dtypes without a real-number
    /// view and when the number of values is not the shape's.
    ///
    /// ```
    /// use registry_core::proto::DataType;
    /// use registry_core::tensor::Tensor;
    ///
    /// let t = Tensor::from_f64(DataType::DtInt8, [2, 2], &[1.9, -1.9, 300.0, f64::NAN]).unwrap();
    /// assert_eq!(t.as_slice::<i8>().unwrap(), &[1, -1, 127, 0]);
    /// assert!(Tensor::from_f64(DataType::DtFloat, [3], &[1.0]).is_err());
    /// ```
    pub fn from_f64(
        dtype: DataType,
        shape: impl IntoShape,
        values: &[f64],
    ) -> Result<Tensor, TensorError> {
        let shape = shape.into_shape()?;
        check_count(&shape, values.len())?;
        let mut tensor = Tensor::zeros(dtype, shape)?;
        with_storage_type!(dtype, S => {
            let out = tensor.typed_mut_unchecked::<S>();
            for (slot, &v) in out.iter_mut().zip(values) {
                *slot = <S as RealElement>::from_f64(v).ok_or(TensorError::NotReal(dtype))?;
            }
            Ok(tensor)
        }, _ => Err(TensorError::NotReal(dtype)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_real_dtype_round_trips_small_integers() {
        let values = [0.0, 1.0, 2.0, 100.0];
        for dtype in [
            DataType::DtFloat,
            DataType::DtDouble,
            DataType::DtHalf,
            DataType::DtBfloat16,
            DataType::DtInt8,
            DataType::DtInt16,
            DataType::DtInt32,
            DataType::DtInt64,
            DataType::DtUint8,
            DataType::DtUint16,
            DataType::DtUint32,
            DataType::DtUint64,
            DataType::DtQint8,
            DataType::DtQuint8,
            DataType::DtQint16,
            DataType::DtQuint16,
            DataType::DtQint32,
        ] {
            let t = Tensor::from_f64(dtype, [2, 2], &values).unwrap();
            assert_eq!(t.dtype(), dtype);
            assert_eq!(t.dims(), [2, 2]);
            assert_eq!(t.to_f64().unwrap(), values, "{dtype:?}");
        }
    }

    #[test]
    fn conversions_round_and_saturate_as_rust_casts() {
        let t = Tensor::from_f64(DataType::DtUint8, [4], &[-5.0, 255.9, 1e9, 2.5]).unwrap();
        assert_eq!(t.as_slice::<u8>().unwrap(), &[0, 255, 255, 2]);
        let t = Tensor::from_f64(DataType::DtHalf, [1], &[1.0 + 1.0 / 4096.0]).unwrap();
        assert_eq!(t.to_f64().unwrap(), [1.0]); // rounded to f16's 10 bits
        let t = Tensor::from_f64(DataType::DtBool, [3], &[0.0, -0.0, 0.1]).unwrap();
        assert_eq!(t.as_slice::<bool>().unwrap(), &[false, false, true]);
    }

    #[test]
    fn dtypes_without_a_real_view_are_errors() {
        for dtype in [DataType::DtComplex64, DataType::DtString] {
            assert_eq!(
                Tensor::from_f64(dtype, [1], &[1.0]).unwrap_err(),
                TensorError::NotReal(dtype)
            );
            let t = Tensor::zeros(dtype, [1]).unwrap();
            assert_eq!(t.to_f64().unwrap_err(), TensorError::NotReal(dtype));
        }
        let err = Tensor::from_f64(DataType::DtFloat, [2], &[1.0]).unwrap_err();
        assert!(matches!(
            err,
            TensorError::ElementCount {
                expected: 2,
                actual: 1,
                ..
            }
        ));
    }
}

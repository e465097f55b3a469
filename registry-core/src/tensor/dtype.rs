//! Element types: the [`TensorElement`] trait mapping Rust types to
//! [`DataType`], the complex number types and per-dtype sizes.

use opreg_proto::{DataType, DataTypeExt};

pub use half::{bf16, f16};

/// A single-precision complex number (`DT_COMPLEX64`): two `f32`s, real part
/// first, laid out exactly as TensorFlow's `std::complex<float>`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Complex64 {
    /// The real part.
    pub re: f32,
    /// The imaginary part.
    pub im: f32,
}

/// A double-precision complex number (`DT_COMPLEX128`): two `f64`s, real part
/// first, laid out exactly as TensorFlow's `std::complex<double>`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Complex128 {
    /// The real part.
    pub re: f64,
    /// The imaginary part.
    pub im: f64,
}

impl Complex64 {
    /// Makes `re + im·i`.
    pub const fn new(re: f32, im: f32) -> Self {
        Self { re, im }
    }
}

impl Complex128 {
    /// Makes `re + im·i`.
    pub const fn new(re: f64, im: f64) -> Self {
        Self { re, im }
    }
}

pub(crate) mod sealed {
    /// Plain-old-data element types: every byte pattern read through
    /// [`Sealed::read_le`] yields a valid value, and an all-zero bit pattern
    /// is a valid value (the zero). Only implemented inside this module.
    pub trait Sealed: Copy + 'static {
        /// Reads one element from `size_of::<Self>()` little-endian bytes.
        fn read_le(bytes: &[u8]) -> Self;
        /// Writes one element as `size_of::<Self>()` little-endian bytes.
        fn write_le(self, out: &mut Vec<u8>);
    }
}

/// A Rust type that can be a tensor element; [`DTYPE`](Self::DTYPE) is the
/// matching TensorFlow [`DataType`].
///
/// Implemented (and sealed) for `f32`, `f64`, [`f16`](struct@f16), [`bf16`], `i8`, `i16`,
/// `i32`, `i64`, `u8`, `u16`, `u32`, `u64`, `bool`, [`Complex64`] and
/// [`Complex128`]. Strings (`DT_STRING`) are not fixed-size elements; see
/// [`Tensor::from_strings`](super::Tensor::from_strings).
///
/// ```
/// use registry_core::tensor::{TensorElement, f16};
/// use registry_core::proto::DataType;
/// assert_eq!(<f32 as TensorElement>::DTYPE, DataType::DtFloat);
/// assert_eq!(f16::DTYPE, DataType::DtHalf);
/// ```
pub trait TensorElement:
    sealed::Sealed + Copy + Send + Sync + PartialEq + std::fmt::Debug + 'static
{
    /// The TensorFlow data type of this element type.
    const DTYPE: DataType;
}

macro_rules! prim {
    ($($t:ty => $dt:ident),* $(,)?) => {$(
        impl sealed::Sealed for $t {
            fn read_le(bytes: &[u8]) -> Self {
                let mut a = [0u8; std::mem::size_of::<$t>()];
                a.copy_from_slice(bytes);
                <$t>::from_le_bytes(a)
            }
            fn write_le(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
        }
        impl TensorElement for $t {
            const DTYPE: DataType = DataType::$dt;
        }
    )*};
}

prim! {
    f32 => DtFloat, f64 => DtDouble, f16 => DtHalf, bf16 => DtBfloat16,
    i8 => DtInt8, i16 => DtInt16, i32 => DtInt32, i64 => DtInt64,
    u8 => DtUint8, u16 => DtUint16, u32 => DtUint32, u64 => DtUint64,
}

impl sealed::Sealed for bool {
    fn read_le(bytes: &[u8]) -> Self {
        // Any non-zero byte is true (as a C++ bool read from raw bytes).
        bytes[0] != 0
    }
    fn write_le(self, out: &mut Vec<u8>) {
        out.push(u8::from(self));
    }
}
impl TensorElement for bool {
    const DTYPE: DataType = DataType::DtBool;
}

impl sealed::Sealed for Complex64 {
    fn read_le(bytes: &[u8]) -> Self {
        Self::new(f32::read_le(&bytes[..4]), f32::read_le(&bytes[4..8]))
    }
    fn write_le(self, out: &mut Vec<u8>) {
        self.re.write_le(out);
        self.im.write_le(out);
    }
}
impl TensorElement for Complex64 {
    const DTYPE: DataType = DataType::DtComplex64;
}

impl sealed::Sealed for Complex128 {
    fn read_le(bytes: &[u8]) -> Self {
        Self::new(f64::read_le(&bytes[..8]), f64::read_le(&bytes[8..16]))
    }
    fn write_le(self, out: &mut Vec<u8>) {
        self.re.write_le(out);
        self.im.write_le(out);
    }
}
impl TensorElement for Complex128 {
    const DTYPE: DataType = DataType::DtComplex128;
}

/// The size in bytes of one element of `dtype` in a host buffer, or `None`
/// for types a [`Tensor`](super::Tensor) does not hold as fixed-size
/// elements (`DT_STRING`, resources, variants, 4-bit and 8-bit float types,
/// reference types): the element size of opreg-proto's one dtype table
/// ([`DATA_TYPES`](opreg_proto::DATA_TYPES)).
///
/// Quantized types (`qint8`, `quint8`, `qint16`, `quint16`, `qint32`) are
/// stored as their underlying integers.
pub fn element_size(dtype: DataType) -> Option<usize> {
    dtype.element_size()
}

/// True for every dtype a [`Tensor`](super::Tensor) can hold: the
/// fixed-size types of [`element_size`] and `DT_STRING`.
pub fn is_supported(dtype: DataType) -> bool {
    dtype == DataType::DtString || element_size(dtype).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The Rust element types agree with the dtype table's `rust` column.
    #[test]
    fn element_types_are_the_tables() {
        fn check<T: TensorElement>(rust: &str) {
            let info = T::DTYPE.info().unwrap();
            assert_eq!(info.rust, Some(rust), "{:?}", T::DTYPE);
            assert_eq!(info.size, Some(std::mem::size_of::<T>()), "{:?}", T::DTYPE);
        }
        check::<f32>("f32");
        check::<f64>("f64");
        check::<f16>("f16");
        check::<bf16>("bf16");
        check::<i8>("i8");
        check::<i16>("i16");
        check::<i32>("i32");
        check::<i64>("i64");
        check::<u8>("u8");
        check::<u16>("u16");
        check::<u32>("u32");
        check::<u64>("u64");
        check::<bool>("bool");
        check::<Complex64>("Complex64");
        check::<Complex128>("Complex128");
        let with_rust = opreg_proto::DATA_TYPES.iter().filter(|r| r.rust.is_some());
        assert_eq!(with_rust.count(), 15);
    }
}

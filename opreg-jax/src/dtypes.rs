//! One table of the element types that cross between JAX and opreg: XLA's
//! `PrimitiveType` code (`XLA_FFI_DataType`), NumPy's name for the type
//! (what the Python package sends), and TensorFlow's `DataType`.

use std::ffi::c_int;

use registry_core::proto::{DataType, DataTypeExt};

/// `(XLA_FFI_DataType, NumPy name, DataType)` of every type both sides have.
const TYPES: &[(c_int, &str, DataType)] = &[
    (1, "bool", DataType::DtBool),
    (2, "int8", DataType::DtInt8),
    (3, "int16", DataType::DtInt16),
    (4, "int32", DataType::DtInt32),
    (5, "int64", DataType::DtInt64),
    (6, "uint8", DataType::DtUint8),
    (7, "uint16", DataType::DtUint16),
    (8, "uint32", DataType::DtUint32),
    (9, "uint64", DataType::DtUint64),
    (10, "float16", DataType::DtHalf),
    (11, "float32", DataType::DtFloat),
    (12, "float64", DataType::DtDouble),
    (16, "bfloat16", DataType::DtBfloat16),
    (15, "complex64", DataType::DtComplex64),
    (18, "complex128", DataType::DtComplex128),
];

/// The opreg type of an XLA buffer's element type, if opreg has it.
pub fn from_xla(code: c_int) -> Option<DataType> {
    TYPES.iter().find(|t| t.0 == code).map(|t| t.2)
}

/// XLA's code of an opreg type, if XLA has it.
pub fn to_xla(dtype: DataType) -> Option<c_int> {
    TYPES.iter().find(|t| t.2 == dtype).map(|t| t.0)
}

/// The opreg type of a NumPy type name (`float32`), or of TensorFlow's
/// name for it (`float`).
pub fn from_name(name: &str) -> Option<DataType> {
    TYPES
        .iter()
        .find(|t| t.1 == name)
        .map(|t| t.2)
        .or_else(|| DataType::from_type_name(name).ok())
        .filter(|d| to_xla(*d).is_some())
}

/// NumPy's name of an opreg type, if JAX has the type.
pub fn numpy_name(dtype: DataType) -> Option<&'static str> {
    TYPES.iter().find(|t| t.2 == dtype).map(|t| t.1)
}

/// How an XLA element type is named in messages.
pub fn xla_name(code: c_int) -> String {
    match from_xla(code).and_then(numpy_name) {
        Some(name) => name.to_owned(),
        None => format!("XLA type {code}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_codes_round_trip() {
        for &(code, name, dtype) in TYPES {
            assert_eq!(from_xla(code), Some(dtype));
            assert_eq!(to_xla(dtype), Some(code));
            assert_eq!(from_name(name), Some(dtype));
            assert_eq!(numpy_name(dtype), Some(name));
        }
        assert_eq!(from_name("float"), Some(DataType::DtFloat));
        assert_eq!(from_name("string"), None, "JAX has no string arrays");
        assert_eq!(from_xla(17), None, "TOKEN");
        assert_eq!(xla_name(19), "XLA type 19");
    }
}

//! The one table of TensorFlow's data types ([`DATA_TYPES`]): each type's
//! name (`float`, `int32`, as `DataTypeString` and the spec language use
//! them), the size of its elements in a tensor, and the Rust element type
//! opreg's tensors hold it as. Names, sizes and Rust types are read from it
//! everywhere (the spec parser, `#[kernel]`, tensors, the GPU kernels).

use crate::DataType;

/// The name given is not one of TensorFlow's data type names.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown data type name '{0}'")]
pub struct UnknownDataType(pub String);

/// Names and properties of TensorFlow data types.
pub trait DataTypeExt: Sized {
    /// TensorFlow's short name (`DataTypeString`): `float`, `int32`, `half`,
    /// ...; reference types end in `_ref` (`float_ref`).
    fn type_name(self) -> &'static str;
    /// Looks up a short name as the spec language accepts it (`float`,
    /// `float32`, `int32`, ...; `_ref` names are not accepted).
    fn from_type_name(name: &str) -> Result<Self, UnknownDataType>;
    /// True for the `*_REF` variants (values above 100).
    fn is_ref(&self) -> bool;
    /// The reference form of a base type (`DT_FLOAT` -> `DT_FLOAT_REF`).
    fn to_ref(self) -> Self;
    /// The base form of a reference type (`DT_FLOAT_REF` -> `DT_FLOAT`).
    fn base(self) -> Self;
    /// The type's row of [`DATA_TYPES`] (`None` for `DT_INVALID` and
    /// reference types).
    fn info(self) -> Option<&'static DataTypeInfo>;
    /// The size in bytes of one element in a tensor's buffer, for the
    /// fixed-size types a tensor holds (quantized types as their integers;
    /// the float8, float4 and 4- and 2-bit integer types one byte per
    /// element, as TensorFlow holds them in memory and in `tensor_content`);
    /// `None` for strings, resources, variants and reference types.
    fn element_size(self) -> Option<usize>;
}

/// One row of [`DATA_TYPES`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DataTypeInfo {
    /// The type.
    pub dtype: DataType,
    /// TensorFlow's short name (`DataTypeString`).
    pub name: &'static str,
    /// The size of one element in a tensor's buffer, when opreg's tensors
    /// hold the type as fixed-size elements (one byte for the float8, float4
    /// and sub-byte integer types).
    pub size: Option<usize>,
    /// The Rust element type opreg's tensors use for it (`f32`, `f16`,
    /// `Complex64`; the quantized types have none of their own).
    pub rust: Option<&'static str>,
}

const fn row(
    dtype: DataType,
    name: &'static str,
    size: Option<usize>,
    rust: Option<&'static str>,
) -> DataTypeInfo {
    DataTypeInfo {
        dtype,
        name,
        size,
        rust,
    }
}

/// Every base type, in enum order: TensorFlow's name, the element size in a
/// tensor, the Rust element type.
pub const DATA_TYPES: &[DataTypeInfo] = &[
    row(DataType::DtFloat, "float", Some(4), Some("f32")),
    row(DataType::DtDouble, "double", Some(8), Some("f64")),
    row(DataType::DtInt32, "int32", Some(4), Some("i32")),
    row(DataType::DtUint8, "uint8", Some(1), Some("u8")),
    row(DataType::DtInt16, "int16", Some(2), Some("i16")),
    row(DataType::DtInt8, "int8", Some(1), Some("i8")),
    row(DataType::DtString, "string", None, None),
    row(
        DataType::DtComplex64,
        "complex64",
        Some(8),
        Some("Complex64"),
    ),
    row(DataType::DtInt64, "int64", Some(8), Some("i64")),
    row(DataType::DtBool, "bool", Some(1), Some("bool")),
    row(DataType::DtQint8, "qint8", Some(1), None),
    row(DataType::DtQuint8, "quint8", Some(1), None),
    row(DataType::DtQint32, "qint32", Some(4), None),
    row(DataType::DtBfloat16, "bfloat16", Some(2), Some("bf16")),
    row(DataType::DtQint16, "qint16", Some(2), None),
    row(DataType::DtQuint16, "quint16", Some(2), None),
    row(DataType::DtUint16, "uint16", Some(2), Some("u16")),
    row(
        DataType::DtComplex128,
        "complex128",
        Some(16),
        Some("Complex128"),
    ),
    row(DataType::DtHalf, "half", Some(2), Some("f16")),
    row(DataType::DtResource, "resource", None, None),
    row(DataType::DtVariant, "variant", None, None),
    row(DataType::DtUint32, "uint32", Some(4), Some("u32")),
    row(DataType::DtUint64, "uint64", Some(8), Some("u64")),
    row(DataType::DtFloat8E5m2, "float8_e5m2", Some(1), None),
    row(DataType::DtFloat8E4m3fn, "float8_e4m3fn", Some(1), None),
    row(DataType::DtFloat8E4m3fnuz, "float8_e4m3fnuz", Some(1), None),
    row(
        DataType::DtFloat8E4m3b11fnuz,
        "float8_e4m3b11fnuz",
        Some(1),
        None,
    ),
    row(DataType::DtFloat8E5m2fnuz, "float8_e5m2fnuz", Some(1), None),
    row(DataType::DtInt4, "int4", Some(1), None),
    row(DataType::DtUint4, "uint4", Some(1), None),
    row(DataType::DtInt2, "int2", Some(1), None),
    row(DataType::DtUint2, "uint2", Some(1), None),
    row(DataType::DtFloat4E2m1fn, "float4_e2m1fn", Some(1), None),
];

const REF_OFFSET: i32 = 100;

impl DataTypeExt for DataType {
    fn type_name(self) -> &'static str {
        let base = self.base();
        let name = base.info().map_or("invalid", |r| r.name);
        if self.is_ref() {
            // Leaked once per distinct ref type; bounded by the enum's size.
            ref_name(base, name)
        } else {
            name
        }
    }

    fn from_type_name(name: &str) -> Result<Self, UnknownDataType> {
        match name {
            "float32" => return Ok(DataType::DtFloat),
            "float64" => return Ok(DataType::DtDouble),
            _ => {}
        }
        DATA_TYPES
            .iter()
            .find(|r| r.name == name)
            .map(|r| r.dtype)
            .ok_or_else(|| UnknownDataType(name.to_owned()))
    }

    fn is_ref(&self) -> bool {
        (*self as i32) > REF_OFFSET
    }

    fn to_ref(self) -> Self {
        if self.is_ref() || self == DataType::DtInvalid {
            return self;
        }
        DataType::try_from(self as i32 + REF_OFFSET).unwrap_or(self)
    }

    fn base(self) -> Self {
        if self.is_ref() {
            DataType::try_from(self as i32 - REF_OFFSET).unwrap_or(self)
        } else {
            self
        }
    }

    fn info(self) -> Option<&'static DataTypeInfo> {
        DATA_TYPES.iter().find(|r| r.dtype == self)
    }

    fn element_size(self) -> Option<usize> {
        self.info().and_then(|r| r.size)
    }
}

fn ref_name(base: DataType, name: &'static str) -> &'static str {
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};
    static CACHE: OnceLock<Mutex<HashMap<i32, &'static str>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let mut guard = cache.lock().unwrap_or_else(|e| e.into_inner());
    guard
        .entry(base as i32)
        .or_insert_with(|| Box::leak(format!("{name}_ref").into_boxed_str()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_for_every_base_type() {
        for r in DATA_TYPES {
            assert_eq!(DataType::from_type_name(r.name).unwrap(), r.dtype);
            assert_eq!(r.dtype.type_name(), r.name);
        }
        // Every base type of the enum has its row.
        let base = (1..100).filter_map(|v| DataType::try_from(v).ok()).count();
        assert_eq!(base, DATA_TYPES.len());
    }

    #[test]
    fn sizes_and_rust_types() {
        assert_eq!(DataType::DtHalf.element_size(), Some(2));
        assert_eq!(DataType::DtQint32.element_size(), Some(4));
        assert_eq!(DataType::DtString.element_size(), None);
        assert_eq!(DataType::DtFloatRef.element_size(), None);
        assert_eq!(
            DataType::DtComplex128.info().unwrap().rust,
            Some("Complex128")
        );
        // A Rust type names one type only.
        for r in DATA_TYPES.iter().filter(|r| r.rust.is_some()) {
            assert_eq!(DATA_TYPES.iter().filter(|o| o.rust == r.rust).count(), 1);
        }
    }

    #[test]
    fn aliases_and_refs() {
        assert_eq!(
            DataType::from_type_name("float32").unwrap(),
            DataType::DtFloat
        );
        assert_eq!(
            DataType::from_type_name("float64").unwrap(),
            DataType::DtDouble
        );
        assert!(DataType::from_type_name("float_ref").is_err());
        assert_eq!(DataType::DtFloat.to_ref(), DataType::DtFloatRef);
        assert_eq!(DataType::DtFloatRef.type_name(), "float_ref");
        assert_eq!(DataType::DtInt32Ref.base(), DataType::DtInt32);
    }
}

//! TensorFlow's names for [`DataType`] values (`float`, `int32`, ...), as
//! `DataTypeString` and the spec language use them.

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
}

/// (short name, base type) for every base type, in enum order.
const NAMES: &[(&str, DataType)] = &[
    ("float", DataType::DtFloat),
    ("double", DataType::DtDouble),
    ("int32", DataType::DtInt32),
    ("uint8", DataType::DtUint8),
    ("int16", DataType::DtInt16),
    ("int8", DataType::DtInt8),
    ("string", DataType::DtString),
    ("complex64", DataType::DtComplex64),
    ("int64", DataType::DtInt64),
    ("bool", DataType::DtBool),
    ("qint8", DataType::DtQint8),
    ("quint8", DataType::DtQuint8),
    ("qint32", DataType::DtQint32),
    ("bfloat16", DataType::DtBfloat16),
    ("qint16", DataType::DtQint16),
    ("quint16", DataType::DtQuint16),
    ("uint16", DataType::DtUint16),
    ("complex128", DataType::DtComplex128),
    ("half", DataType::DtHalf),
    ("resource", DataType::DtResource),
    ("variant", DataType::DtVariant),
    ("uint32", DataType::DtUint32),
    ("uint64", DataType::DtUint64),
    ("float8_e5m2", DataType::DtFloat8E5m2),
    ("float8_e4m3fn", DataType::DtFloat8E4m3fn),
    ("float8_e4m3fnuz", DataType::DtFloat8E4m3fnuz),
    ("float8_e4m3b11fnuz", DataType::DtFloat8E4m3b11fnuz),
    ("float8_e5m2fnuz", DataType::DtFloat8E5m2fnuz),
    ("int4", DataType::DtInt4),
    ("uint4", DataType::DtUint4),
    ("int2", DataType::DtInt2),
    ("uint2", DataType::DtUint2),
];

const REF_OFFSET: i32 = 100;

impl DataTypeExt for DataType {
    fn type_name(self) -> &'static str {
        let base = self.base();
        let name = NAMES
            .iter()
            .find(|(_, t)| *t == base)
            .map(|(n, _)| *n)
            .unwrap_or("invalid");
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
        NAMES
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, t)| *t)
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
        for (name, dtype) in NAMES {
            assert_eq!(DataType::from_type_name(name).unwrap(), *dtype);
            assert_eq!(dtype.type_name(), *name);
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

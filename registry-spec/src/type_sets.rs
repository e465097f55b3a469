//! TensorFlow's data type names and alias sets (`numbertype`,
//! `realnumbertype`, `quantizedtype`), in TensorFlow's order: byte-identical
//! OpDefs depend on it.

use opreg_proto::{DataType, DataTypeExt};

use DataType as D;

/// `numbertype` / `numerictype` (TF's `NumberTypes()`), in TF's order.
pub const NUMBER_TYPES: &[DataType] = &[
    D::DtFloat,
    D::DtDouble,
    D::DtInt32,
    D::DtUint8,
    D::DtInt16,
    D::DtInt8,
    D::DtComplex64,
    D::DtInt64,
    D::DtQint8,
    D::DtQuint8,
    D::DtQint32,
    D::DtBfloat16,
    D::DtQint16,
    D::DtQuint16,
    D::DtUint16,
    D::DtComplex128,
    D::DtHalf,
    D::DtUint32,
    D::DtUint64,
];

/// `quantizedtype` (TF's `QuantizedTypes()`), in TF's order.
pub const QUANTIZED_TYPES: &[DataType] = &[
    D::DtQint8,
    D::DtQuint8,
    D::DtQint32,
    D::DtQint16,
    D::DtQuint16,
];

/// `realnumbertype` / `realnumerictype` (TF's `RealNumberTypes()`), in TF's order.
pub const REAL_NUMBER_TYPES: &[DataType] = &[
    D::DtFloat,
    D::DtDouble,
    D::DtInt32,
    D::DtUint8,
    D::DtInt16,
    D::DtInt8,
    D::DtInt64,
    D::DtBfloat16,
    D::DtUint16,
    D::DtHalf,
    D::DtUint32,
    D::DtUint64,
];

/// The alias names TF expands, with their sets.
pub(crate) const ALIASES: &[(&str, &[DataType])] = &[
    ("numbertype", NUMBER_TYPES),
    ("numerictype", NUMBER_TYPES),
    ("quantizedtype", QUANTIZED_TYPES),
    ("realnumbertype", REAL_NUMBER_TYPES),
    ("realnumerictype", REAL_NUMBER_TYPES),
];

/// TF's `ProcessCompoundType`: the set an alias name stands for.
pub(crate) fn alias_set(name: &str) -> Option<&'static [DataType]> {
    ALIASES
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, set)| *set)
}

/// TF's `DataTypeFromString`: a type name, `float32`/`float64`/`float16`
/// aliases, and `<name>_ref` for reference types.
pub(crate) fn data_type_from_string(name: &str) -> Option<DataType> {
    if let Some(base) = name.strip_suffix("_ref") {
        let dt = data_type_from_string(base)?;
        return if dt.is_ref() { None } else { Some(dt.to_ref()) };
    }
    if name == "float16" {
        return Some(DataType::DtHalf);
    }
    DataType::from_type_name(name).ok()
}

/// Every word that may stand in a type set, for suggestions.
pub(crate) fn type_words() -> impl Iterator<Item = &'static str> {
    const NAMES: &[&str] = &[
        "float",
        "double",
        "int32",
        "uint8",
        "int16",
        "int8",
        "string",
        "complex64",
        "int64",
        "bool",
        "qint8",
        "quint8",
        "qint32",
        "bfloat16",
        "qint16",
        "quint16",
        "uint16",
        "complex128",
        "half",
        "resource",
        "variant",
        "uint32",
        "uint64",
        "int4",
        "uint4",
        "int2",
        "uint2",
    ];
    NAMES.iter().copied().chain(ALIASES.iter().map(|(n, _)| *n))
}

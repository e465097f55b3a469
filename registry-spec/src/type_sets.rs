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

/// TF's `ProcessCompoundType`: the set an alias name stands for
/// (`numbertype`, `realnumbertype`, `quantizedtype`, ...), in TF's order.
///
/// ```
/// use registry_spec::alias_set;
/// assert_eq!(alias_set("realnumbertype").unwrap().len(), 12);
/// assert!(alias_set("float").is_none());
/// ```
pub fn alias_set(name: &str) -> Option<&'static [DataType]> {
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

/// Every word that may stand in a type set, for suggestions: the names of
/// opreg-proto's one dtype table, and the alias names.
pub(crate) fn type_words() -> impl Iterator<Item = &'static str> {
    opreg_proto::DATA_TYPES
        .iter()
        .map(|r| r.name)
        .chain(ALIASES.iter().map(|(n, _)| *n))
}

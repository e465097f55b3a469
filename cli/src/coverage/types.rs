//! The types of the coverage grid: its columns' order and the types an
//! attr allows.

use opreg_proto::attr_value::Value;
use opreg_proto::{AttrValue, DataType};

/// Every non-reference type, in the order of the columns: floats, signed and
/// unsigned integers, complex, bool, string, quantized, then the types opreg
/// has no tensors of.
pub const DTYPE_ORDER: [DataType; 33] = [
    DataType::DtHalf,
    DataType::DtBfloat16,
    DataType::DtFloat,
    DataType::DtDouble,
    DataType::DtInt8,
    DataType::DtInt16,
    DataType::DtInt32,
    DataType::DtInt64,
    DataType::DtUint8,
    DataType::DtUint16,
    DataType::DtUint32,
    DataType::DtUint64,
    DataType::DtComplex64,
    DataType::DtComplex128,
    DataType::DtBool,
    DataType::DtString,
    DataType::DtQint8,
    DataType::DtQuint8,
    DataType::DtQint16,
    DataType::DtQuint16,
    DataType::DtQint32,
    DataType::DtFloat8E5m2,
    DataType::DtFloat8E4m3fn,
    DataType::DtFloat8E4m3fnuz,
    DataType::DtFloat8E4m3b11fnuz,
    DataType::DtFloat8E5m2fnuz,
    DataType::DtInt4,
    DataType::DtUint4,
    DataType::DtInt2,
    DataType::DtUint2,
    DataType::DtFloat4E2m1fn,
    DataType::DtResource,
    DataType::DtVariant,
];

/// The types an attr's `allowed_values` lists, or every type when it has
/// none.
pub(super) fn allowed_types(allowed: Option<&AttrValue>) -> Vec<DataType> {
    let listed: Vec<i32> = match allowed.and_then(|v| v.value.as_ref()) {
        Some(Value::List(l)) => l.r#type.clone(),
        _ => Vec::new(),
    };
    DTYPE_ORDER
        .iter()
        .copied()
        .filter(|&t| listed.is_empty() || listed.contains(&(t as i32)))
        .collect()
}

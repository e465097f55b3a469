//! [`FromAttrValue`]: the Rust types an attr value converts to (TF's
//! `GetNodeAttr` overloads), owned or borrowed from the value.

use opreg_proto::attr_value::{ListValue, Value};
use opreg_proto::{AttrValue, DataType, TensorProto, TensorShapeProto};

use crate::tensor::Tensor;

/// Why an attr value did not convert.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AttrValueError {
    /// It holds another kind of value.
    #[error("expected {}, got {}", with_article(.expected), with_article(.found))]
    WrongKind {
        /// The kind asked for (`int`, `list(int)`, `type`, ...).
        expected: &'static str,
        /// The kind it holds ([`attr_value_kind`]).
        found: &'static str,
    },
    /// It is of the right kind but not a valid value (a string that is not
    /// UTF-8, an unknown dtype, an int out of range, ...).
    #[error("{0}")]
    Invalid(String),
}

/// `an int`, `a list(type)`, `no value`.
fn with_article(kind: &str) -> String {
    match kind.chars().next() {
        _ if kind == "no value" => kind.to_owned(),
        Some('a' | 'e' | 'i' | 'o' | 'u') => format!("an {kind}"),
        _ => format!("a {kind}"),
    }
}

/// The kind of value an attr holds, for messages (`int`, `list`, ...).
///
/// ```
/// use registry_core::attr::attr_value_kind;
/// assert_eq!(attr_value_kind(&3i64.into()), "int");
/// ```
pub fn attr_value_kind(value: &AttrValue) -> &'static str {
    match &value.value {
        None => "no value",
        Some(Value::S(_)) => "string",
        Some(Value::I(_)) => "int",
        Some(Value::F(_)) => "float",
        Some(Value::B(_)) => "bool",
        Some(Value::Type(_)) => "type",
        Some(Value::Shape(_)) => "shape",
        Some(Value::Tensor(_)) => "tensor",
        Some(Value::List(_)) => "list",
        Some(Value::Func(_)) => "func",
        Some(Value::Placeholder(_)) => "placeholder",
    }
}

/// A Rust type an attr value converts to, possibly borrowing from it
/// (`&'a str`, `&'a [i64]`).
pub trait FromAttrValue<'a>: Sized {
    /// Converts, or says what kind was expected and found.
    fn from_attr_value(value: &'a AttrValue) -> Result<Self, AttrValueError>;
}

fn wrong(expected: &'static str, value: &AttrValue) -> AttrValueError {
    AttrValueError::WrongKind {
        expected,
        found: attr_value_kind(value),
    }
}

fn to_dtype(raw: i32) -> Result<DataType, AttrValueError> {
    DataType::try_from(raw)
        .map_err(|_| AttrValueError::Invalid(format!("{raw} is not a DataType enum value")))
}

fn to_i32(v: i64) -> Result<i32, AttrValueError> {
    i32::try_from(v)
        .map_err(|_| AttrValueError::Invalid(format!("value {v} does not fit in a 32-bit integer")))
}

fn utf8(bytes: &[u8]) -> Result<&str, AttrValueError> {
    std::str::from_utf8(bytes)
        .map_err(|_| AttrValueError::Invalid("the string is not UTF-8".into()))
}

/// The list of a `list(...)` attr, which must hold `expected`.
fn list<'a>(value: &'a AttrValue, expected: &'static str) -> Result<&'a ListValue, AttrValueError> {
    match &value.value {
        Some(Value::List(l)) => Ok(l),
        _ => Err(wrong(expected, value)),
    }
}

/// Implements `FromAttrValue` for a scalar kind: `$ty` from `Value::$variant`.
macro_rules! scalar {
    ($($ty:ty, $kind:literal, $pattern:pat => $convert:expr;)*) => {$(
        impl<'a> FromAttrValue<'a> for $ty {
            fn from_attr_value(value: &'a AttrValue) -> Result<Self, AttrValueError> {
                match &value.value {
                    Some($pattern) => $convert,
                    _ => Err(wrong($kind, value)),
                }
            }
        }
    )*};
}

scalar! {
    i64, "int", Value::I(i) => Ok(*i);
    i32, "int", Value::I(i) => to_i32(*i);
    f32, "float", Value::F(f) => Ok(*f);
    bool, "bool", Value::B(b) => Ok(*b);
    &'a str, "string", Value::S(s) => utf8(s);
    String, "string", Value::S(s) => utf8(s).map(str::to_owned);
    &'a [u8], "string", Value::S(s) => Ok(s.as_slice());
    Vec<u8>, "string", Value::S(s) => Ok(s.clone());
    DataType, "type", Value::Type(t) => to_dtype(*t);
    &'a TensorShapeProto, "shape", Value::Shape(s) => Ok(s);
    TensorShapeProto, "shape", Value::Shape(s) => Ok(s.clone());
    &'a TensorProto, "tensor", Value::Tensor(t) => Ok(t);
    TensorProto, "tensor", Value::Tensor(t) => Ok(t.clone());
    Tensor, "tensor", Value::Tensor(t) => Tensor::from_proto(t).map_err(|e| AttrValueError::Invalid(e.to_string()));
}

impl<'a> FromAttrValue<'a> for &'a AttrValue {
    fn from_attr_value(value: &'a AttrValue) -> Result<Self, AttrValueError> {
        Ok(value)
    }
}

impl<'a> FromAttrValue<'a> for AttrValue {
    fn from_attr_value(value: &'a AttrValue) -> Result<Self, AttrValueError> {
        Ok(value.clone())
    }
}

/// Implements `FromAttrValue` for a list kind from the `ListValue` field.
macro_rules! lists {
    ($($ty:ty, $kind:literal, |$l:ident| $convert:expr;)*) => {$(
        impl<'a> FromAttrValue<'a> for $ty {
            fn from_attr_value(value: &'a AttrValue) -> Result<Self, AttrValueError> {
                let $l = list(value, $kind)?;
                $convert
            }
        }
    )*};
}

lists! {
    &'a [i64], "list(int)", |l| Ok(l.i.as_slice());
    Vec<i64>, "list(int)", |l| Ok(l.i.clone());
    Vec<i32>, "list(int)", |l| l.i.iter().map(|&v| to_i32(v)).collect();
    &'a [f32], "list(float)", |l| Ok(l.f.as_slice());
    Vec<f32>, "list(float)", |l| Ok(l.f.clone());
    &'a [bool], "list(bool)", |l| Ok(l.b.as_slice());
    Vec<bool>, "list(bool)", |l| Ok(l.b.clone());
    Vec<String>, "list(string)", |l| l.s.iter().map(|s| utf8(s).map(str::to_owned)).collect();
    Vec<DataType>, "list(type)", |l| l.r#type.iter().map(|&t| to_dtype(t)).collect();
    &'a [TensorShapeProto], "list(shape)", |l| Ok(l.shape.as_slice());
    Vec<TensorShapeProto>, "list(shape)", |l| Ok(l.shape.clone());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_and_messages() {
        let int: AttrValue = 3i64.into();
        assert_eq!(i64::from_attr_value(&int), Ok(3));
        assert_eq!(
            bool::from_attr_value(&int).unwrap_err().to_string(),
            "expected a bool, got an int"
        );
        assert_eq!(
            <&[i64]>::from_attr_value(&int).unwrap_err().to_string(),
            "expected a list(int), got an int"
        );
        let big: AttrValue = (1i64 << 40).into();
        assert!(i32::from_attr_value(&big).is_err());
        let bad = AttrValue {
            value: Some(Value::S(vec![0xff])),
        };
        assert!(<&str>::from_attr_value(&bad).is_err());
        assert_eq!(<&[u8]>::from_attr_value(&bad), Ok(&[0xffu8][..]));
        let none = AttrValue { value: None };
        assert_eq!(
            i64::from_attr_value(&none).unwrap_err().to_string(),
            "expected an int, got no value"
        );
    }
}

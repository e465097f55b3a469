//! Conversions into [`AttrValue`] from the Rust values an attr holds, as
//! TensorFlow's `SetAttrValue` overloads: `AttrValue::from(DataType::DtFloat)`
//! is `type: DT_FLOAT`, `AttrValue::from([1, 2, 2, 1])` is
//! `list { i: [1, 2, 2, 1] }`, `AttrValue::from("SAME")` is `s: "SAME"`.
//!
//! ```
//! use opreg_proto::attr_value::{ListValue, Value};
//! use opreg_proto::{AttrValue, DataType};
//!
//! assert_eq!(AttrValue::from(DataType::DtInt32).value, Some(Value::Type(DataType::DtInt32 as i32)));
//! assert_eq!(AttrValue::from(2).value, Some(Value::I(2)));
//! assert_eq!(AttrValue::from(0.5).value, Some(Value::F(0.5)));
//! assert_eq!(AttrValue::from("NHWC").value, Some(Value::S(b"NHWC".to_vec())));
//! assert_eq!(
//!     AttrValue::from([1, 2]).value,
//!     Some(Value::List(ListValue { i: vec![1, 2], ..Default::default() }))
//! );
//! ```

use crate::attr_value::{ListValue, Value};
use crate::{AttrValue, DataType, NameAttrList, TensorProto, TensorShapeProto};

impl From<Value> for AttrValue {
    fn from(value: Value) -> Self {
        AttrValue { value: Some(value) }
    }
}

impl From<ListValue> for AttrValue {
    fn from(list: ListValue) -> Self {
        Value::List(list).into()
    }
}

impl From<DataType> for AttrValue {
    fn from(dtype: DataType) -> Self {
        Value::Type(dtype as i32).into()
    }
}

impl From<i64> for AttrValue {
    fn from(i: i64) -> Self {
        Value::I(i).into()
    }
}

impl From<f32> for AttrValue {
    fn from(f: f32) -> Self {
        Value::F(f).into()
    }
}

impl From<bool> for AttrValue {
    fn from(b: bool) -> Self {
        Value::B(b).into()
    }
}

/// A string attr (`s`), stored as its UTF-8 bytes.
impl From<&str> for AttrValue {
    fn from(s: &str) -> Self {
        Value::S(s.as_bytes().to_vec()).into()
    }
}

/// A string attr (`s`), stored as its UTF-8 bytes.
impl From<String> for AttrValue {
    fn from(s: String) -> Self {
        Value::S(s.into_bytes()).into()
    }
}

impl From<TensorShapeProto> for AttrValue {
    fn from(shape: TensorShapeProto) -> Self {
        Value::Shape(shape).into()
    }
}

impl From<TensorProto> for AttrValue {
    fn from(tensor: TensorProto) -> Self {
        Value::Tensor(tensor).into()
    }
}

impl From<NameAttrList> for AttrValue {
    fn from(func: NameAttrList) -> Self {
        Value::Func(func).into()
    }
}

/// Element types a `list(...)` attr is made of: each knows its field of
/// [`ListValue`].
pub trait ListElement: Sized {
    /// A list attr holding `items`.
    fn into_list(items: Vec<Self>) -> ListValue;
}

impl ListElement for i64 {
    fn into_list(items: Vec<Self>) -> ListValue {
        ListValue {
            i: items,
            ..Default::default()
        }
    }
}

impl ListElement for f32 {
    fn into_list(items: Vec<Self>) -> ListValue {
        ListValue {
            f: items,
            ..Default::default()
        }
    }
}

impl ListElement for bool {
    fn into_list(items: Vec<Self>) -> ListValue {
        ListValue {
            b: items,
            ..Default::default()
        }
    }
}

impl ListElement for DataType {
    fn into_list(items: Vec<Self>) -> ListValue {
        ListValue {
            r#type: items.into_iter().map(|t| t as i32).collect(),
            ..Default::default()
        }
    }
}

impl ListElement for &str {
    fn into_list(items: Vec<Self>) -> ListValue {
        ListValue {
            s: items.into_iter().map(|s| s.as_bytes().to_vec()).collect(),
            ..Default::default()
        }
    }
}

impl ListElement for String {
    fn into_list(items: Vec<Self>) -> ListValue {
        ListValue {
            s: items.into_iter().map(String::into_bytes).collect(),
            ..Default::default()
        }
    }
}

impl ListElement for TensorShapeProto {
    fn into_list(items: Vec<Self>) -> ListValue {
        ListValue {
            shape: items,
            ..Default::default()
        }
    }
}

impl ListElement for TensorProto {
    fn into_list(items: Vec<Self>) -> ListValue {
        ListValue {
            tensor: items,
            ..Default::default()
        }
    }
}

impl ListElement for NameAttrList {
    fn into_list(items: Vec<Self>) -> ListValue {
        ListValue {
            func: items,
            ..Default::default()
        }
    }
}

/// A `list(...)` attr; an empty vector is the empty list (`list {}`).
impl<T: ListElement> From<Vec<T>> for AttrValue {
    fn from(items: Vec<T>) -> Self {
        T::into_list(items).into()
    }
}

/// A `list(...)` attr from a slice, copying its elements.
impl<T: ListElement + Clone> From<&[T]> for AttrValue {
    fn from(items: &[T]) -> Self {
        T::into_list(items.to_vec()).into()
    }
}

/// A `list(...)` attr from an array: `AttrValue::from([1, 2, 2, 1])`.
impl<T: ListElement, const N: usize> From<[T; N]> for AttrValue {
    fn from(items: [T; N]) -> Self {
        T::into_list(items.into()).into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tensor_shape_proto::Dim;

    fn list(value: AttrValue) -> ListValue {
        match value.value {
            Some(Value::List(list)) => list,
            other => panic!("not a list: {other:?}"),
        }
    }

    #[test]
    fn scalars_fill_their_own_field() {
        assert_eq!(AttrValue::from(-3).value, Some(Value::I(-3)));
        assert_eq!(AttrValue::from(true).value, Some(Value::B(true)));
        assert_eq!(AttrValue::from(1.5f32).value, Some(Value::F(1.5)));
        assert_eq!(
            AttrValue::from(String::from("VALID")).value,
            Some(Value::S(b"VALID".to_vec()))
        );
        assert_eq!(
            AttrValue::from(DataType::DtHalf).value,
            Some(Value::Type(DataType::DtHalf as i32))
        );
        let shape = TensorShapeProto {
            dim: vec![Dim {
                size: 3,
                name: String::new(),
            }],
            unknown_rank: false,
        };
        assert_eq!(
            AttrValue::from(shape.clone()).value,
            Some(Value::Shape(shape))
        );
        let func = NameAttrList {
            name: "f".into(),
            attr: Default::default(),
        };
        assert_eq!(AttrValue::from(func.clone()).value, Some(Value::Func(func)));
    }

    #[test]
    fn lists_fill_only_their_element_field() {
        let ints = list(AttrValue::from([1, 2, 2, 1]));
        assert_eq!(
            ints,
            ListValue {
                i: vec![1, 2, 2, 1],
                ..Default::default()
            }
        );
        let types = list(AttrValue::from(vec![DataType::DtFloat, DataType::DtInt64]));
        assert_eq!(
            types.r#type,
            [DataType::DtFloat as i32, DataType::DtInt64 as i32]
        );
        assert!(types.i.is_empty() && types.s.is_empty());
        let strings = list(AttrValue::from(&["a", "bc"][..]));
        assert_eq!(strings.s, [b"a".to_vec(), b"bc".to_vec()]);
        assert_eq!(list(AttrValue::from([0.5f32])).f, [0.5]);
        assert_eq!(list(AttrValue::from(vec![true, false])).b, [true, false]);
    }

    #[test]
    fn an_empty_list_is_still_a_list() {
        assert_eq!(
            AttrValue::from(Vec::<i64>::new()).value,
            Some(Value::List(ListValue::default()))
        );
    }
}

//! An op's attrs as JAX passes them, both ways.
//!
//! - **From the Python package** (shape inference, before the call): JSON
//!   values, read by the op's attr types ([`from_json`]).
//! - **To XLA**: each attr of the bound node as the attribute kind the
//!   package hands `jax.ffi.ffi_call` ([`call_attr`]): `int` as an
//!   `int64` scalar, `float` as `float32`, `bool` as a `bool`, `string` as
//!   a string, `type` as the `int32` `DataType` number, `shape` and
//!   `list(int)` as `int64` arrays, `list(float)` as `float32` arrays,
//!   `list(bool)` as `bool` arrays, `list(type)` as `int32` arrays. Other
//!   kinds (`list(string)`, `list(shape)`, `tensor`, `func`) have no XLA
//!   attribute: an op that needs one cannot be called from JAX.
//! - **From XLA's call frame** ([`from_xla`]): the same kinds, with any
//!   integer width and float width XLA hands over.

use std::ffi::c_int;

use registry_core::proto::attr_value::{ListValue, Value};
use registry_core::proto::op_def::AttrDef;
use registry_core::proto::tensor_shape_proto::Dim;
use registry_core::proto::{AttrValue, DataType, OpDef, TensorShapeProto};
use serde_json::{Value as Json, json};

use crate::dtypes;
use crate::error::CallError;
use crate::ffi;

/// An attr name and value.
pub type NamedAttr = (String, AttrValue);

/// The op's attr named `name`, or an error listing the ones it has.
fn attr_def<'a>(op_def: &'a OpDef, name: &str) -> Result<&'a AttrDef, CallError> {
    op_def.attr.iter().find(|a| a.name == name).ok_or_else(|| {
        let names: Vec<&str> = op_def.attr.iter().map(|a| a.name.as_str()).collect();
        CallError::Value(format!(
            "op '{}' has no attr '{name}' (its attrs: {})",
            op_def.name,
            if names.is_empty() {
                "none".to_owned()
            } else {
                names.join(", ")
            }
        ))
    })
}

fn kind_error(def: &AttrDef, given: impl std::fmt::Display) -> CallError {
    CallError::Value(format!(
        "attr '{}' is a {}, got {given}",
        def.name, def.r#type
    ))
}

fn unsupported(def: &AttrDef) -> CallError {
    CallError::Unsupported(format!(
        "attr '{}' is a {}, which XLA's FFI has no attribute kind for",
        def.name, def.r#type
    ))
}

fn shape_value(dims: impl IntoIterator<Item = i64>) -> AttrValue {
    AttrValue::from(TensorShapeProto {
        dim: dims
            .into_iter()
            .map(|size| Dim {
                size,
                name: String::new(),
            })
            .collect(),
        unknown_rank: false,
    })
}

fn type_value(def: &AttrDef, raw: i64) -> Result<DataType, CallError> {
    i32::try_from(raw)
        .ok()
        .and_then(|v| DataType::try_from(v).ok())
        .filter(|&d| d != DataType::DtInvalid)
        .ok_or_else(|| kind_error(def, format!("{raw}, which is no DataType")))
}

fn type_named(def: &AttrDef, name: &str) -> Result<DataType, CallError> {
    use registry_core::proto::DataTypeExt;
    dtypes::from_name(name)
        .or_else(|| DataType::from_type_name(name).ok())
        .ok_or_else(|| kind_error(def, format!("'{name}', which is no type name")))
}

// ---------------------------------------------------------------- JSON

/// The attrs the Python package gives (a JSON object), read against the
/// op's attr types.
pub fn from_json(
    op_def: &OpDef,
    attrs: &serde_json::Map<String, Json>,
) -> Result<Vec<NamedAttr>, CallError> {
    attrs
        .iter()
        .map(|(name, value)| {
            let def = attr_def(op_def, name)?;
            Ok((name.clone(), json_value(def, value)?))
        })
        .collect()
}

fn json_value(def: &AttrDef, value: &Json) -> Result<AttrValue, CallError> {
    let bad = || kind_error(def, value);
    let int = |v: &Json| v.as_i64().filter(|_| !v.is_boolean());
    let list = |v: &Json| v.as_array().cloned().ok_or_else(bad);
    Ok(match def.r#type.as_str() {
        "int" => AttrValue::from(int(value).ok_or_else(bad)?),
        "float" => AttrValue::from(json_float(value).ok_or_else(bad)?),
        "bool" => AttrValue::from(value.as_bool().ok_or_else(bad)?),
        "string" => AttrValue::from(value.as_str().ok_or_else(bad)?),
        "type" => AttrValue::from(json_type(def, value)?),
        "shape" => match value {
            Json::Null => AttrValue::from(TensorShapeProto {
                dim: Vec::new(),
                unknown_rank: true,
            }),
            _ => shape_value(
                list(value)?
                    .iter()
                    .map(|d| int(d).ok_or_else(bad))
                    .collect::<Result<Vec<_>, _>>()?,
            ),
        },
        "list(int)" => AttrValue::from(ListValue {
            i: list(value)?
                .iter()
                .map(|v| int(v).ok_or_else(bad))
                .collect::<Result<_, _>>()?,
            ..Default::default()
        }),
        "list(float)" => AttrValue::from(ListValue {
            f: list(value)?
                .iter()
                .map(|v| json_float(v).ok_or_else(bad))
                .collect::<Result<_, _>>()?,
            ..Default::default()
        }),
        "list(bool)" => AttrValue::from(ListValue {
            b: list(value)?
                .iter()
                .map(|v| v.as_bool().ok_or_else(bad))
                .collect::<Result<_, _>>()?,
            ..Default::default()
        }),
        "list(type)" => AttrValue::from(ListValue {
            r#type: list(value)?
                .iter()
                .map(|v| json_type(def, v).map(|d| d as i32))
                .collect::<Result<_, _>>()?,
            ..Default::default()
        }),
        "list(string)" => AttrValue::from(ListValue {
            s: list(value)?
                .iter()
                .map(|v| v.as_str().map(|s| s.as_bytes().to_vec()).ok_or_else(bad))
                .collect::<Result<_, _>>()?,
            ..Default::default()
        }),
        _ => return Err(unsupported(def)),
    })
}

/// A float from JSON: a number, or the names the Python package gives
/// the values JSON has no number for (`NaN`, `Infinity`, `-Infinity`).
fn json_float(value: &Json) -> Option<f32> {
    match value {
        Json::String(s) if s == "NaN" => Some(f32::NAN),
        Json::String(s) if s == "Infinity" => Some(f32::INFINITY),
        Json::String(s) if s == "-Infinity" => Some(f32::NEG_INFINITY),
        other => other.as_f64().map(|f| f as f32),
    }
}

fn json_type(def: &AttrDef, value: &Json) -> Result<DataType, CallError> {
    match value {
        Json::String(name) => type_named(def, name),
        Json::Number(n) if n.is_i64() => type_value(def, n.as_i64().unwrap_or_default()),
        other => Err(kind_error(def, other)),
    }
}

// ------------------------------------------------------------ to XLA

/// How the Python package passes attr `def` with `value` to
/// `jax.ffi.ffi_call`: `{"name", "kind", "value"}`, `kind` a NumPy dtype
/// name (`int64`, `float32`, `bool`, `int32`), the same with `[]` for an
/// array, or `string`.
pub fn call_attr(def: &AttrDef, value: &AttrValue) -> Result<Json, CallError> {
    let (kind, v) = match (def.r#type.as_str(), &value.value) {
        ("int", Some(Value::I(i))) => ("int64", json!(i)),
        ("float", Some(Value::F(f))) => ("float32", json!(f)),
        ("bool", Some(Value::B(b))) => ("bool", json!(b)),
        ("string", Some(Value::S(s))) => match std::str::from_utf8(s) {
            Ok(s) => ("string", json!(s)),
            Err(_) => {
                return Err(CallError::Unsupported(format!(
                    "attr '{}' is not UTF-8, which XLA string attributes must be",
                    def.name
                )));
            }
        },
        ("type", Some(Value::Type(t))) => ("int32", json!(t)),
        ("shape", Some(Value::Shape(shape))) if !shape.unknown_rank => (
            "int64[]",
            json!(shape.dim.iter().map(|d| d.size).collect::<Vec<_>>()),
        ),
        ("list(int)", Some(Value::List(l))) => ("int64[]", json!(l.i)),
        ("list(float)", Some(Value::List(l))) => ("float32[]", json!(l.f)),
        ("list(bool)", Some(Value::List(l))) => ("bool[]", json!(l.b)),
        ("list(type)", Some(Value::List(l))) => ("int32[]", json!(l.r#type)),
        ("shape", Some(Value::Shape(_))) => {
            return Err(CallError::Unsupported(format!(
                "attr '{}' is a shape of unknown rank, which an XLA attribute cannot carry",
                def.name
            )));
        }
        _ => return Err(unsupported(def)),
    };
    Ok(json!({"name": def.name, "kind": kind, "value": v}))
}

// ---------------------------------------------------------- from XLA

/// One attribute of XLA's call frame, as read.
enum XlaAttr {
    Ints(Vec<i64>, bool),
    Floats(Vec<f64>, bool),
    Bools(Vec<bool>, bool),
    Text(String),
    Other(&'static str),
}

impl std::fmt::Display for XlaAttr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let scalar = |s: bool| if s { "a scalar" } else { "an array" };
        match self {
            XlaAttr::Ints(_, s) => write!(f, "{} of integers", scalar(*s)),
            XlaAttr::Floats(_, s) => write!(f, "{} of floats", scalar(*s)),
            XlaAttr::Bools(_, s) => write!(f, "{} of bools", scalar(*s)),
            XlaAttr::Text(_) => write!(f, "a string"),
            XlaAttr::Other(what) => write!(f, "{what}"),
        }
    }
}

/// The attrs of XLA's call frame, read against the op's attr types.
///
/// # Safety
/// `attrs` must be the live call frame's attributes (XLA's promise for the
/// duration of the call).
pub unsafe fn from_xla(op_def: &OpDef, attrs: &ffi::Attrs) -> Result<Vec<NamedAttr>, CallError> {
    if !ffi::covers(attrs.struct_size, ffi::ATTRS_SIZE) {
        return Err(CallError::Internal(format!(
            "XLA's attributes struct is {} bytes, this handler needs {}",
            attrs.struct_size,
            ffi::ATTRS_SIZE
        )));
    }
    let count = usize::try_from(attrs.size).unwrap_or(0);
    let mut out = Vec::with_capacity(count);
    for i in 0..count {
        // SAFETY: XLA gives `size` entries in each of the three arrays,
        // each name a live byte span.
        let (kind, name, raw) = unsafe {
            let span = &**attrs.names.add(i);
            (
                *attrs.types.add(i),
                bytes_to_string(span.ptr.cast(), span.len),
                *attrs.attrs.add(i),
            )
        };
        let def = attr_def(op_def, &name)?;
        // SAFETY: `raw` points at the attribute of type `kind`.
        let read = unsafe { read_attr(kind, raw) };
        out.push((name, xla_value(def, read)?));
    }
    Ok(out)
}

/// # Safety
/// `ptr` must be valid for `len` bytes (or `len` be 0).
unsafe fn bytes_to_string(ptr: *const u8, len: usize) -> String {
    if len == 0 || ptr.is_null() {
        return String::new();
    }
    // SAFETY: the caller's promise.
    String::from_utf8_lossy(unsafe { std::slice::from_raw_parts(ptr, len) }).into_owned()
}

/// # Safety
/// `raw` must point at an attribute of XLA type `kind`.
unsafe fn read_attr(kind: c_int, raw: *mut std::ffi::c_void) -> XlaAttr {
    match kind {
        ffi::attr_type::SCALAR => {
            // SAFETY: a scalar attribute is an `XLA_FFI_Scalar`.
            let scalar = unsafe { &*raw.cast::<ffi::Scalar>() };
            // SAFETY: its value holds one element of its dtype.
            unsafe { elements(scalar.dtype, scalar.value, 1, true) }
        }
        ffi::attr_type::ARRAY => {
            // SAFETY: an array attribute is an `XLA_FFI_Array`.
            let array = unsafe { &*raw.cast::<ffi::Array>() };
            // SAFETY: its data holds `size` elements of its dtype.
            unsafe { elements(array.dtype, array.data, array.size, false) }
        }
        ffi::attr_type::STRING => {
            // SAFETY: a string attribute is an `XLA_FFI_ByteSpan`.
            let span = unsafe { &*raw.cast::<ffi::ByteSpan>() };
            // SAFETY: the span's bytes are live for the call.
            XlaAttr::Text(unsafe { bytes_to_string(span.ptr.cast(), span.len) })
        }
        ffi::attr_type::DICTIONARY => XlaAttr::Other("a dictionary"),
        _ => XlaAttr::Other("an attribute of unknown kind"),
    }
}

/// # Safety
/// `data` must hold `n` elements of XLA type `dtype` (or `n` be 0).
unsafe fn elements(dtype: c_int, data: *const std::ffi::c_void, n: usize, scalar: bool) -> XlaAttr {
    macro_rules! read {
        ($t:ty) => {{
            if n == 0 || data.is_null() {
                Vec::new()
            } else {
                // SAFETY: the caller's promise; XLA's attribute storage is
                // aligned for its element type.
                unsafe { std::slice::from_raw_parts(data.cast::<$t>(), n) }.to_vec()
            }
        }};
    }
    let ints = |v: Vec<i64>| XlaAttr::Ints(v, scalar);
    match dtype {
        1 => XlaAttr::Bools(read!(u8).into_iter().map(|b| b != 0).collect(), scalar),
        2 => ints(read!(i8).into_iter().map(i64::from).collect()),
        3 => ints(read!(i16).into_iter().map(i64::from).collect()),
        4 => ints(read!(i32).into_iter().map(i64::from).collect()),
        5 => ints(read!(i64)),
        6 => ints(read!(u8).into_iter().map(i64::from).collect()),
        7 => ints(read!(u16).into_iter().map(i64::from).collect()),
        8 => ints(read!(u32).into_iter().map(i64::from).collect()),
        9 => ints(read!(u64).into_iter().map(|v| v as i64).collect()),
        11 => XlaAttr::Floats(read!(f32).into_iter().map(f64::from).collect(), scalar),
        12 => XlaAttr::Floats(read!(f64), scalar),
        _ => XlaAttr::Other("an attribute of an element type opreg does not read"),
    }
}

fn xla_value(def: &AttrDef, read: XlaAttr) -> Result<AttrValue, CallError> {
    let one = |v: &[i64]| v.first().copied();
    Ok(match (def.r#type.as_str(), &read) {
        ("int", XlaAttr::Ints(v, true)) => AttrValue::from(one(v).unwrap_or_default()),
        ("float", XlaAttr::Floats(v, true)) => {
            AttrValue::from(v.first().copied().unwrap_or_default() as f32)
        }
        ("float", XlaAttr::Ints(v, true)) => AttrValue::from(one(v).unwrap_or_default() as f32),
        ("bool", XlaAttr::Bools(v, true)) => {
            AttrValue::from(v.first().copied().unwrap_or_default())
        }
        ("string", XlaAttr::Text(s)) => AttrValue::from(s.as_str()),
        ("type", XlaAttr::Ints(v, true)) => {
            AttrValue::from(type_value(def, one(v).unwrap_or_default())?)
        }
        ("type", XlaAttr::Text(name)) => AttrValue::from(type_named(def, name)?),
        ("shape", XlaAttr::Ints(v, false)) => shape_value(v.iter().copied()),
        ("list(int)", XlaAttr::Ints(v, false)) => AttrValue::from(ListValue {
            i: v.clone(),
            ..Default::default()
        }),
        ("list(float)", XlaAttr::Floats(v, false)) => AttrValue::from(ListValue {
            f: v.iter().map(|&f| f as f32).collect(),
            ..Default::default()
        }),
        ("list(float)", XlaAttr::Ints(v, false)) => AttrValue::from(ListValue {
            f: v.iter().map(|&f| f as f32).collect(),
            ..Default::default()
        }),
        ("list(bool)", XlaAttr::Bools(v, false)) => AttrValue::from(ListValue {
            b: v.clone(),
            ..Default::default()
        }),
        ("list(type)", XlaAttr::Ints(v, false)) => AttrValue::from(ListValue {
            r#type: v
                .iter()
                .map(|&t| type_value(def, t).map(|d| d as i32))
                .collect::<Result<_, _>>()?,
            ..Default::default()
        }),
        ("int" | "float" | "bool" | "string" | "type" | "shape", _)
        | ("list(int)" | "list(float)" | "list(bool)" | "list(type)", _) => {
            return Err(kind_error(def, &read));
        }
        _ => return Err(unsupported(def)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use registry_core::spec::OpSpec;

    fn op() -> OpDef {
        OpSpec::new("Sample")
            .input("x: T")
            .output("y: T")
            .attr("T: type")
            .attr("n: int = 2")
            .attr("scale: float")
            .attr("flag: bool")
            .attr("mode: string")
            .attr("dims: list(int)")
            .attr("out: shape")
            .attr("types: list(type)")
            .attr("names: list(string) = []")
            .build()
            .expect("a valid spec")
    }

    fn def<'a>(op: &'a OpDef, name: &str) -> &'a AttrDef {
        op.attr.iter().find(|a| a.name == name).unwrap()
    }

    #[test]
    fn json_attrs_read_by_the_ops_types_and_go_to_xla_as_numpy_kinds() {
        let op = op();
        let given = json!({
            "T": "float32", "n": 3, "scale": 0.5, "flag": true, "mode": "fast",
            "dims": [1, -1], "out": [2, 3], "types": ["int32", "float"],
        });
        let attrs = from_json(&op, given.as_object().unwrap()).expect("valid attrs");
        let kinds: Vec<Json> = attrs
            .iter()
            .map(|(name, value)| call_attr(def(&op, name), value).expect("expressible"))
            .collect();
        assert!(kinds.contains(&json!({"name": "T", "kind": "int32", "value": 1})));
        assert!(kinds.contains(&json!({"name": "n", "kind": "int64", "value": 3})));
        assert!(kinds.contains(&json!({"name": "scale", "kind": "float32", "value": 0.5})));
        assert!(kinds.contains(&json!({"name": "flag", "kind": "bool", "value": true})));
        assert!(kinds.contains(&json!({"name": "mode", "kind": "string", "value": "fast"})));
        assert!(kinds.contains(&json!({"name": "dims", "kind": "int64[]", "value": [1, -1]})));
        assert!(kinds.contains(&json!({"name": "out", "kind": "int64[]", "value": [2, 3]})));
        assert!(kinds.contains(&json!({"name": "types", "kind": "int32[]", "value": [3, 1]})));
    }

    #[test]
    fn wrong_kinds_unknown_attrs_and_inexpressible_ones_are_named() {
        let op = op();
        let err = |v: Json| {
            from_json(&op, v.as_object().unwrap())
                .unwrap_err()
                .to_string()
        };
        assert_eq!(err(json!({"n": true})), "attr 'n' is a int, got true");
        assert_eq!(
            err(json!({"T": "quux"})),
            "attr 'T' is a type, got 'quux', which is no type name"
        );
        assert!(
            err(json!({"bogus": 1}))
                .starts_with("op 'Sample' has no attr 'bogus' (its attrs: T, n,")
        );
        let names = from_json(&op, json!({"names": ["a"]}).as_object().unwrap()).unwrap();
        let e = call_attr(def(&op, "names"), &names[0].1).unwrap_err();
        assert!(matches!(e, CallError::Unsupported(_)), "{e}");
    }

    #[test]
    fn xla_scalars_and_arrays_of_any_width_read_as_the_attrs_kind() {
        let op = op();
        let i32s = [7i32];
        // SAFETY: one i32 at the pointer.
        let read = unsafe { elements(4, i32s.as_ptr().cast(), 1, true) };
        assert_eq!(
            xla_value(def(&op, "n"), read).unwrap(),
            AttrValue::from(7i64)
        );
        let f64s = [0.25f64, 2.0];
        // SAFETY: two f64s at the pointer.
        let read = unsafe { elements(12, f64s.as_ptr().cast(), 2, false) };
        let value = xla_value(def(&op, "dims"), read).unwrap_err();
        assert_eq!(
            value.to_string(),
            "attr 'dims' is a list(int), got an array of floats"
        );
        let bools = [1u8];
        // SAFETY: one byte at the pointer.
        let read = unsafe { elements(1, bools.as_ptr().cast(), 1, true) };
        assert_eq!(
            xla_value(def(&op, "flag"), read).unwrap(),
            AttrValue::from(true)
        );
        let read = XlaAttr::Ints(vec![3], true);
        assert_eq!(
            xla_value(def(&op, "T"), read).unwrap(),
            AttrValue::from(DataType::DtInt32)
        );
        let read = XlaAttr::Ints(vec![99], true);
        assert!(xla_value(def(&op, "T"), read).is_err());
    }
}

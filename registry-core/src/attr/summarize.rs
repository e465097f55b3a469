//! Short text forms of attr values, as TensorFlow prints them in node
//! summaries and "no kernel registered" messages (`SummarizeAttrValue`).

use std::fmt::Write;

use opreg_proto::attr_value::Value;
use opreg_proto::{AttrValue, DataType, NodeDef, TensorShapeProto};

/// `DT_FLOAT` for a raw dtype value (or the number when unknown).
pub(crate) fn dtype_name(raw: i32) -> String {
    match DataType::try_from(raw) {
        Ok(t) => t.as_str_name().to_owned(),
        Err(_) => raw.to_string(),
    }
}

/// A shape in TF's summary form: `[2,?,3]`, `[]` for a scalar,
/// `<unknown>` for an unknown rank.
///
/// ```
/// use registry_core::attr::summarize_shape;
/// use registry_core::proto::TensorShapeProto;
/// use registry_core::proto::tensor_shape_proto::Dim;
/// let dims = [2, -1].map(|size| Dim { size, ..Default::default() });
/// let shape = TensorShapeProto { dim: dims.to_vec(), ..Default::default() };
/// assert_eq!(summarize_shape(&shape), "[2,?]");
/// ```
pub fn summarize_shape(shape: &TensorShapeProto) -> String {
    if shape.unknown_rank {
        return "<unknown>".into();
    }
    let dims: Vec<String> = shape
        .dim
        .iter()
        .map(|d| {
            if d.size < 0 {
                "?".to_owned()
            } else {
                d.size.to_string()
            }
        })
        .collect();
    format!("[{}]", dims.join(","))
}

/// An attr value in TF's summary form: `DT_FLOAT`, `3`, `true`, `"NHWC"`,
/// `[1, 2]`, `[DT_FLOAT, DT_INT32]`.
///
/// ```
/// use registry_core::attr::summarize_attr_value;
/// use registry_core::proto::{AttrValue, attr_value::Value, DataType};
/// let v = AttrValue { value: Some(Value::Type(DataType::DtFloat as i32)) };
/// assert_eq!(summarize_attr_value(&v), "DT_FLOAT");
/// ```
pub fn summarize_attr_value(value: &AttrValue) -> String {
    match &value.value {
        None => "<Unknown AttrValue type>".into(),
        Some(Value::S(s)) => format!("\"{}\"", String::from_utf8_lossy(s).escape_default()),
        Some(Value::I(i)) => i.to_string(),
        Some(Value::F(f)) => format!("{f}"),
        Some(Value::B(b)) => b.to_string(),
        Some(Value::Type(t)) => dtype_name(*t),
        Some(Value::Shape(s)) => summarize_shape(s),
        Some(Value::Tensor(_)) => "<Tensor>".into(),
        Some(Value::Func(f)) => f.name.clone(),
        Some(Value::Placeholder(p)) => format!("${p}"),
        Some(Value::List(l)) => {
            let mut items: Vec<String> = Vec::new();
            items.extend(
                l.s.iter()
                    .map(|s| format!("\"{}\"", String::from_utf8_lossy(s).escape_default())),
            );
            items.extend(l.i.iter().map(i64::to_string));
            items.extend(l.f.iter().map(|f| format!("{f}")));
            items.extend(l.b.iter().map(bool::to_string));
            items.extend(l.r#type.iter().map(|&t| dtype_name(t)));
            items.extend(l.shape.iter().map(|s| {
                summarize_attr_value(&AttrValue {
                    value: Some(Value::Shape(s.clone())),
                })
            }));
            items.extend(l.tensor.iter().map(|_| "<Tensor>".to_owned()));
            items.extend(l.func.iter().map(|f| f.name.clone()));
            format!("[{}]", items.join(", "))
        }
    }
}

/// A node's attrs as `name=value` pairs sorted by name, skipping internal
/// (`_`-prefixed) attrs (TF's `SummarizeAttrs`).
pub fn summarize_node_attrs(node: &NodeDef) -> String {
    let mut out = String::new();
    for (name, value) in &node.attr {
        if name.starts_with('_') {
            continue;
        }
        if !out.is_empty() {
            out.push_str(", ");
        }
        let _ = write!(out, "{name}={}", summarize_attr_value(value));
    }
    out
}

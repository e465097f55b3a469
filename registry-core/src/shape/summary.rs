//! TF's `SummarizeNodeDef`: `{{node name}} = Op[attr=value, ...](inputs)`,
//! for error messages.

use std::fmt::Write;

use opreg_proto::attr_value::{ListValue, Value};
use opreg_proto::{AttrValue, DataType, DataTypeExt, NodeDef, OpDef, TensorProto};

use super::Shape;

/// The summary of `node`: its attrs (sorted by name, with the op's defaults
/// for those it leaves out) and its inputs.
pub(crate) fn summarize_node(node: &NodeDef, op_def: &OpDef) -> String {
    let mut out = format!("{{{{node {}}}}} = {}[", node.name, node.op);
    let mut attrs: Vec<(&str, &AttrValue)> =
        node.attr.iter().map(|(k, v)| (k.as_str(), v)).collect();
    for def in &op_def.attr {
        if let Some(default) = &def.default_value
            && !node.attr.contains_key(&def.name)
        {
            attrs.push((&def.name, default));
        }
    }
    attrs.sort_by(|a, b| a.0.cmp(b.0));
    for (i, (name, value)) in attrs.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        let _ = write!(out, "{name}=");
        summarize_value(&mut out, value.value.as_ref());
    }
    out.push_str("](");
    out.push_str(&node.input.join(", "));
    out.push(')');
    out
}

fn type_name(dtype: i32) -> String {
    match DataType::try_from(dtype) {
        Ok(t) => t.as_str_name().to_owned(),
        Err(_) => format!("<invalid type {dtype}>"),
    }
}

fn string_literal(out: &mut String, bytes: &[u8]) {
    out.push('"');
    for c in bytes.escape_ascii() {
        out.push(char::from(c));
    }
    out.push('"');
}

fn tensor(out: &mut String, t: &TensorProto) {
    let dtype = DataType::try_from(t.dtype)
        .map(|d| d.type_name())
        .unwrap_or("<invalid>");
    let shape = match &t.tensor_shape {
        Some(s) => Shape::from_proto(s).map_or_else(|_| "<invalid>".to_owned(), |s| s.to_string()),
        None => "[]".to_owned(),
    };
    let _ = write!(out, "<Tensor<type: {dtype} shape: {shape}>>");
}

fn list(out: &mut String, l: &ListValue) {
    let mut items: Vec<String> = Vec::new();
    items.extend(l.s.iter().map(|s| {
        let mut o = String::new();
        string_literal(&mut o, s);
        o
    }));
    items.extend(l.i.iter().map(i64::to_string));
    items.extend(l.f.iter().map(f32::to_string));
    items.extend(l.b.iter().map(bool::to_string));
    items.extend(l.r#type.iter().map(|t| type_name(*t)));
    items.extend(
        l.shape.iter().map(|s| {
            Shape::from_proto(s).map_or_else(|_| "<invalid>".to_owned(), |s| s.to_string())
        }),
    );
    items.extend(l.tensor.iter().map(|t| {
        let mut o = String::new();
        tensor(&mut o, t);
        o
    }));
    items.extend(l.func.iter().map(|f| f.name.clone()));
    out.push('[');
    out.push_str(&items.join(", "));
    out.push(']');
}

fn summarize_value(out: &mut String, value: Option<&Value>) {
    match value {
        None => out.push_str("<Unknown AttrValue type>"),
        Some(Value::S(s)) => string_literal(out, s),
        Some(Value::I(i)) => {
            let _ = write!(out, "{i}");
        }
        Some(Value::F(f)) => {
            let _ = write!(out, "{f}");
        }
        Some(Value::B(b)) => {
            let _ = write!(out, "{b}");
        }
        Some(Value::Type(t)) => out.push_str(&type_name(*t)),
        Some(Value::Shape(s)) => match Shape::from_proto(s) {
            Ok(s) if !s.is_rank_known() => out.push_str("<unknown>"),
            Ok(s) => {
                let _ = write!(out, "{s}");
            }
            Err(_) => out.push_str("<invalid shape>"),
        },
        Some(Value::Tensor(t)) => tensor(out, t),
        Some(Value::List(l)) => list(out, l),
        Some(Value::Placeholder(p)) => {
            let _ = write!(out, "${p}");
        }
        Some(Value::Func(f)) => out.push_str(&f.name),
    }
}

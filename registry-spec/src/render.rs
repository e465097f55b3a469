//! Writing an [`OpDef`] back as spec strings: the inverse of
//! [`OpSpec::build`], exact for every OpDef the parser can produce.
//!
//! [`op_spec`] renders a whole op; [`arg_spec`], [`attr_spec`] and
//! [`doc_text`] render its parts, and [`arg_type`], [`attr_type`],
//! [`attr_value`] and [`list_items`] the pieces after `name: ` that people
//! read (the CLI's `ops show` uses them).
//!
//! Exactness rules the renderer keeps:
//! - type sets are written element by element (`numbertype` comes back as
//!   its 19 types in TF's order), so their order and duplicates survive;
//! - implied minimums (`N * T` gives `N` a minimum of 1) are written out;
//! - floats are written as the shortest decimal that reads back to the same
//!   `f32` bits (`0.1`, `1e-5`, `inf`, `-inf`, `nan`, `-nan`, `-0.0`);
//! - strings are single-quoted, with `\\`, `\'`, `\n`, `\t`, `\r` escapes and
//!   three-digit octal for other control bytes and for bytes that are not
//!   UTF-8;
//! - shape, tensor and func defaults are written as protobuf text format in
//!   braces (`{ dim { size: 3 } }`).
//!
//! What the spec language cannot say is not written, so these OpDefs render
//! to a spec that fails to build or builds a different OpDef:
//! - `experimental_full_type` or `handle_data` on an arg (TF's type
//!   constructors: 150 ops of TF 2.21's registry; [`OpSpec::type_ctor`]
//!   builds `full_type::Unary`, but rendering does not write it back);
//! - a `list(type)` attr without minimum used as an arg's type list (a
//!   spec implies minimum 1);
//! - a default `AttrValue` with no value set (`= []` sets an empty list);
//! - allowed values on an attr that is not a type or string attr, or a type
//!   with `_` in its name (`float8_e5m2`) in an allowed set;
//! - NaNs with a payload, and a `-nan` inside a tensor default (protobuf
//!   text, as TF and Python write it, has no sign for NaN);
//! - Doc text the Doc format cannot hold (a description without a summary,
//!   lines with trailing spaces, a description line that reads `name:`).
//!
//! Compare `op_spec(&op_def).build()` with the original to know.

use std::fmt::Write;

use opreg_proto::attr_value::{ListValue, Value};
use opreg_proto::op_def::{ArgDef, AttrDef};
use opreg_proto::{AttrValue, DataType, DataTypeExt, OpDef, TextFormat};

use crate::spec::OpSpec;

/// The spec strings that build `op_def`: attrs, inputs, outputs, control
/// outputs, Doc text, flags and deprecation. For every OpDef the parser
/// produced, `op_spec(&op_def).build()` gives `op_def` back, byte for byte.
///
/// ```
/// use registry_spec::{OpSpec, op_spec};
///
/// let op_def = OpSpec::new("Demo")
///     .input("values: N * T")
///     .output("sum: T")
///     .attr("N: int >= 1")
///     .attr("T: numbertype = DT_FLOAT")
///     .attr("alpha: float = 0.1")
///     .build()
///     .unwrap();
/// let spec = op_spec(&op_def);
/// assert_eq!(spec.inputs, ["values: N * T"]);
/// assert_eq!(spec.attrs[2], "alpha: float = 0.1");
/// assert_eq!(spec.build().unwrap(), op_def);
/// ```
pub fn op_spec(op_def: &OpDef) -> OpSpec {
    let mut spec = OpSpec::new(op_def.name.clone());
    spec.attrs = op_def.attr.iter().map(attr_spec).collect();
    spec.inputs = op_def.input_arg.iter().map(arg_spec).collect();
    spec.outputs = op_def.output_arg.iter().map(arg_spec).collect();
    spec.control_outputs = op_def.control_output.clone();
    spec.docs.extend(doc_text(op_def));
    spec.flags.commutative = op_def.is_commutative;
    spec.flags.aggregate = op_def.is_aggregate;
    spec.flags.stateful = op_def.is_stateful;
    spec.flags.allows_uninitialized_input = op_def.allows_uninitialized_input;
    spec.flags.distributed_communication = op_def.is_distributed_communication;
    if let Some(deprecation) = &op_def.deprecation {
        spec = spec.deprecated(deprecation.version, deprecation.explanation.clone());
    }
    spec
}

/// An input or output spec: `name: ` and its [`arg_type`].
///
/// ```
/// let op = registry_spec::OpSpec::new("X").input("x: Ref(float)").build().unwrap();
/// assert_eq!(registry_spec::render::arg_spec(&op.input_arg[0]), "x: Ref(float)");
/// ```
pub fn arg_spec(arg: &ArgDef) -> String {
    format!("{}: {}", arg.name, arg_type(arg))
}

/// The type of an input or output in spec syntax: `float`, `T`, `N * T`,
/// `N * int32`, `Tlist`, `Ref(T)`.
///
/// ```
/// use registry_spec::{OpSpec, render::arg_type};
/// let op = OpSpec::new("X")
///     .attr("N: int >= 2")
///     .attr("T: type")
///     .input("x: Ref(N * T)")
///     .build()
///     .unwrap();
/// assert_eq!(arg_type(&op.input_arg[0]), "Ref(N * T)");
/// ```
pub fn arg_type(arg: &ArgDef) -> String {
    let base = if !arg.type_list_attr.is_empty() {
        arg.type_list_attr.clone()
    } else {
        let element = if arg.type_attr.is_empty() {
            type_name(arg.r#type)
        } else {
            arg.type_attr.clone()
        };
        if arg.number_attr.is_empty() {
            element
        } else {
            format!("{} * {element}", arg.number_attr)
        }
    };
    if arg.is_ref {
        format!("Ref({base})")
    } else {
        base
    }
}

/// An attr spec: `name: ` and its [`attr_type`], then ` = ` and its default
/// as [`attr_value`] writes it.
///
/// ```
/// use registry_spec::{OpSpec, render::attr_spec};
/// let op = OpSpec::new("X")
///     .attr("padding: {'SAME', 'VALID'} = 'SAME'")
///     .attr("shape: shape = { dim { size: -1 } }")
///     .build()
///     .unwrap();
/// assert_eq!(attr_spec(&op.attr[0]), "padding: {'SAME', 'VALID'} = 'SAME'");
/// assert_eq!(attr_spec(&op.attr[1]), "shape: shape = { dim { size: -1 } }");
/// ```
pub fn attr_spec(attr: &AttrDef) -> String {
    let mut spec = format!("{}: {}", attr.name, attr_type(attr));
    if let Some(default) = &attr.default_value {
        let _ = write!(spec, " = {}", attr_value(default));
    }
    spec
}

/// The type of an attr in spec syntax, with its allowed values and minimum
/// but without its default: `int >= 1`, `{float, int32}`,
/// `list({'a', 'b'}) >= 2`, `shape`.
///
/// ```
/// use registry_spec::{OpSpec, render::attr_type};
/// let op = OpSpec::new("X").attr("T: list({float, int32}) >= 1").build().unwrap();
/// assert_eq!(attr_type(&op.attr[0]), "list({float, int32}) >= 1");
/// ```
pub fn attr_type(attr: &AttrDef) -> String {
    let (is_list, base) = match attr
        .r#type
        .strip_prefix("list(")
        .and_then(|t| t.strip_suffix(')'))
    {
        Some(base) => (true, base),
        None => (false, attr.r#type.as_str()),
    };
    let allowed = match attr.allowed_values.as_ref().map(|v| &v.value) {
        Some(Some(Value::List(list))) => allowed_set(base, list),
        _ => None,
    };
    let mut spec = match allowed {
        Some(set) if is_list => format!("list({set})"),
        Some(set) => set,
        None => attr.r#type.clone(),
    };
    if attr.has_minimum {
        let _ = write!(spec, " >= {}", attr.minimum);
    }
    spec
}

/// `{float, int32}` or `{'a', 'b'}`: the allowed values of a type or string
/// attr as a set; `None` for other attrs (the spec language has no sets for
/// them).
fn allowed_set(base: &str, list: &ListValue) -> Option<String> {
    let items: Vec<String> = match base {
        "type" => list.r#type.iter().map(|&t| type_name(t)).collect(),
        "string" => list.s.iter().map(|s| quote(s)).collect(),
        _ => return None,
    };
    Some(format!("{{{}}}", items.join(", ")))
}

/// An attr value as the spec language writes defaults (TensorFlow's text
/// form of the `AttrValue` field): `-1`, `0.5`, `true`, `'NHWC'`,
/// `DT_INT32`, `[1, 2]`, `{ dim { size: 3 } }`, tensors and functions as
/// protobuf text in braces.
///
/// ```
/// use opreg_proto::AttrValue;
/// use opreg_proto::attr_value::{ListValue, Value};
/// use registry_spec::render::attr_value;
///
/// let floats = ListValue { f: vec![0.1, f32::NEG_INFINITY, 1e-7], ..Default::default() };
/// let value = AttrValue { value: Some(Value::List(floats)) };
/// assert_eq!(attr_value(&value), "[0.1, -inf, 1e-7]");
/// let text = AttrValue { value: Some(Value::S(b"it's\n".to_vec())) };
/// assert_eq!(attr_value(&text), r"'it\'s\n'");
/// ```
pub fn attr_value(value: &AttrValue) -> String {
    match &value.value {
        // A spec cannot write a value-less default: writing nothing makes the
        // spec fail rather than build a different OpDef.
        None => String::new(),
        Some(Value::S(s)) => quote(s),
        Some(Value::I(i)) => i.to_string(),
        Some(Value::F(f)) => float(*f),
        Some(Value::B(b)) => b.to_string(),
        Some(Value::Type(t)) => enum_name(*t),
        Some(Value::Shape(shape)) => braced(shape.to_pbtxt_short()),
        Some(Value::Tensor(tensor)) => braced(tensor.to_pbtxt_short()),
        Some(Value::Func(func)) => braced(func.to_pbtxt_short()),
        Some(Value::Placeholder(name)) => quote(name.as_bytes()),
        Some(Value::List(list)) => {
            let items: Vec<String> = list_items(list).iter().map(attr_value).collect();
            format!("[{}]", items.join(", "))
        }
    }
}

/// The elements of a list value, each as a scalar value, in the order the
/// list fields are declared (strings, ints, floats, bools, types, shapes,
/// tensors, funcs); a list of one kind keeps its order.
///
/// ```
/// use opreg_proto::AttrValue;
/// use opreg_proto::attr_value::{ListValue, Value};
/// let list = ListValue { i: vec![1, 2], ..Default::default() };
/// let items = registry_spec::render::list_items(&list);
/// assert_eq!(items, [AttrValue { value: Some(Value::I(1)) }, AttrValue { value: Some(Value::I(2)) }]);
/// ```
pub fn list_items(list: &ListValue) -> Vec<AttrValue> {
    let values = list
        .s
        .iter()
        .map(|s| Value::S(s.clone()))
        .chain(list.i.iter().map(|&i| Value::I(i)))
        .chain(list.f.iter().map(|&f| Value::F(f)))
        .chain(list.b.iter().map(|&b| Value::B(b)))
        .chain(list.r#type.iter().map(|&t| Value::Type(t)))
        .chain(list.shape.iter().map(|s| Value::Shape(s.clone())))
        .chain(list.tensor.iter().map(|t| Value::Tensor(t.clone())))
        .chain(list.func.iter().map(|f| Value::Func(f.clone())));
    values.map(|v| AttrValue { value: Some(v) }).collect()
}

/// The Doc text that gives `op_def` its summary, description and the
/// descriptions of its inputs, outputs and attrs; `None` when all are empty.
///
/// The summary comes first, then a blank line and the description, then a
/// blank line and one `name: text` block per described arg or attr, its
/// later lines indented by two spaces.
///
/// ```
/// use registry_spec::{OpSpec, render::doc_text};
/// let op = OpSpec::new("X")
///     .input("x: float")
///     .doc("Does X.\n\nAt length.\n\nx: the input,\n  on two lines.")
///     .build()
///     .unwrap();
/// assert_eq!(
///     doc_text(&op).unwrap(),
///     "Does X.\n\nAt length.\n\nx: the input,\n  on two lines."
/// );
/// ```
pub fn doc_text(op_def: &OpDef) -> Option<String> {
    let described: Vec<(&str, &str)> = op_def
        .input_arg
        .iter()
        .chain(&op_def.output_arg)
        .map(|a| (a.name.as_str(), a.description.as_str()))
        .chain(
            op_def
                .attr
                .iter()
                .map(|a| (a.name.as_str(), a.description.as_str())),
        )
        .filter(|(_, description)| !description.is_empty())
        .collect();
    if op_def.summary.is_empty() && op_def.description.is_empty() && described.is_empty() {
        return None;
    }
    let mut text = op_def.summary.clone();
    if !op_def.description.is_empty() {
        text.push_str("\n\n");
        text.push_str(&op_def.description);
    }
    if !described.is_empty() {
        text.push('\n');
    }
    for (name, description) in described {
        let mut lines = description.split('\n');
        let first = lines.next().unwrap_or_default();
        let _ = write!(text, "\n{name}:");
        if !first.is_empty() {
            let _ = write!(text, " {first}");
        }
        for line in lines {
            text.push('\n');
            if !line.is_empty() {
                let _ = write!(text, "  {line}");
            }
        }
    }
    Some(text)
}

/// `{ text }`, or `{ }` for an empty message.
fn braced(text: String) -> String {
    if text.is_empty() {
        "{ }".to_owned()
    } else {
        format!("{{ {text} }}")
    }
}

/// A type's spec name (`float`, `int32`), or a marker the parser rejects
/// for numbers that name no type.
fn type_name(dtype: i32) -> String {
    match DataType::try_from(dtype) {
        Ok(dtype) => dtype.type_name().to_owned(),
        Err(_) => format!("<unknown type {dtype}>"),
    }
}

/// A type as a default writes it (`DT_FLOAT`); the number when it names no
/// type (the text format reads that back as the same number).
fn enum_name(dtype: i32) -> String {
    match DataType::try_from(dtype) {
        Ok(dtype) => dtype.as_str_name().to_owned(),
        Err(_) => dtype.to_string(),
    }
}

/// The shortest text that reads back as the same `f32`: Rust's `{:?}`
/// (`0.1`, `1e-7`, `-0.0`), with `inf`/`nan` spelled as TensorFlow does.
fn float(f: f32) -> String {
    let sign = if f.is_sign_negative() { "-" } else { "" };
    if f.is_nan() {
        format!("{sign}nan")
    } else if f.is_infinite() {
        format!("{sign}inf")
    } else {
        format!("{f:?}")
    }
}

/// A single-quoted string the spec parser unescapes back to `bytes`.
fn quote(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() + 2);
    out.push('\'');
    for chunk in bytes.utf8_chunks() {
        for ch in chunk.valid().chars() {
            match ch {
                '\\' => out.push_str("\\\\"),
                '\'' => out.push_str("\\'"),
                '\n' => out.push_str("\\n"),
                '\t' => out.push_str("\\t"),
                '\r' => out.push_str("\\r"),
                ch if ch.is_control() => {
                    let mut buf = [0u8; 4];
                    for &b in ch.encode_utf8(&mut buf).as_bytes() {
                        octal(&mut out, b);
                    }
                }
                ch => out.push(ch),
            }
        }
        for &b in chunk.invalid() {
            octal(&mut out, b);
        }
    }
    out.push('\'');
    out
}

fn octal(out: &mut String, byte: u8) {
    let _ = write!(out, "\\{byte:03o}");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(spec: OpSpec) -> OpDef {
        let op_def = spec.build().expect("the spec builds");
        let again = op_spec(&op_def).build().expect("the rendered spec builds");
        assert_eq!(again, op_def, "rendered as {:?}", op_spec(&op_def));
        op_def
    }

    #[test]
    fn floats_keep_their_bits() {
        for f in [
            0.1f32,
            -0.0,
            1e-45,
            f32::MAX,
            f32::MIN_POSITIVE,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            -f32::NAN,
            16777217.0,
        ] {
            let spec = OpSpec::new("F").attr(format!("f: float = {}", float(f)));
            let op = spec.build().unwrap();
            let Some(Value::F(back)) = op.attr[0].default_value.as_ref().unwrap().value else {
                panic!("a float default")
            };
            assert_eq!(back.to_bits(), f.to_bits(), "{f:?} written as {}", float(f));
        }
    }

    #[test]
    fn strings_keep_their_bytes() {
        let bytes = b"a'b\"c\\d\n\t\r\x00\x07\x7f\xff\xc3\xa9 \xe2\x82\xac";
        let value = AttrValue {
            value: Some(Value::S(bytes.to_vec())),
        };
        let spec = OpSpec::new("S")
            .attr(format!("s: string = {}", attr_value(&value)))
            .attr(format!("t: {{{}, 'x'}}", quote(bytes)));
        let op = round_trip(spec);
        assert_eq!(op.attr[0].default_value, Some(value));
        assert_eq!(quote("é€".as_bytes()), "'é€'");
    }

    #[test]
    fn every_kind_of_default() {
        round_trip(
            OpSpec::new("Defaults")
                .attr("a: int = -9223372036854775808")
                .attr("b: list(float) = [1.5, -inf, 0.1]")
                .attr("c: list(string) >= 1 = ['x', 'y\\n']")
                .attr("d: list(type) = [DT_INT32, DT_FLOAT]")
                .attr("e: list(shape) = [{ dim { size: 2 } }, { unknown_rank: true }, {}]")
                .attr("f: tensor = { dtype: DT_STRING tensor_shape { } string_val: 'q\\001' }")
                .attr("g: list(tensor) = [{ dtype: DT_FLOAT float_val: 0.1 }]")
                .attr("h: func = { name: 'fn' attr { key: 'k' value { i: 3 } } }")
                .attr("i: list(func) = []")
                .attr("j: bool = false")
                .attr("k: list(bool) = [true, false]")
                .attr("l: shape = {}")
                .attr("m: int >= -3 = -3"),
        );
    }

    #[test]
    fn docs_and_flags() {
        round_trip(
            OpSpec::new("Documented")
                .attr("T: {float, numbertype}")
                .input("x: T")
                .output("y: T")
                .control_output("side")
                .doc(
                    "Summary.\n\n  Indented description\n\nwith a blank line.\n\n\
                     x:\n  starts on the next line\n\n    and indents.\n\
                     T: the type.",
                )
                .commutative()
                .aggregate()
                .stateful()
                .allows_uninitialized_input()
                .distributed_communication()
                .deprecated(7, "Use Y."),
        );
    }
}

//! Writes messages in protobuf text format exactly as TensorFlow's C++
//! `TextFormat::Printer` does: fields in field-number order, one line per
//! value of a repeated field, `name {` blocks for messages, map entries as
//! `key`/`value` blocks, strings C-escaped (octal for non-printable bytes).
//! Floats are written as TensorFlow's Python API writes graph files
//! (`tf.io.write_graph`): the shortest decimal that reads back to the same
//! value, in Python's `repr` form (`2.0`, `0.1`, `1e-05`), so files we write
//! diff cleanly against TensorFlow's.

use std::fmt::Write;

use prost_reflect::{DynamicMessage, FieldDescriptor, Kind, MapKey, Value};

/// Multi-line (`indent` = Some(2)) or single-line (`None`) text format.
pub(crate) fn print(message: &DynamicMessage, pretty: bool) -> String {
    let mut out = String::new();
    write_message(&mut out, message, 0, pretty);
    if !pretty {
        let trimmed = out.trim_end().len();
        out.truncate(trimmed);
    }
    out
}

fn write_message(out: &mut String, message: &DynamicMessage, depth: usize, pretty: bool) {
    let mut fields: Vec<_> = message.fields().collect();
    fields.sort_by_key(|(field, _)| field.number());
    for (field, value) in fields {
        match value {
            Value::List(items) => {
                for item in items {
                    write_field(out, &field, item, depth, pretty);
                }
            }
            Value::Map(map) => {
                let Kind::Message(entry) = field.kind() else {
                    continue;
                };
                let (key_field, value_field) =
                    (entry.map_entry_key_field(), entry.map_entry_value_field());
                let mut entries: Vec<_> = map.iter().collect();
                entries.sort_by(|a, b| map_key_cmp(a.0, b.0));
                for (key, value) in entries {
                    open_block(out, field.name(), depth, pretty);
                    write_field(out, &key_field, &map_key_value(key), depth + 1, pretty);
                    write_field(out, &value_field, value, depth + 1, pretty);
                    close_block(out, depth, pretty);
                }
            }
            value => write_field(out, &field, value, depth, pretty),
        }
    }
}

fn map_key_cmp(a: &MapKey, b: &MapKey) -> std::cmp::Ordering {
    match (a, b) {
        (MapKey::String(x), MapKey::String(y)) => x.cmp(y),
        (MapKey::I32(x), MapKey::I32(y)) => x.cmp(y),
        (MapKey::I64(x), MapKey::I64(y)) => x.cmp(y),
        (MapKey::U32(x), MapKey::U32(y)) => x.cmp(y),
        (MapKey::U64(x), MapKey::U64(y)) => x.cmp(y),
        (MapKey::Bool(x), MapKey::Bool(y)) => x.cmp(y),
        _ => std::cmp::Ordering::Equal,
    }
}

fn map_key_value(key: &MapKey) -> Value {
    match key {
        MapKey::String(s) => Value::String(s.clone()),
        MapKey::I32(v) => Value::I32(*v),
        MapKey::I64(v) => Value::I64(*v),
        MapKey::U32(v) => Value::U32(*v),
        MapKey::U64(v) => Value::U64(*v),
        MapKey::Bool(v) => Value::Bool(*v),
    }
}

fn indent(out: &mut String, depth: usize, pretty: bool) {
    if pretty {
        out.extend(std::iter::repeat_n("  ", depth));
    }
}

fn end_line(out: &mut String, pretty: bool) {
    out.push(if pretty { '\n' } else { ' ' });
}

fn open_block(out: &mut String, name: &str, depth: usize, pretty: bool) {
    indent(out, depth, pretty);
    out.push_str(name);
    out.push_str(" {");
    end_line(out, pretty);
}

fn close_block(out: &mut String, depth: usize, pretty: bool) {
    indent(out, depth, pretty);
    out.push('}');
    end_line(out, pretty);
}

fn write_field(
    out: &mut String,
    field: &FieldDescriptor,
    value: &Value,
    depth: usize,
    pretty: bool,
) {
    let name = field.name();
    if let Value::Message(message) = value {
        open_block(out, name, depth, pretty);
        write_message(out, message, depth + 1, pretty);
        close_block(out, depth, pretty);
        return;
    }
    indent(out, depth, pretty);
    out.push_str(name);
    out.push_str(": ");
    write_scalar(out, value, field);
    end_line(out, pretty);
}

fn write_scalar(out: &mut String, value: &Value, field: &FieldDescriptor) {
    match value {
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::I32(v) => write!(out, "{v}").unwrap_or(()),
        Value::I64(v) => write!(out, "{v}").unwrap_or(()),
        Value::U32(v) => write!(out, "{v}").unwrap_or(()),
        Value::U64(v) => write!(out, "{v}").unwrap_or(()),
        Value::F32(v) => out.push_str(&python_repr(shortest_float(*v))),
        Value::F64(v) => out.push_str(&python_repr(*v)),
        Value::String(s) => c_escape_quoted(out, s.as_bytes()),
        Value::Bytes(b) => c_escape_quoted(out, b),
        Value::EnumNumber(number) => {
            let name = field.kind().as_enum().and_then(|e| e.get_value(*number));
            match name {
                Some(v) => out.push_str(v.name()),
                None => write!(out, "{number}").unwrap_or(()),
            }
        }
        // Lists, maps and messages are written by the callers.
        Value::List(_) | Value::Map(_) | Value::Message(_) => {}
    }
}

/// `"..."` with C++ `CEscape`: `\n \r \t \" \' \\`, other non-printable
/// bytes as three-digit octal.
fn c_escape_quoted(out: &mut String, bytes: &[u8]) {
    out.push('"');
    for &b in bytes {
        match b {
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            b'"' => out.push_str("\\\""),
            b'\'' => out.push_str("\\'"),
            b'\\' => out.push_str("\\\\"),
            0x20..=0x7e => out.push(b as char),
            _ => write!(out, "\\{b:03o}").unwrap_or(()),
        }
    }
    out.push('"');
}

/// protobuf's Python `ToShortestFloat`: the value with the fewest
/// significant digits (at least 6) that still reads back as the same f32.
fn shortest_float(value: f32) -> f64 {
    if !value.is_finite() {
        return f64::from(value);
    }
    for precision in 6..=9 {
        if let Ok(rounded) = percent_g(f64::from(value), precision).parse::<f64>()
            && rounded as f32 == value
        {
            return rounded;
        }
    }
    f64::from(value)
}

/// Python's `repr(float)`: shortest round-trip digits, fixed notation with
/// at least one decimal when the exponent is in [-4, 16), else `1e-05` form.
fn python_repr(value: f64) -> String {
    if value.is_nan() {
        return "nan".to_owned();
    }
    if value.is_infinite() {
        return if value > 0.0 {
            "inf".to_owned()
        } else {
            "-inf".to_owned()
        };
    }
    let scientific = format!("{value:e}");
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    if (-4..16).contains(&exponent) {
        let text = format!("{value}");
        if text.contains('.') {
            text
        } else {
            format!("{text}.0")
        }
    } else {
        let sign = if exponent < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", exponent.abs())
    }
}

/// C's `%.{precision}g`.
fn percent_g(value: f64, precision: usize) -> String {
    if value == 0.0 {
        return if value.is_sign_negative() {
            "-0".to_owned()
        } else {
            "0".to_owned()
        };
    }
    let precision = precision.max(1);
    let scientific = format!("{:.*e}", precision - 1, value);
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    if exponent < -4 || exponent >= precision as i32 {
        let mantissa = trim_zeros(mantissa);
        let sign = if exponent < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", exponent.abs())
    } else {
        let decimals = (precision as i32 - 1 - exponent).max(0) as usize;
        trim_zeros(&format!("{value:.decimals$}")).to_owned()
    }
}

fn trim_zeros(text: &str) -> &str {
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.')
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::{percent_g, python_repr, shortest_float};

    #[test]
    fn floats_print_as_python_does() {
        assert_eq!(python_repr(shortest_float(2.0)), "2.0");
        assert_eq!(python_repr(shortest_float(0.1)), "0.1");
        assert_eq!(python_repr(shortest_float(1e-5)), "1e-05");
        assert_eq!(python_repr(shortest_float(-0.0)), "-0.0");
        assert_eq!(python_repr(shortest_float(f32::INFINITY)), "inf");
        assert_eq!(python_repr(1e16), "1e+16");
        assert_eq!(python_repr(123.25), "123.25");
        assert_eq!(python_repr(shortest_float(16777216.0)), "16777216.0");
    }

    #[test]
    fn percent_g_matches_c() {
        assert_eq!(percent_g(1e-5, 6), "1e-05");
        assert_eq!(percent_g(0.5, 6), "0.5");
        assert_eq!(percent_g(1.0, 6), "1");
        assert_eq!(percent_g(123456.0, 6), "123456");
        assert_eq!(percent_g(1234567.0, 6), "1.23457e+06");
        assert_eq!(percent_g(0.0001, 6), "0.0001");
        assert_eq!(percent_g(-2.5, 6), "-2.5");
        assert_eq!(percent_g(0.1f32 as f64, 9), "0.100000001");
    }
}

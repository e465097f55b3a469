//! Attr default values in TensorFlow's text form (`DT_INT32`, `-1`, `1e-05`,
//! `'NHWC'`, `true`, `[1, 2]`, `[]`, `{ dim { size: 3 } }`, tensors).
//!
//! TensorFlow's `ParseAttrValue` wraps the text as `i: <text>` (or
//! `list { i: <text> }`) and parses an `AttrValue` with its own light
//! text-format parser (`proto_text`), whose rules differ from protobuf's
//! standard text format: integers are decimal only (`0x10` is rejected),
//! floats take C's `strtof` forms (`0x1p3`, `infinity`, `-nan`, but not
//! `1.5f`, see [`crate::number`]), no number may have several leading zeros,
//! a bool is `true`, `True`, `1`, `false`, `False` or `0`, and an unknown word
//! after a complete value is skipped (`a: int = 1 2` gives 1). This module follows
//! those rules, driven by the message descriptors, so every message type
//! (shapes, tensors, functions) is covered.

use opreg_proto::AttrValue;
use opreg_proto::prost_reflect::{
    DynamicMessage, FieldDescriptor, Kind, MapKey, MessageDescriptor, Value,
};

use crate::number::{parse_f32, parse_f64, parse_int};
use crate::scanner::{is_letter_digit_underscore, is_space};

/// TF's `ParseAttrValue(type, text)`: the default value of an attr of type
/// `attr_type` written as `text`, or `None` if it does not parse.
pub(crate) fn parse_attr_value(attr_type: &str, text: &str) -> Option<AttrValue> {
    let (is_list, base) = match attr_type.strip_prefix("list(") {
        Some(inner) => (true, inner.strip_suffix(')')?),
        None => (false, attr_type),
    };
    let field = match base {
        "string" => "s",
        "int" => "i",
        "float" => "f",
        "bool" => "b",
        "type" => "type",
        "shape" => "shape",
        "tensor" => "tensor",
        "func" => "func",
        "placeholder" => "placeholder",
        _ => return None,
    };
    let to_parse = if is_list {
        let cleaned = text.trim_matches(|c: char| c.is_ascii() && is_space(c as u8));
        if cleaned.len() < 2 || !cleaned.starts_with('[') || !cleaned.ends_with(']') {
            return None;
        }
        let inner = cleaned[1..].trim_start_matches(|c: char| c.is_ascii() && is_space(c as u8));
        if inner.len() == 1 {
            // "[]": an empty list (TF short-cuts this before parsing).
            return Some(AttrValue {
                value: Some(opreg_proto::attr_value::Value::List(Default::default())),
            });
        }
        format!("list {{ {field}: {text} }}")
    } else {
        format!("{field}: {text}")
    };
    if field == "tensor" && nesting_depth(&to_parse) > MAX_TENSOR_NEST_DEPTH {
        return None;
    }
    let descriptor = opreg_proto::descriptor_pool().get_message_by_name("tensorflow.AttrValue")?;
    let mut parser = Parser {
        text: to_parse.as_bytes(),
        pos: 0,
        replace_oneof: false,
    };
    let message = parser.message(&descriptor, None)?;
    message.transcode_to::<AttrValue>().ok()
}

/// Reads an OpDef written in TensorFlow's text form the way TensorFlow's
/// C++ text parser does (single-quoted strings, a later member of a oneof
/// replacing an earlier one), e.g. the OpDefs of TF's own unit tests.
///
/// ```
/// let op = registry_spec::parse_op_def_text("name: 'X' attr { name: 'a' type: 'int' }").unwrap();
/// assert_eq!(op.attr[0].r#type, "int");
/// ```
pub fn parse_op_def_text(text: &str) -> Option<opreg_proto::OpDef> {
    let descriptor = opreg_proto::descriptor_pool().get_message_by_name("tensorflow.OpDef")?;
    let mut parser = Parser {
        text: text.as_bytes(),
        pos: 0,
        replace_oneof: true,
    };
    parser
        .message(&descriptor, None)?
        .transcode_to::<opreg_proto::OpDef>()
        .ok()
}

/// TF refuses tensor defaults nested deeper than this (`kMaxTensorNestDepth`).
const MAX_TENSOR_NEST_DEPTH: usize = 100;

fn nesting_depth(text: &str) -> usize {
    let (mut depth, mut max) = (0usize, 0usize);
    for b in text.bytes() {
        match b {
            b'{' | b'<' => {
                depth += 1;
                max = max.max(depth);
            }
            b'}' | b'>' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    max
}

struct Parser<'a> {
    text: &'a [u8],
    pos: usize,
    /// TF's C++ parser semantics (a later oneof member replaces an earlier
    /// one) instead of `proto_text`'s (rejected).
    replace_oneof: bool,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.text.get(self.pos).copied()
    }

    /// Spaces and `#` comments.
    fn space(&mut self) {
        loop {
            while self.peek().is_some_and(is_space) {
                self.pos += 1;
            }
            if self.peek() == Some(b'#') {
                while self.peek().is_some_and(|b| b != b'\n') {
                    self.pos += 1;
                }
            } else {
                return;
            }
        }
    }

    fn run(&mut self, class: impl Fn(u8) -> bool) -> &str {
        let start = self.pos;
        while self.peek().is_some_and(&class) {
            self.pos += 1;
        }
        std::str::from_utf8(&self.text[start..self.pos]).unwrap_or("")
    }

    /// A message body; `close` is the closing byte when nested.
    fn message(
        &mut self,
        descriptor: &MessageDescriptor,
        close: Option<u8>,
    ) -> Option<DynamicMessage> {
        let mut message = DynamicMessage::new(descriptor.clone());
        let mut seen: Vec<u32> = Vec::new();
        loop {
            self.space();
            match close {
                Some(c) if self.peek() == Some(c) => {
                    self.pos += 1;
                    self.space();
                    return Some(message);
                }
                None if self.peek().is_none() => return Some(message),
                _ => {}
            }
            let identifier = self.run(is_letter_digit_underscore).to_owned();
            if identifier.is_empty() {
                return None;
            }
            self.space();
            let colon = self.peek() == Some(b':');
            if colon {
                self.pos += 1;
                self.space();
            }
            // TF's parser passes over words that name no field.
            let Some(field) = descriptor.get_field_by_name(&identifier) else {
                continue;
            };
            if field.is_list() || field.is_map() {
                self.repeated(&mut message, &field, colon)?;
            } else {
                if seen.contains(&field.number()) {
                    return None;
                }
                if let Some(oneof) = field.containing_oneof()
                    && oneof.fields().any(|f| message.has_field(&f))
                {
                    if !self.replace_oneof {
                        return None;
                    }
                    for other in oneof.fields() {
                        message.clear_field(&other);
                        seen.retain(|n| *n != other.number());
                    }
                }
                seen.push(field.number());
                let value = self.value(&field, colon)?;
                message.set_field(&field, value);
            }
        }
    }

    fn repeated(
        &mut self,
        message: &mut DynamicMessage,
        field: &FieldDescriptor,
        colon: bool,
    ) -> Option<()> {
        let mut items = Vec::new();
        if self.peek() == Some(b'[') {
            self.pos += 1;
            self.space();
            if self.peek() == Some(b']') {
                self.pos += 1;
            } else {
                loop {
                    items.push(self.value(field, colon)?);
                    self.space();
                    match self.peek() {
                        Some(b',') => {
                            self.pos += 1;
                            self.space();
                        }
                        Some(b']') => {
                            self.pos += 1;
                            break;
                        }
                        _ => return None,
                    }
                }
            }
            self.space();
        } else {
            items.push(self.value(field, colon)?);
        }
        if field.is_map() {
            let Value::Map(map) = message.get_field_mut(field) else {
                return None;
            };
            let entry = field.kind();
            let entry = entry.as_message()?;
            for item in items {
                let Value::Message(m) = item else { return None };
                let key = m.get_field(&entry.map_entry_key_field()).into_owned();
                let value = m.get_field(&entry.map_entry_value_field()).into_owned();
                let key = match key {
                    Value::String(s) => MapKey::String(s),
                    Value::I64(i) => MapKey::I64(i),
                    Value::I32(i) => MapKey::I32(i),
                    Value::U64(i) => MapKey::U64(i),
                    Value::U32(i) => MapKey::U32(i),
                    Value::Bool(b) => MapKey::Bool(b),
                    _ => return None,
                };
                map.insert(key, value);
            }
        } else {
            let Value::List(list) = message.get_field_mut(field) else {
                return None;
            };
            list.extend(items);
        }
        Some(())
    }

    fn value(&mut self, field: &FieldDescriptor, colon: bool) -> Option<Value> {
        let value = match field.kind() {
            Kind::Message(descriptor) => {
                let close = match self.peek()? {
                    b'{' => b'}',
                    b'<' => b'>',
                    _ => return None,
                };
                self.pos += 1;
                Value::Message(self.message(&descriptor, Some(close))?)
            }
            _ if !colon => return None,
            Kind::String => Value::String(String::from_utf8(self.string_literal()?).ok()?),
            Kind::Bytes => Value::Bytes(self.string_literal()?.into()),
            Kind::Bool => {
                let word = self.run(|b| b.is_ascii_alphanumeric());
                let value = match word {
                    "true" | "True" | "1" => true,
                    "false" | "False" | "0" => false,
                    _ => return None,
                };
                Value::Bool(value)
            }
            Kind::Enum(descriptor) => {
                let word = self.run(|b| is_letter_digit_underscore(b) || b == b'-' || b == b'+');
                match descriptor.get_value_by_name(word) {
                    Some(v) => Value::EnumNumber(v.number()),
                    None => Value::EnumNumber(word.parse::<i32>().ok()?),
                }
            }
            kind => {
                let text = self.number()?;
                match kind {
                    Kind::Float => Value::F32(parse_f32(&text)?),
                    Kind::Double => Value::F64(parse_f64(&text)?),
                    Kind::Int32 | Kind::Sint32 | Kind::Sfixed32 => Value::I32(parse_int(&text)?),
                    Kind::Int64 | Kind::Sint64 | Kind::Sfixed64 => Value::I64(parse_int(&text)?),
                    Kind::Uint32 | Kind::Fixed32 => Value::U32(parse_int(&text)?),
                    Kind::Uint64 | Kind::Fixed64 => Value::U64(parse_int(&text)?),
                    _ => return None,
                }
            }
        };
        self.space();
        Some(value)
    }
}

impl Parser<'_> {
    /// A numeric token (TF's `ProtoParseNumericFromScanner`): letters,
    /// digits, `.`, `+`, `-`; at most one leading zero.
    fn number(&mut self) -> Option<String> {
        let text = self
            .run(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'+' | b'-'))
            .to_owned();
        if text.is_empty() {
            return None;
        }
        let mut zeros = 0;
        for ch in text.chars() {
            if ch == '0' {
                zeros += 1;
                if zeros > 1 {
                    return None;
                }
            } else if ch != '-' {
                break;
            }
        }
        Some(text)
    }

    /// A quoted string literal (`'...'` or `"..."`), unescaped.
    fn string_literal(&mut self) -> Option<Vec<u8>> {
        let quote = self.peek().filter(|b| *b == b'"' || *b == b'\'')?;
        let start = self.pos + 1;
        let mut i = start;
        while i < self.text.len() {
            match self.text[i] {
                b'\\' => i += 2,
                b if b == quote => {
                    let escaped = std::str::from_utf8(&self.text[start..i]).ok()?;
                    self.pos = i + 1;
                    return c_unescape(escaped).ok();
                }
                _ => i += 1,
            }
        }
        None
    }
}

/// C-style unescaping as absl's `CUnescape` in TensorFlow 2.21: `\n \t \r
/// \\ \' \" \? \a \b \f \v`, octal `\NNN`, hex `\xHH...` (any number of
/// digits, accumulated in 32 bits as absl does, at most 0xff in the end),
/// `\uXXXX` and `\UXXXXXXXX` (code points, no surrogates, at most
/// 0x10FFFF). The errors are absl's words.
pub(crate) fn c_unescape(text: &str) -> Result<Vec<u8>, String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'\\' {
            out.push(bytes[i]);
            i += 1;
            continue;
        }
        i += 1;
        let Some(&c) = bytes.get(i) else {
            return Err("String cannot end with \\".to_owned());
        };
        // `i` is at the escape's letter (absl's `p`).
        match c {
            b'n' => out.push(b'\n'),
            b't' => out.push(b'\t'),
            b'r' => out.push(b'\r'),
            b'a' => out.push(0x07),
            b'b' => out.push(0x08),
            b'f' => out.push(0x0c),
            b'v' => out.push(0x0b),
            b'\\' | b'\'' | b'"' | b'?' => out.push(c),
            b'0'..=b'7' => {
                let start = i;
                let mut value = u32::from(c - b'0');
                while i + 1 < bytes.len() && i - start < 2 && (b'0'..=b'7').contains(&bytes[i + 1])
                {
                    i += 1;
                    value = value * 8 + u32::from(bytes[i] - b'0');
                }
                if value > 0xff {
                    return Err(format!("Value of \\{} exceeds 0xff", &text[start..=i]));
                }
                out.push(value as u8);
            }
            b'x' | b'X' => {
                if i + 1 >= bytes.len() {
                    return Err("String cannot end with \\x".to_owned());
                }
                if !bytes[i + 1].is_ascii_hexdigit() {
                    return Err("\\x cannot be followed by a non-hex digit".to_owned());
                }
                let start = i;
                let mut value: u32 = 0;
                while i + 1 < bytes.len() && bytes[i + 1].is_ascii_hexdigit() {
                    i += 1;
                    value = (value << 4).wrapping_add(hex_value(bytes[i]));
                }
                if value > 0xff {
                    return Err(format!("Value of \\{} exceeds 0xff", &text[start..=i]));
                }
                out.push(value as u8);
            }
            b'u' | b'U' => {
                let digits = if c == b'u' { 4 } else { 8 };
                let must = format!("\\{} must be followed by {digits} hex digits", c as char);
                let start = i;
                if i + digits >= bytes.len() {
                    return Err(must);
                }
                let mut rune: u32 = 0;
                for _ in 0..digits {
                    if !bytes[i + 1].is_ascii_hexdigit() {
                        return Err(format!("{must}: \\{}", &text[start..=i]));
                    }
                    i += 1;
                    let next = (rune << 4) + hex_value(bytes[i]);
                    if next > 0x10FFFF {
                        return Err(format!(
                            "Value of \\{} exceeds Unicode limit (0x10FFFF)",
                            &text[start..=i]
                        ));
                    }
                    rune = next;
                }
                let Some(ch) = char::from_u32(rune) else {
                    return Err(format!(
                        "invalid surrogate character (0xD800-DFFF): \\{}",
                        &text[start..=i]
                    ));
                };
                let mut buf = [0u8; 4];
                out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
            }
            other => return Err(format!("Unknown escape sequence: \\{}", other as char)),
        }
        i += 1;
    }
    Ok(out)
}

fn hex_value(b: u8) -> u32 {
    (b as char).to_digit(16).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use opreg_proto::attr_value::Value as V;

    fn value(attr_type: &str, text: &str) -> Option<V> {
        parse_attr_value(attr_type, text).map(|v| v.value.expect("a value"))
    }

    #[test]
    fn scalars_follow_tf_rules() {
        assert_eq!(value("int", "-1"), Some(V::I(-1)));
        assert_eq!(
            value("int", "1 2"),
            Some(V::I(1)),
            "TF passes over the extra word"
        );
        assert_eq!(value("int", "0x10"), None);
        assert_eq!(value("int", "007"), None);
        assert_eq!(value("int", "\"foo\""), None);
        assert_eq!(value("float", "1e-5"), Some(V::F(1e-5)));
        assert_eq!(value("float", "-inf"), Some(V::F(f32::NEG_INFINITY)));
        assert_eq!(value("bool", "true"), Some(V::B(true)));
        assert_eq!(value("string", "'NHWC'"), Some(V::S(b"NHWC".to_vec())));
        assert_eq!(value("string", r"'\t'"), Some(V::S(b"\t".to_vec())));
        assert_eq!(value("type", "DT_INT32"), Some(V::Type(3)));
        assert_eq!(value("float", "[1.25]"), None);
    }

    #[test]
    fn lists_need_brackets() {
        let Some(V::List(list)) = value("list(int)", "[1, -2]") else {
            panic!("a list")
        };
        assert_eq!(list.i, vec![1, -2]);
        assert!(matches!(value("list(int)", "[  ]"), Some(V::List(l)) if l.i.is_empty()));
        assert_eq!(value("list(float)", "1.25"), None);
        assert_eq!(value("list(float)", "[[1.25]]"), None);
        assert_eq!(value("list(float)", "["), None);
        assert_eq!(value("list(int)", "[7, \"foo\"]"), None);
    }

    #[test]
    fn messages() {
        let Some(V::Shape(shape)) = value("shape", "{ dim { size: 3 } dim { size: -1 } }") else {
            panic!()
        };
        assert_eq!(
            shape.dim.iter().map(|d| d.size).collect::<Vec<_>>(),
            vec![3, -1]
        );
        let Some(V::Tensor(t)) = value("tensor", "{ dtype: DT_INT32 tensor_shape { } int_val: 1 }")
        else {
            panic!()
        };
        assert_eq!(t.int_val, vec![1]);
    }

    #[test]
    fn unescape() {
        assert_eq!(c_unescape(r"a\n\x41\101").unwrap(), b"a\nAA");
        assert!(c_unescape(r"\q").is_err());
        assert!(c_unescape("\\").is_err());
    }
}

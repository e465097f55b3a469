//! `Attr` specs: `name: type[ >= min][ = default]`, TF's `FinalizeAttr`,
//! plus the angle form `<float, int32>` as a synonym of `{float, int32}`.

use opreg_proto::attr_value::{ListValue, Value};
use opreg_proto::op_def::AttrDef;
use opreg_proto::{AttrValue, OpDef};

use crate::error::SpecErrorKind as K;
use crate::scanner::{
    Cursor, Failure, is_digit, is_letter, is_letter_digit_underscore, is_lower_digit, word_at,
};
use crate::suggest::nearest;
use crate::type_sets::{alias_set, data_type_from_string, type_words};

/// Attr types in the order TF tries them as prefixes.
const SCALAR_TYPES: &[&str] = &[
    "string", "int", "float", "bool", "type", "shape", "tensor", "func",
];
const ALIAS_PREFIXES: &[&str] = &[
    "numbertype",
    "numerictype",
    "quantizedtype",
    "realnumbertype",
    "realnumberictype",
];

/// Parses one attr spec and appends its AttrDef to `op_def` (TF appends the
/// attr before parsing, so a failed attr still occupies its name).
pub(crate) fn parse_attr(spec: &str, op_def: &mut OpDef) -> Result<(), Failure> {
    op_def.attr.push(AttrDef::default());
    let attr = op_def.attr.last_mut().expect("just pushed");
    let mut c = Cursor::new(spec);

    let name = c
        .name_colon(is_letter, is_letter_digit_underscore)
        .ok_or_else(|| {
            let end = spec.find(':').unwrap_or(spec.len());
            Failure::at(K::AttrName, 0..end)
        })?;
    attr.name = name.to_owned();

    let is_list = consume_list_prefix(&mut c);
    let type_start = c.pos();
    let base_type = parse_base_type(&mut c, attr)?;
    c.skip_space();

    if is_list {
        if !c.eat(")") {
            return Err(Failure::at(
                K::ListClose {
                    rest: c.rest().to_owned(),
                },
                word_at(spec, c.pos()),
            ));
        }
        c.skip_space();
        attr.r#type = format!("list({base_type})");
    } else {
        attr.r#type = base_type.to_owned();
    }

    if (is_list || base_type == "int") && c.eat(">=") {
        let after = c.pos();
        match consume_attr_number(&mut c) {
            Some(min) => {
                attr.has_minimum = true;
                attr.minimum = min;
            }
            None => {
                let rest = c.rest().to_owned();
                let span = after..spec.len();
                return Err(Failure::at(K::Minimum { rest }, span));
            }
        }
    }

    if c.eat("=") {
        c.skip_space();
        let start = c.pos();
        let text = c.rest();
        match crate::default_value::parse_attr_value(&attr.r#type, text) {
            Some(value) => attr.default_value = Some(value),
            None => {
                return Err(Failure::at(
                    K::DefaultValue {
                        text: text.to_owned(),
                    },
                    start..spec.len(),
                ));
            }
        }
    } else if !c.is_empty() {
        let rest = c.rest().to_owned();
        let hint = trailing_hint(spec, type_start, c.pos(), base_type);
        return Err(Failure::at(K::Trailing { rest }, c.rest_span()).suggest(hint));
    }
    Ok(())
}

/// For `T: int32` (TF reads `int` then chokes on `32`): the user almost
/// certainly meant a type attr restricted to that type.
fn trailing_hint(spec: &str, type_start: usize, pos: usize, base_type: &str) -> Option<String> {
    let word = &spec[word_at(spec, type_start)];
    if word.len() > base_type.len()
        && word.starts_with(base_type)
        && pos == type_start + base_type.len()
    {
        if data_type_from_string(word).is_some() {
            return Some(format!("{{{word}}}"));
        }
        return nearest(word, SCALAR_TYPES.iter().copied().chain(type_words())).map(str::to_owned);
    }
    None
}

fn consume_list_prefix(c: &mut Cursor<'_>) -> bool {
    let save = *c;
    if c.eat("list") {
        c.skip_space();
        if c.eat("(") {
            c.skip_space();
            return true;
        }
    }
    *c = save;
    false
}

/// The base type: a scalar type word, an alias, or a `{...}`/`<...>` set,
/// filling `allowed_values` for restricted types.
fn parse_base_type(c: &mut Cursor<'_>, attr: &mut AttrDef) -> Result<&'static str, Failure> {
    for ty in SCALAR_TYPES {
        if c.eat(ty) {
            return Ok(ty);
        }
    }
    for alias in ALIAS_PREFIXES {
        let start = c.pos();
        if c.eat(alias) {
            let set = alias_set(alias).ok_or_else(|| {
                Failure::at(
                    K::Invalid(format!("Expected to see a compound type, saw: {alias}")),
                    start..c.pos(),
                )
                .suggest(Some("realnumbertype".to_owned()))
            })?;
            allowed_list(attr)
                .r#type
                .extend(set.iter().map(|t| *t as i32));
            return Ok("type");
        }
    }
    let close = if c.eat("{") {
        b'}'
    } else if c.eat("<") {
        b'>'
    } else {
        let span = c.word_span();
        let word = c.slice(span.clone());
        let hint = if data_type_from_string(word).is_some() {
            Some(format!("{{{word}}}"))
        } else {
            nearest(
                word,
                SCALAR_TYPES
                    .iter()
                    .copied()
                    .chain(ALIAS_PREFIXES.iter().copied()),
            )
            .map(str::to_owned)
        };
        return Err(Failure::at(
            K::AttrType {
                rest: c.rest().to_owned(),
            },
            span,
        )
        .suggest(hint));
    };
    c.skip_space();
    allowed_list(attr);
    if matches!(c.peek(), Some(b'"' | b'\'')) {
        parse_string_set(c, attr, close)?;
        Ok("string")
    } else {
        parse_type_set(c, attr, close)?;
        Ok("type")
    }
}

fn allowed_list(attr: &mut AttrDef) -> &mut ListValue {
    let allowed = attr.allowed_values.get_or_insert_with(AttrValue::default);
    if !matches!(allowed.value, Some(Value::List(_))) {
        allowed.value = Some(Value::List(ListValue::default()));
    }
    match &mut allowed.value {
        Some(Value::List(list)) => list,
        _ => unreachable!("set to a list just above"),
    }
}

/// After an element: `,` (then optional `}` ending the set) or `}`.
/// Returns true when the set is closed.
fn element_separator(c: &mut Cursor<'_>, close: u8, what: &'static str) -> Result<bool, Failure> {
    if c.eat(",") {
        c.skip_space();
        return Ok(c.eat(close_str(close)));
    }
    if c.eat(close_str(close)) {
        return Ok(true);
    }
    let span = c.word_span();
    Err(Failure::at(
        K::SetSeparator {
            what,
            rest: c.rest().to_owned(),
        },
        span,
    ))
}

fn close_str(close: u8) -> &'static str {
    if close == b'}' { "}" } else { ">" }
}

fn parse_type_set(c: &mut Cursor<'_>, attr: &mut AttrDef, close: u8) -> Result<(), Failure> {
    loop {
        let range = c.take_while(is_lower_digit);
        if range.is_empty() {
            let word = c.word_span();
            let hint = {
                let w = c.slice(word.clone());
                if w.contains('_') || w.chars().any(|ch| ch.is_ascii_uppercase()) {
                    nearest(&w.to_ascii_lowercase().replace('_', ""), type_words())
                        .or_else(|| nearest(w, type_words()))
                        .map(str::to_owned)
                } else {
                    None
                }
            };
            return Err(Failure::at(
                K::AttrType {
                    rest: c.rest().to_owned(),
                },
                word,
            )
            .suggest(hint));
        }
        let name = c.slice(range.clone());
        c.skip_space();
        if let Some(set) = alias_set(name) {
            allowed_list(attr)
                .r#type
                .extend(set.iter().map(|t| *t as i32));
        } else if let Some(dt) = data_type_from_string(name) {
            allowed_list(attr).r#type.push(dt as i32);
        } else {
            return Err(Failure::at(K::UnknownTypeName(name.to_owned()), range)
                .suggest(nearest(name, type_words()).map(str::to_owned)));
        }
        if element_separator(c, close, "types")? {
            return Ok(());
        }
    }
}

fn parse_string_set(c: &mut Cursor<'_>, attr: &mut AttrDef, close: u8) -> Result<(), Failure> {
    loop {
        let start = c.pos();
        let Some(escaped) = consume_quoted(c, b'"').or_else(|| consume_quoted(c, b'\'')) else {
            let span = c.word_span();
            return Err(Failure::at(
                K::AllowedString {
                    rest: c.rest().to_owned(),
                },
                span,
            ));
        };
        let unescaped = crate::default_value::c_unescape(escaped).map_err(|reason| {
            Failure::at(
                K::Unescape {
                    text: escaped.to_owned(),
                    reason,
                },
                start..c.pos(),
            )
        })?;
        allowed_list(attr).s.push(unescaped);
        if element_separator(c, close, "strings")? {
            return Ok(());
        }
    }
}

/// TF's `ConsumeQuotedString`: quote, escaped text up to the matching quote,
/// quote, spaces. Returns the text between the quotes (still escaped).
pub(crate) fn consume_quoted<'a>(c: &mut Cursor<'a>, quote: u8) -> Option<&'a str> {
    let save = *c;
    if c.peek() != Some(quote) {
        return None;
    }
    c.set_pos(c.pos() + 1);
    let start = c.pos();
    let bytes = c.rest().as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b if b == quote => {
                let text = c.slice(start..start + i);
                c.set_pos(start + i + 1);
                c.skip_space();
                return Some(text);
            }
            _ => i += 1,
        }
    }
    *c = save;
    None
}

/// TF's `ConsumeAttrNumber`: spaces, optional `-`, digits, spaces; must fit
/// in an i64.
fn consume_attr_number(c: &mut Cursor<'_>) -> Option<i64> {
    let save = *c;
    c.skip_space();
    let start = c.pos();
    c.eat("-");
    if c.take_while(is_digit).is_empty() {
        *c = save;
        return None;
    }
    let text = c.slice(start..c.pos());
    c.skip_space();
    match text.parse::<i64>() {
        Ok(v) => Some(v),
        Err(_) => {
            *c = save;
            None
        }
    }
}

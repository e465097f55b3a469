//! Parsing the arguments of `#[op(...)]`: `key = "spec"`, bare flags,
//! `deprecated(...)`, `shape_fn = path`, `type_ctor = unary(...)`,
//! `crate = path`.
//!
//! Each comma-separated argument is parsed on its own, so one malformed
//! argument is reported and the others are still used (and checked).

use opreg_proto::FullTypeId;
use proc_macro2::{Delimiter, Span, TokenStream, TokenTree};
use quote::ToTokens;
use registry_spec::TypeConstructor;
use syn::ext::IdentExt;
use syn::parse::{ParseStream, Parser};
use syn::{Ident, LitInt, LitStr, Path};

use crate::errors::Errors;

/// Keys that take a spec string and may be repeated.
const SPEC_KEYS: &[&str] = &["input", "output", "attr", "control_output"];
/// Keys that are bare flags.
const FLAG_KEYS: &[&str] = &[
    "commutative",
    "aggregate",
    "stateful",
    "allows_uninitialized_input",
    "distributed_communication",
];
/// Every key `#[op]` knows, for suggestions.
const ALL_KEYS: &[&str] = &[
    "name",
    "input",
    "output",
    "attr",
    "control_output",
    "commutative",
    "aggregate",
    "stateful",
    "allows_uninitialized_input",
    "distributed_communication",
    "deprecated",
    "shape_fn",
    "type_ctor",
    "crate",
];

/// A bare flag (`stateful`).
pub(crate) struct Flag {
    pub(crate) name: &'static str,
}

/// `deprecated(version = N, explanation = "...")`.
pub(crate) struct DeprecatedArg {
    /// The `deprecated` keyword (errors about the call point here).
    pub(crate) key: Ident,
    pub(crate) version: i32,
    pub(crate) explanation: String,
}

/// The parsed arguments of one `#[op(...)]`.
#[derive(Default)]
pub(crate) struct OpArgs {
    pub(crate) name: Option<LitStr>,
    pub(crate) inputs: Vec<LitStr>,
    pub(crate) outputs: Vec<LitStr>,
    pub(crate) attrs: Vec<LitStr>,
    pub(crate) control_outputs: Vec<LitStr>,
    pub(crate) flags: Vec<Flag>,
    pub(crate) deprecations: Vec<DeprecatedArg>,
    /// Every `shape_fn = path` (more than one is a spec error, reported by
    /// registry-spec as TF's "SetShapeFn called twice").
    pub(crate) shape_fns: Vec<(Ident, Path)>,
    /// `type_ctor = unary(TFT_..., "attr")` and its key (errors about it
    /// point there).
    pub(crate) type_ctor: Option<(Ident, TypeConstructor)>,
    pub(crate) krate: Option<Path>,
}

/// The shape of one argument before its key is looked at.
enum RawArg {
    /// `key`
    Bare(Ident),
    /// `key = value`
    Value(Ident, TokenStream),
    /// `key(...)`
    List(Ident, TokenStream),
}

/// Splits `tokens` at its top-level commas. Each part comes with the span of
/// the comma before it (for errors about an empty part).
fn split_commas(tokens: TokenStream) -> Vec<(TokenStream, Option<Span>)> {
    let mut parts = Vec::new();
    let mut current = Vec::new();
    let mut comma_before = None;
    for tree in tokens {
        match &tree {
            TokenTree::Punct(p) if p.as_char() == ',' => {
                parts.push((current.drain(..).collect(), comma_before));
                comma_before = Some(p.span());
            }
            _ => current.push(tree),
        }
    }
    if !current.is_empty() {
        parts.push((current.into_iter().collect(), comma_before));
    }
    parts
}

fn parse_raw(input: ParseStream<'_>) -> syn::Result<RawArg> {
    let key = input.call(Ident::parse_any).map_err(|e| {
        syn::Error::new(
            e.span(),
            "expected an `#[op]` argument: `input = \"...\"`, `output = \"...\"`, \
             `attr = \"...\"`, a flag such as `stateful`, or `deprecated(...)`",
        )
    })?;
    if input.is_empty() {
        return Ok(RawArg::Bare(key));
    }
    if input.peek(syn::Token![=]) {
        input.parse::<syn::Token![=]>()?;
        return Ok(RawArg::Value(key, input.parse()?));
    }
    if let Some(TokenTree::Group(g)) = input.fork().parse::<Option<TokenTree>>()?
        && g.delimiter() == Delimiter::Parenthesis
    {
        input.parse::<TokenTree>()?;
        let raw = RawArg::List(key, g.stream());
        if !input.is_empty() {
            return Err(input.error("expected `,` after `(...)`"));
        }
        return Ok(raw);
    }
    Err(input.error(format!(
        "expected `=`, `(...)` or `,` after `{}`",
        key.unraw()
    )))
}

/// The nearest known word to `word`, if one is close enough to be a typo
/// (the one suggestion rule, `registry_spec::suggest`).
pub(crate) fn suggest<'a>(word: &str, candidates: &[&'a str]) -> Option<&'a str> {
    registry_spec::suggest::nearest(word, candidates.iter().copied())
}

fn unknown_key_message(key: &str) -> String {
    let mut message = format!("unknown `#[op]` argument `{key}`");
    if key == "doc" || key == "summary" || key == "description" {
        message.push_str(
            "; the op's Doc text (summary, description, `name: description` lines) \
             comes from the struct's doc comments (`///`)",
        );
    } else if let Some(near) = suggest(key, ALL_KEYS) {
        message.push_str(&format!("; did you mean `{near}`?"));
    } else {
        message.push_str(&format!("; expected one of: {}", ALL_KEYS.join(", ")));
    }
    message
}

/// Parses a `key = "string"` value.
fn string_value(
    key: &Ident,
    value: TokenStream,
    example: &str,
    errors: &mut Errors,
) -> Option<LitStr> {
    if value.is_empty() {
        errors.spanned(
            key,
            format!("expected a string after `{key} =`, e.g. `{key} = {example}`"),
        );
        return None;
    }
    match syn::parse2::<LitStr>(value.clone()) {
        Ok(lit) => Some(lit),
        Err(_) => {
            errors.spanned(
                value,
                format!("`{key}` takes a string literal, e.g. `{key} = {example}`"),
            );
            None
        }
    }
}

fn example_for(key: &str) -> &'static str {
    match key {
        "input" => "\"x: T\"",
        "output" => "\"y: T\"",
        "attr" => "\"T: {float, int32}\"",
        "control_output" => "\"done\"",
        _ => "\"MyOp\"",
    }
}

/// Parses a `path` value (`shape_fn`, `crate`).
fn path_value(key: &Ident, value: TokenStream, what: &str, errors: &mut Errors) -> Option<Path> {
    if value.is_empty() {
        errors.spanned(
            key,
            format!("expected a path after `{} =`: {what}", key.unraw()),
        );
        return None;
    }
    // `crate = "::registry_core"` (serde's form) is accepted too.
    if let Ok(lit) = syn::parse2::<LitStr>(value.clone()) {
        return match lit.parse::<Path>() {
            Ok(path) => Some(path),
            Err(_) => {
                errors.spanned(&lit, format!("`{}` takes a path: {what}", key.unraw()));
                None
            }
        };
    }
    match syn::parse2::<Path>(value.clone()) {
        Ok(path) => Some(path),
        Err(_) => {
            errors.spanned(value, format!("`{}` takes a path: {what}", key.unraw()));
            None
        }
    }
}

/// Parses `deprecated(version = N, explanation = "...")`.
fn deprecated(key: Ident, content: TokenStream, errors: &mut Errors) -> Option<DeprecatedArg> {
    const FIELDS: &[&str] = &["version", "explanation"];
    let usage = "`deprecated(version = N, explanation = \"...\")`";
    let mut version: Option<i32> = None;
    let mut explanation: Option<String> = None;
    let mut ok = true;
    for (part, comma) in split_commas(content) {
        if part.is_empty() {
            if let Some(span) = comma {
                errors.at(span, "unexpected `,`");
            }
            ok = false;
            continue;
        }
        let raw = match parse_raw.parse2(part) {
            Ok(raw) => raw,
            Err(e) => {
                errors.push(e);
                ok = false;
                continue;
            }
        };
        let (field, value) = match raw {
            RawArg::Value(field, value) => (field, value),
            RawArg::Bare(field) | RawArg::List(field, ..) => {
                let name = field.unraw().to_string();
                if FIELDS.contains(&name.as_str()) {
                    errors.spanned(&field, format!("`{name}` needs a value: {usage}"));
                } else {
                    errors.spanned(&field, unknown_field_message(&name, FIELDS, usage));
                }
                ok = false;
                continue;
            }
        };
        let name = field.unraw().to_string();
        match name.as_str() {
            "version" => {
                if version.is_some() {
                    errors.spanned(&field, "`version` given twice");
                    ok = false;
                    continue;
                }
                match syn::parse2::<LitInt>(value.clone()) {
                    Ok(lit) => match lit.base10_parse::<i32>() {
                        Ok(v) => version = Some(v),
                        Err(e) => {
                            errors.spanned(&lit, format!("`version` must fit in an i32: {e}"));
                            ok = false;
                        }
                    },
                    Err(_) => {
                        errors.spanned(
                            if value.is_empty() {
                                field.to_token_stream()
                            } else {
                                value
                            },
                            "`version` takes an integer literal: the first GraphDef version \
                             without the op",
                        );
                        ok = false;
                    }
                }
            }
            "explanation" => {
                if explanation.is_some() {
                    errors.spanned(&field, "`explanation` given twice");
                    ok = false;
                    continue;
                }
                match string_value(&field, value, "\"use Foo instead\"", errors) {
                    Some(lit) => explanation = Some(lit.value()),
                    None => ok = false,
                }
            }
            _ => {
                errors.spanned(&field, unknown_field_message(&name, FIELDS, usage));
                ok = false;
            }
        }
    }
    if version.is_none() && ok {
        errors.spanned(
            &key,
            format!("`deprecated` is missing `version = N`: {usage}"),
        );
    }
    if explanation.is_none() && ok {
        errors.spanned(
            &key,
            format!("`deprecated` is missing `explanation = \"...\"`: {usage}"),
        );
    }
    Some(DeprecatedArg {
        key,
        version: version?,
        explanation: explanation?,
    })
    .filter(|_| ok)
}

fn unknown_field_message(name: &str, fields: &[&str], usage: &str) -> String {
    match suggest(name, fields) {
        Some(near) => format!("unknown field `{name}`; did you mean `{near}`? {usage}"),
        None => format!("unknown field `{name}`; expected {usage}"),
    }
}

/// Every `FullTypeId` name (`TFT_SHAPE_TENSOR`, ...), for suggestions.
fn full_type_names() -> Vec<&'static str> {
    (0..=20_000)
        .filter_map(|i| FullTypeId::try_from(i).ok())
        .map(|id| id.as_str_name())
        .collect()
}

/// Parses `type_ctor = unary(TFT_SHAPE_TENSOR, "out_type")` (TF's
/// `SetTypeConstructor(full_type::Unary(TFT_SHAPE_TENSOR, "out_type"))`) and
/// `type_ctor = unary_tensor_container(TFT_ARRAY, "element_dtype")` (TF's
/// `full_type::UnaryTensorContainer`).
fn type_ctor_value(
    key: &Ident,
    value: TokenStream,
    errors: &mut Errors,
) -> Option<TypeConstructor> {
    let usage = "`type_ctor = unary(TFT_SHAPE_TENSOR, \"out_type\")` or \
                 `type_ctor = unary_tensor_container(TFT_ARRAY, \"element_dtype\")`";
    if value.is_empty() {
        errors.spanned(
            key,
            format!("expected a type constructor after `type_ctor =`: {usage}"),
        );
        return None;
    }
    let parser = |input: ParseStream<'_>| -> syn::Result<(Ident, Ident, LitStr)> {
        let function: Ident = input.parse()?;
        let content;
        syn::parenthesized!(content in input);
        let id: Ident = content.parse()?;
        content.parse::<syn::Token![,]>()?;
        let var: LitStr = content.parse()?;
        let _ = content.parse::<Option<syn::Token![,]>>()?;
        if !content.is_empty() {
            return Err(content.error("expected `)` after the type variable"));
        }
        Ok((function, id, var))
    };
    let (function, id, var) = match parser.parse2(value.clone()) {
        Ok(parts) => parts,
        Err(e) => {
            errors.spanned(value, format!("malformed type constructor ({e}): {usage}"));
            return None;
        }
    };
    if function != "unary" && function != "unary_tensor_container" {
        errors.spanned(
            &function,
            format!("unknown type constructor `{function}`; the ones supported are TF's `full_type::Unary` and `full_type::UnaryTensorContainer`: {usage}"),
        );
        return None;
    }
    let name = id.to_string();
    let Some(type_id) = FullTypeId::from_str_name(&name) else {
        let names = full_type_names();
        let hint = suggest(&name, &names)
            .map(|near| format!("; did you mean `{near}`?"))
            .unwrap_or_default();
        errors.spanned(&id, format!("unknown full type id `{name}`{hint}"));
        return None;
    };
    if function == "unary_tensor_container" {
        return Some(TypeConstructor::unary_tensor_container(
            type_id,
            var.value(),
        ));
    }
    Some(TypeConstructor::unary(type_id, var.value()))
}

/// Parses the arguments of `#[op(...)]`, recording every problem in `errors`
/// and keeping every argument that is well-formed.
pub(crate) fn parse_args(tokens: TokenStream, errors: &mut Errors) -> OpArgs {
    let mut args = OpArgs::default();
    let parts = split_commas(tokens);
    let count = parts.len();
    for (index, (part, comma)) in parts.into_iter().enumerate() {
        if part.is_empty() {
            // `#[op(input = "x: T",)]`: a trailing comma is fine, `,,` is not.
            if index + 1 < count || comma.is_none() {
                errors.at(comma.unwrap_or_else(Span::call_site), "unexpected `,`");
            }
            continue;
        }
        let raw = match parse_raw.parse2(part) {
            Ok(raw) => raw,
            Err(e) => {
                errors.push(e);
                continue;
            }
        };
        let key = match &raw {
            RawArg::Bare(k) | RawArg::Value(k, _) | RawArg::List(k, ..) => k.clone(),
        };
        let key_name = key.unraw().to_string();
        let key_str = key_name.as_str();

        if SPEC_KEYS.contains(&key_str) || key_str == "name" {
            let example = example_for(key_str);
            let RawArg::Value(_, value) = raw else {
                errors.spanned(
                    &key,
                    format!("`{key_str}` needs a value: `{key_str} = {example}`"),
                );
                continue;
            };
            let Some(lit) = string_value(&key, value, example, errors) else {
                continue;
            };
            match key_str {
                "input" => args.inputs.push(lit),
                "output" => args.outputs.push(lit),
                "attr" => args.attrs.push(lit),
                "control_output" => args.control_outputs.push(lit),
                _ => {
                    if args.name.is_some() {
                        errors.spanned(&key, "`name` given twice; an op has one name");
                    } else {
                        args.name = Some(lit);
                    }
                }
            }
        } else if let Some(&flag) = FLAG_KEYS.iter().find(|&&f| f == key_str) {
            if !matches!(raw, RawArg::Bare(_)) {
                errors.spanned(
                    &key,
                    format!("`{flag}` is a flag and takes no value: write `{flag}` alone"),
                );
                continue;
            }
            if args.flags.iter().any(|f| f.name == flag) {
                errors.spanned(&key, format!("`{flag}` given twice"));
                continue;
            }
            args.flags.push(Flag { name: flag });
        } else if key_str == "deprecated" {
            let RawArg::List(_, content) = raw else {
                errors.spanned(
                    &key,
                    "`deprecated` takes `(version = N, explanation = \"...\")`, \
                     e.g. `deprecated(version = 26, explanation = \"Use Foo\")`",
                );
                continue;
            };
            if let Some(dep) = deprecated(key, content, errors) {
                args.deprecations.push(dep);
            }
        } else if key_str == "type_ctor" {
            let RawArg::Value(_, value) = raw else {
                errors.spanned(
                    &key,
                    "`type_ctor` needs a value: `type_ctor = unary(TFT_SHAPE_TENSOR, \"out_type\")`",
                );
                continue;
            };
            if let Some(ctor) = type_ctor_value(&key, value, errors) {
                if args.type_ctor.is_some() {
                    errors.spanned(
                        &key,
                        "`type_ctor` given twice; an op has one type constructor",
                    );
                } else {
                    args.type_ctor = Some((key, ctor));
                }
            }
        } else if key_str == "shape_fn" || key_str == "crate" {
            let RawArg::Value(_, value) = raw else {
                let example = if key_str == "crate" {
                    "::registry_core"
                } else {
                    "my_shapes::unchanged"
                };
                errors.spanned(
                    &key,
                    format!("`{key_str}` needs a path: `{key_str} = {example}`"),
                );
                continue;
            };
            if key_str == "crate" {
                let what = "the path of registry_core, e.g. `crate = ::opreg::registry_core`";
                let Some(path) = path_value(&key, value, what, errors) else {
                    continue;
                };
                if args.krate.is_some() {
                    errors.spanned(&key, "`crate` given twice");
                } else {
                    args.krate = Some(path);
                }
            } else {
                let what = "a function `fn(&mut InferenceContext) -> Result<(), ShapeError>`, \
                            e.g. `shape_fn = my_shapes::unchanged`";
                if let Some(path) = path_value(&key, value, what, errors) {
                    args.shape_fns.push((key, path));
                }
            }
        } else {
            errors.spanned(&key, unknown_key_message(key_str));
        }
    }
    args
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggestions() {
        assert_eq!(suggest("inptu", ALL_KEYS), Some("input"));
        assert_eq!(suggest("inputs", ALL_KEYS), Some("input"));
        assert_eq!(suggest("attrs", ALL_KEYS), Some("attr"));
        assert_eq!(suggest("commutativ", ALL_KEYS), Some("commutative"));
        assert_eq!(suggest("Stateful", ALL_KEYS), Some("stateful"));
        assert_eq!(suggest("shape", ALL_KEYS), Some("shape_fn"));
        assert_eq!(suggest("zzz", ALL_KEYS), None);
    }

    #[test]
    fn parses_everything() {
        let mut errors = Errors::default();
        let tokens: TokenStream = r#"name = "X", input = "x: T", output = "y: T", attr = "T: type",
            control_output = "c", stateful, commutative,
            deprecated(version = 3, explanation = "gone"), shape_fn = a::b, crate = crate,
            type_ctor = unary(TFT_SHAPE_TENSOR, "T"),"#
            .parse()
            .unwrap();
        let args = parse_args(tokens, &mut errors);
        assert!(errors.is_empty());
        assert_eq!(
            args.type_ctor.map(|(_, c)| c),
            Some(TypeConstructor::unary(FullTypeId::TftShapeTensor, "T"))
        );
        assert_eq!(args.name.unwrap().value(), "X");
        assert_eq!(args.inputs.len(), 1);
        assert_eq!(args.flags.len(), 2);
        assert_eq!(args.deprecations[0].version, 3);
        assert_eq!(args.shape_fns.len(), 1);
        assert!(args.krate.is_some());
    }

    #[test]
    fn type_ctor_errors() {
        for (text, want) in [
            (
                r#"type_ctor = binary(TFT_TENSOR, "T")"#,
                "unknown type constructor `binary`",
            ),
            (
                r#"type_ctor = unary(TFT_SHAPE_TENSR, "T")"#,
                "did you mean `TFT_SHAPE_TENSOR`?",
            ),
            (
                r#"type_ctor = unary(TFT_TENSOR)"#,
                "malformed type constructor",
            ),
            (r#"type_ctor"#, "`type_ctor` needs a value"),
        ] {
            let mut errors = Errors::default();
            let _ = parse_args(text.parse().unwrap(), &mut errors);
            let all = errors.into_compile_errors().to_string();
            assert!(all.contains(want), "{text}: {all}");
        }
    }

    #[test]
    fn collects_all_errors() {
        let mut errors = Errors::default();
        let tokens: TokenStream =
            r#"inptu = "x", input = 3, stateful = true, deprecated(version = 1), name"#
                .parse()
                .unwrap();
        let _ = parse_args(tokens, &mut errors);
        let all = errors.into_compile_errors().to_string();
        assert_eq!(all.matches("compile_error").count(), 5, "{all}");
    }
}

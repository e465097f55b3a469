//! Parsing `#[kernel(...)]`'s arguments: `op = Path`, `device = CPU`,
//! `T = [float, double]`, `host_memory = [...]`, `label`, `priority`,
//! `crate`.

use proc_macro2::{Span, TokenStream};
use syn::ext::IdentExt;
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::{Ident, LitInt, LitStr, Path, Token, bracketed};

use super::dtypes::{self, KernelDtype};
use crate::errors::Errors;

/// One constrained attr: `T = [float, double]`.
pub(crate) struct Constraint {
    pub(crate) attr: Ident,
    pub(crate) types: Vec<(KernelDtype, Span)>,
}

/// The parsed arguments.
#[derive(Default)]
pub(crate) struct KernelArgs {
    pub(crate) op: Option<Path>,
    pub(crate) device: Option<(String, Span)>,
    pub(crate) constraints: Vec<Constraint>,
    pub(crate) host_memory: Vec<LitStr>,
    pub(crate) label: Option<LitStr>,
    pub(crate) priority: Option<LitInt>,
    pub(crate) priority_negative: bool,
    pub(crate) krate: Option<Path>,
    /// `sources = path`: the registration's `KernelSourcesFn`.
    pub(crate) sources: Option<Path>,
}

/// A value after `=`: a path, a string, an integer or a bracketed list.
enum Value {
    Path(Path),
    Str(LitStr),
    Int(LitInt, bool),
    List(Vec<ListItem>),
}

enum ListItem {
    Ident(Ident),
    Str(LitStr),
}

struct Entry {
    key: Ident,
    value: Value,
}

impl Parse for ListItem {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        if input.peek(LitStr) {
            Ok(ListItem::Str(input.parse()?))
        } else {
            Ok(ListItem::Ident(input.call(Ident::parse_any)?))
        }
    }
}

impl Parse for Entry {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let key = input.call(Ident::parse_any)?;
        input.parse::<Token![=]>()?;
        let value = if input.peek(syn::token::Bracket) {
            let content;
            bracketed!(content in input);
            let items = Punctuated::<ListItem, Token![,]>::parse_terminated(&content)?;
            Value::List(items.into_iter().collect())
        } else if input.peek(LitStr) {
            Value::Str(input.parse()?)
        } else if input.peek(Token![-]) {
            input.parse::<Token![-]>()?;
            Value::Int(input.parse()?, true)
        } else if input.peek(LitInt) {
            Value::Int(input.parse()?, false)
        } else {
            Value::Path(
                input
                    .call(Path::parse_mod_style)
                    .or_else(|_| input.parse())?,
            )
        };
        Ok(Entry { key, value })
    }
}

const KEYS: &[&str] = &[
    "op",
    "device",
    "host_memory",
    "label",
    "priority",
    "sources",
    "crate",
];

/// Parses the attribute's arguments, recording every problem in `errors`.
pub(crate) fn parse_args(tokens: TokenStream, errors: &mut Errors) -> KernelArgs {
    let mut args = KernelArgs::default();
    let entries = match syn::parse::Parser::parse2(
        Punctuated::<Entry, Token![,]>::parse_terminated,
        tokens,
    ) {
        Ok(entries) => entries,
        Err(e) => {
            errors.push(e);
            return args;
        }
    };
    for Entry { key, value } in entries {
        let name = key.to_string();
        let duplicate = |errors: &mut Errors, seen: bool| {
            if seen {
                errors.spanned(&key, format!("`{name}` is given twice"));
            }
        };
        match (name.as_str(), value) {
            ("op", Value::Path(p)) => {
                duplicate(errors, args.op.is_some());
                args.op = Some(p);
            }
            ("device", Value::Path(p)) => {
                duplicate(errors, args.device.is_some());
                match p.get_ident() {
                    Some(i) => args.device = Some((i.to_string(), i.span())),
                    None => errors.spanned(&p, "a device is a name: `CPU`, `GPU` or \"MyDevice\""),
                }
            }
            ("device", Value::Str(s)) => {
                duplicate(errors, args.device.is_some());
                if s.value().is_empty() {
                    errors.spanned(&s, "the device name is empty");
                }
                args.device = Some((s.value(), s.span()));
            }
            ("host_memory", Value::Str(s)) => args.host_memory.push(s),
            ("host_memory", Value::List(items)) => {
                for item in items {
                    match item {
                        ListItem::Str(s) => args.host_memory.push(s),
                        ListItem::Ident(i) => {
                            args.host_memory.push(LitStr::new(&i.to_string(), i.span()))
                        }
                    }
                }
            }
            ("label", Value::Str(s)) => {
                duplicate(errors, args.label.is_some());
                args.label = Some(s);
            }
            ("priority", Value::Int(i, negative)) => {
                duplicate(errors, args.priority.is_some());
                if i.base10_parse::<i32>().is_err() {
                    errors.spanned(&i, "the priority must fit in an i32");
                }
                args.priority = Some(i);
                args.priority_negative = negative;
            }
            ("crate", Value::Path(p)) => {
                duplicate(errors, args.krate.is_some());
                args.krate = Some(p);
            }
            ("sources", Value::Path(p)) => {
                duplicate(errors, args.sources.is_some());
                args.sources = Some(p);
            }
            (k, _) if KEYS.contains(&k) => errors.spanned(&key, expected_form(k)),
            (_, Value::List(items)) => {
                if args.constraints.iter().any(|c| c.attr == key) {
                    errors.spanned(&key, format!("the constraint on `{name}` is given twice"));
                }
                let types = parse_types(&items, &name, errors);
                if items.is_empty() {
                    errors.spanned(&key, format!("the constraint on `{name}` lists no types"));
                }
                args.constraints.push(Constraint { attr: key, types });
            }
            (_, Value::Path(p)) if p.get_ident().is_some() => {
                let ident = p
                    .get_ident()
                    .cloned()
                    .into_iter()
                    .map(ListItem::Ident)
                    .collect::<Vec<_>>();
                let types = parse_types(&ident, &name, errors);
                args.constraints.push(Constraint { attr: key, types });
            }
            (_, _) => errors.spanned(
                &key,
                format!(
                    "unknown argument `{name}`: expected one of {}, or a type constraint \
                     such as `{name} = [float, double]`",
                    KEYS.join(", ")
                ),
            ),
        }
    }
    args
}

fn expected_form(key: &str) -> &'static str {
    match key {
        "op" => "expected `op = OpType`, the op's struct (declared with #[op])",
        "device" => "expected `device = CPU`, `device = GPU` or `device = \"MyDevice\"`",
        "host_memory" => "expected `host_memory = [\"arg\", ...]`",
        "label" => "expected `label = \"...\"`",
        "priority" => "expected `priority = <integer>`",
        "sources" => "expected `sources = path::to::function`, a `KernelSourcesFn`",
        _ => "expected `crate = path::to::registry_core`",
    }
}

fn parse_types(items: &[ListItem], attr: &str, errors: &mut Errors) -> Vec<(KernelDtype, Span)> {
    let mut out = Vec::new();
    for item in items {
        let (name, span) = match item {
            ListItem::Ident(i) => (i.to_string(), i.span()),
            ListItem::Str(s) => (s.value(), s.span()),
        };
        match dtypes::lookup(&name) {
            Some(dtypes) => {
                for dtype in dtypes {
                    if out
                        .iter()
                        .any(|(d, _): &(KernelDtype, Span)| d.dtype == dtype.dtype)
                    {
                        errors.at(
                            span,
                            format!("type `{}` is listed twice for `{attr}`", dtype.tf_name),
                        );
                    } else {
                        out.push((dtype, span));
                    }
                }
            }
            None => {
                let suggestion = registry_spec::suggest::nearest(&name, dtypes::all_names())
                    .map(|n| format!("; did you mean `{n}`?"))
                    .unwrap_or_default();
                errors.at(
                    span,
                    format!(
                        "unknown type `{name}` in the constraint on `{attr}`{suggestion} \
                         (use TensorFlow's names such as `float`, `int32`, or Rust's such as \
                         `f32`, or a type set such as `realnumbertype`)"
                    ),
                );
            }
        }
    }
    out
}

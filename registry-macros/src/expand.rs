//! `#[op]`: build the op's specs, run registry-spec, emit the `Op` impl and
//! the registration, or every error spanned on the literal it is about.

use std::ops::Range;

use opreg_proto::DataType;
use opreg_proto::attr_value::Value;
use opreg_proto::op_def::{ArgDef, AttrDef};
use proc_macro2::{Ident, Literal, Span, TokenStream};
use quote::{ToTokens, format_ident, quote, quote_spanned};
use registry_spec::{OpSpec, SpecError, SpecErrorKind, SpecSite};
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{Item, LitStr, Path};

use crate::args::{OpArgs, parse_args};
use crate::doc::DocText;
use crate::errors::Errors;

/// The type `#[op]` implements `Op` for, when there is one.
struct Target {
    ident: Ident,
    vis: syn::Visibility,
    /// `false` for generic structs: no impl can be emitted for them.
    can_impl: bool,
}

/// Expands `#[op(args)] item`.
pub(crate) fn expand(args: TokenStream, item: TokenStream) -> TokenStream {
    let mut errors = Errors::default();
    let args = parse_args(args, &mut errors);
    let krate = args
        .krate
        .clone()
        .unwrap_or_else(|| syn::parse_quote!(::registry_core));

    let parsed = match syn::parse2::<Item>(item.clone()) {
        Ok(parsed) => parsed,
        Err(e) => {
            errors.push(e);
            let errors = errors.into_compile_errors();
            return quote!(#item #errors);
        }
    };
    let (target, attrs) = match &parsed {
        Item::Struct(s) => {
            let can_impl = s.generics.params.is_empty() && s.generics.where_clause.is_none();
            if !can_impl {
                errors.spanned(
                    &s.generics,
                    "an op's struct cannot be generic: `#[op]` declares one op, named by one \
                     non-generic type",
                );
            }
            (
                Some(Target {
                    ident: s.ident.clone(),
                    vis: s.vis.clone(),
                    can_impl,
                }),
                &s.attrs[..],
            )
        }
        Item::Enum(e) => {
            errors.spanned(
                e.enum_token,
                "#[op] goes on a struct (`pub struct MyOp;`), not on an enum",
            );
            let can_impl = e.generics.params.is_empty();
            (
                Some(Target {
                    ident: e.ident.clone(),
                    vis: e.vis.clone(),
                    can_impl,
                }),
                &e.attrs[..],
            )
        }
        Item::Union(u) => {
            errors.spanned(
                u.union_token,
                "#[op] goes on a struct (`pub struct MyOp;`), not on a union",
            );
            let can_impl = u.generics.params.is_empty();
            (
                Some(Target {
                    ident: u.ident.clone(),
                    vis: u.vis.clone(),
                    can_impl,
                }),
                &u.attrs[..],
            )
        }
        other => {
            errors.push(syn::Error::new(
                item_keyword_span(other),
                "#[op] goes on a struct (`pub struct MyOp;`) that names the op",
            ));
            (None, &[][..])
        }
    };

    let Some(target) = target else {
        let errors = errors.into_compile_errors();
        return quote!(#parsed #errors);
    };
    let op_name = match &args.name {
        Some(lit) => lit.value(),
        None => target.ident.unraw().to_string(),
    };
    let doc = DocText::from_attrs(attrs, &mut errors);
    let spec = op_spec(&op_name, &args, doc.as_ref());

    let generated = match spec.build() {
        Ok(op_def) if errors.is_empty() && target.can_impl => {
            let check = crate::kernel::check::op_macro(&target.ident, &target.vis, Some(&op_def));
            let op = emit_op(&krate, &target.ident, &op_def, &args);
            Some(quote!(#op #check))
        }
        Ok(_) => None,
        Err(spec_errors) => {
            let locator = Locator {
                args: &args,
                doc: doc.as_ref(),
                ident: &target.ident,
            };
            for error in spec_errors.errors() {
                errors.push(locator.error(error));
            }
            None
        }
    };
    let generated = generated.unwrap_or_else(|| {
        // The kernel-check macro accepts every kernel of an op with errors:
        // its errors are the op's.
        let check = crate::kernel::check::op_macro(&target.ident, &target.vis, None);
        if target.can_impl {
            let fallback = emit_fallback(&krate, &target.ident, &op_name);
            quote!(#fallback #check)
        } else {
            check
        }
    });
    let errors = errors.into_compile_errors();
    quote! {
        #parsed
        #generated
        #errors
    }
}

/// The span of the keyword that starts an item (`fn`, `mod`, `impl`...), or
/// the whole item.
fn item_keyword_span(item: &Item) -> Span {
    match item {
        Item::Fn(f) => f.sig.fn_token.span,
        Item::Mod(m) => m.mod_token.span,
        Item::Impl(i) => i.impl_token.span,
        Item::Trait(t) => t.trait_token.span,
        Item::Const(c) => c.const_token.span,
        Item::Static(s) => s.static_token.span,
        Item::Type(t) => t.type_token.span,
        Item::Use(u) => u.use_token.span,
        other => other.span(),
    }
}

/// The `OpSpec` of the arguments, in TF's terms.
fn op_spec(name: &str, args: &OpArgs, doc: Option<&DocText>) -> OpSpec {
    let mut spec = OpSpec::new(name);
    for lit in &args.attrs {
        spec = spec.attr(lit.value());
    }
    for lit in &args.inputs {
        spec = spec.input(lit.value());
    }
    for lit in &args.outputs {
        spec = spec.output(lit.value());
    }
    for lit in &args.control_outputs {
        spec = spec.control_output(lit.value());
    }
    for flag in &args.flags {
        spec = match flag.name {
            "commutative" => spec.commutative(),
            "aggregate" => spec.aggregate(),
            "stateful" => spec.stateful(),
            "allows_uninitialized_input" => spec.allows_uninitialized_input(),
            _ => spec.distributed_communication(),
        };
    }
    for dep in &args.deprecations {
        spec = spec.deprecated(dep.version, dep.explanation.clone());
    }
    for _ in &args.shape_fns {
        spec = spec.with_shape_fn();
    }
    if let Some((_, ctor)) = &args.type_ctor {
        spec = spec.type_constructor(ctor.clone());
    }
    if let Some(doc) = doc {
        spec = spec.doc(doc.text.clone());
    }
    spec
}

/// Maps a [`SpecError`] back to the tokens it is about.
struct Locator<'a> {
    args: &'a OpArgs,
    doc: Option<&'a DocText>,
    ident: &'a Ident,
}

impl Locator<'_> {
    fn error(&self, error: &SpecError) -> syn::Error {
        let in_lit = |lits: &[LitStr], i: usize| match lits.get(i) {
            Some(lit) => (lit_span(lit, &error.span), error.snippet()),
            None => (self.ident.span(), String::new()),
        };
        let (span, snippet) = match error.site {
            SpecSite::Attr(i) => in_lit(&self.args.attrs, i),
            SpecSite::Input(i) => in_lit(&self.args.inputs, i),
            SpecSite::Output(i) => in_lit(&self.args.outputs, i),
            SpecSite::ControlOutput(i) => in_lit(&self.args.control_outputs, i),
            SpecSite::Name => match &self.args.name {
                Some(lit) => (lit_span(lit, &error.span), error.snippet()),
                None => (self.ident.span(), String::new()),
            },
            SpecSite::Doc => match self.doc {
                Some(doc) => doc.locate(&error.span),
                None => (self.ident.span(), String::new()),
            },
            SpecSite::Deprecation => {
                let deps = &self.args.deprecations;
                // "Deprecated called twice" is about the second one.
                let dep = if error.kind == SpecErrorKind::DeprecatedTwice {
                    deps.get(1)
                } else {
                    deps.first()
                };
                (
                    dep.map_or(self.ident.span(), |d| d.key.span()),
                    String::new(),
                )
            }
            SpecSite::Op => {
                let span = match (
                    &error.kind,
                    self.args.shape_fns.get(1),
                    &self.args.type_ctor,
                ) {
                    (SpecErrorKind::ShapeFnTwice, Some((key, path)), _) => {
                        key.span().join(path.span()).unwrap_or(key.span())
                    }
                    (SpecErrorKind::TypeConstructor(_), _, Some((key, _))) => key.span(),
                    _ => self.ident.span(),
                };
                (span, String::new())
            }
        };
        syn::Error::new(span, message_with_snippet(&error.to_string(), &snippet))
    }
}

/// The error message, then the snippet (spec and caret line) indented under
/// it, so rustc shows the position inside the literal that it cannot point at.
fn message_with_snippet(message: &str, snippet: &str) -> String {
    if snippet.is_empty() {
        return message.to_owned();
    }
    let mut out = message.to_owned();
    for line in snippet.lines() {
        out.push_str("\n    ");
        out.push_str(line);
    }
    out
}

/// The span of byte `range` of a string literal's value when the compiler can
/// give one (`Literal::subspan`, nightly only), else the whole literal.
fn lit_span(lit: &LitStr, range: &Range<usize>) -> Span {
    let token = lit.token();
    let repr = token.to_string();
    let value = lit.value();
    // Byte offset of the value inside the literal's source text, when the
    // value appears there verbatim (no escapes).
    let offset = if repr.starts_with('"') && repr.get(1..repr.len() - 1) == Some(value.as_str()) {
        Some(1)
    } else if let Some(raw) = repr.strip_prefix('r') {
        let hashes = raw.len() - raw.trim_start_matches('#').len();
        let start = 1 + hashes + 1;
        let end = repr.len().saturating_sub(1 + hashes);
        (repr.get(start..end) == Some(value.as_str())).then_some(start)
    } else {
        None
    };
    offset
        .and_then(|offset| {
            let end = range
                .end
                .max(range.start + 1)
                .min(value.len().max(range.start + 1));
            token.subspan(offset + range.start..offset + end)
        })
        .unwrap_or_else(|| lit.span())
}

/// `::registry_core::__private::DataType::DtFloat` for a DataType value.
fn data_type(krate: &Path, value: i32) -> TokenStream {
    let dtype = DataType::try_from(value).unwrap_or(DataType::DtInvalid);
    let variant = format_ident!("{}", format!("{dtype:?}"));
    quote!(#krate::__private::DataType::#variant)
}

fn arg_signature(krate: &Path, arg: &ArgDef) -> TokenStream {
    let ArgDef {
        name,
        type_attr,
        number_attr,
        type_list_attr,
        is_ref,
        ..
    } = arg;
    let dtype = data_type(krate, arg.r#type);
    quote! {
        #krate::ArgSignature {
            name: #name, dtype: #dtype, type_attr: #type_attr, number_attr: #number_attr,
            type_list_attr: #type_list_attr, is_ref: #is_ref,
        }
    }
}

fn attr_signature(krate: &Path, attr: &AttrDef) -> TokenStream {
    let AttrDef {
        name,
        r#type: attr_type,
        ..
    } = attr;
    let allowed = match attr.allowed_values.as_ref().and_then(|v| v.value.as_ref()) {
        Some(Value::List(list)) if attr_type == "type" || attr_type == "list(type)" => {
            let types = list.r#type.iter().map(|&t| data_type(krate, t));
            quote!(::core::option::Option::Some(&[#(#types),*]))
        }
        _ => quote!(::core::option::Option::None),
    };
    let has_default = attr.default_value.is_some();
    let minimum = if attr.has_minimum {
        let minimum = attr.minimum;
        quote!(::core::option::Option::Some(#minimum))
    } else {
        quote!(::core::option::Option::None)
    };
    quote! {
        #krate::AttrSignature {
            name: #name, attr_type: #attr_type, allowed_types: #allowed,
            has_default: #has_default, minimum: #minimum,
        }
    }
}

/// The `Op` impl and the inventory registration of a valid op.
fn emit_op(krate: &Path, ident: &Ident, op_def: &opreg_proto::OpDef, args: &OpArgs) -> TokenStream {
    let name = &op_def.name;
    let inputs = op_def.input_arg.iter().map(|a| arg_signature(krate, a));
    let outputs = op_def.output_arg.iter().map(|a| arg_signature(krate, a));
    let attrs = op_def.attr.iter().map(|a| attr_signature(krate, a));
    let bytes = Literal::byte_string(&prost::Message::encode_to_vec(op_def));
    let shape_fn = match args.shape_fns.first() {
        // Spanned on the path, so a function of the wrong type is reported there.
        Some((_, path)) => {
            let shape_fn = quote_spanned!(path.span()=> #krate::shape::ShapeFn);
            quote!(::core::option::Option::Some({ const SHAPE_FN: #shape_fn = #path; SHAPE_FN }))
        }
        None => quote!(::core::option::Option::None),
    };
    let op = quote!(<#ident as #krate::Op>);
    quote! {
        const _: () = {
            #[automatically_derived]
            impl #krate::Op for #ident {
                const NAME: &'static str = #name;
                const SIGNATURE: #krate::OpSignature = #krate::OpSignature {
                    name: #name,
                    inputs: &[#(#inputs),*],
                    outputs: &[#(#outputs),*],
                    attrs: &[#(#attrs),*],
                };
                const OP_DEF_BYTES: &'static [u8] = #bytes;
            }
            #krate::__private::inventory::submit! {
                #krate::__private::OpRegistration {
                    name: #op::NAME,
                    op_def: #op::OP_DEF_BYTES,
                    shape_fn: #shape_fn,
                    location: #krate::__private::SourceLocation {
                        file: ::core::file!(),
                        line: ::core::line!(),
                        module_path: ::core::module_path!(),
                    },
                }
            }
        };
    }
}

/// An `Op` impl with an empty signature and no OpDef, emitted when the op has
/// errors so that uses of the type elsewhere do not fail too. Nothing is
/// registered.
fn emit_fallback(krate: &Path, ident: &Ident, name: &str) -> TokenStream {
    let krate = krate.to_token_stream();
    quote! {
        const _: () = {
            #[automatically_derived]
            impl #krate::Op for #ident {
                const NAME: &'static str = #name;
                const SIGNATURE: #krate::OpSignature = #krate::OpSignature {
                    name: #name, inputs: &[], outputs: &[], attrs: &[],
                };
                const OP_DEF_BYTES: &'static [u8] = &[];
            }
        };
    }
}

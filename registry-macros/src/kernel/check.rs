//! The checks of a kernel against its op made while macros expand, so that
//! an editor (rust-analyzer) shows them as you type: `#[op]` emits, beside
//! the op's struct, a hidden declarative macro of the same name that holds
//! the op's signature ([`op_macro`]); `#[kernel(op = Path)]` invokes
//! `Path! { ... }` with its constraints and host-memory args, each token
//! keeping the span it has in the kernel's source; that macro calls
//! [`check`] (`registry_core::__private::check_kernel!`), which compares
//! them with the signature and reports each violation as a
//! `compile_error!` on the offending token. The `const` assertions of
//! `#[kernel]` stay as the backstop: the checker emits them when it finds
//! nothing wrong (so a disagreement between the macro's copy of the
//! signature and the op's `const` one still fails the build), and drops them
//! when it reports errors (so each problem is reported once).

use opreg_proto::op_def::AttrDef;
use opreg_proto::{DATA_TYPES, DataType, OpDef};
use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::{LitStr, Token, Visibility, braced, bracketed, parenthesized};

use super::args::KernelArgs;
use crate::errors::Errors;

/// The hidden macro `#[op]` emits beside the op `ident` (named like it, in
/// the macro namespace, with the struct's visibility): `Ident! { [checker
/// path] kernel tokens }` expands to `checker! { op, signature, kernel
/// tokens }`. `op_def` is `None` for an op whose spec has errors: then every
/// kernel is accepted (its errors are the op's).
pub(crate) fn op_macro(ident: &Ident, vis: &Visibility, op_def: Option<&OpDef>) -> TokenStream {
    let hidden = format_ident!("__opreg_op_{}_{:016x}", ident, fingerprint(ident, op_def));
    let body = match op_def {
        Some(op_def) => {
            let name = &op_def.name;
            let attrs = op_def.attr.iter().map(attr_tokens);
            let args = op_def
                .input_arg
                .iter()
                .chain(&op_def.output_arg)
                .map(|a| &a.name);
            quote! {
                $($check)* ! {
                    op #name
                    attrs [#(#attrs),*]
                    args [#(#args),*]
                    kernel { $($kernel)* }
                }
            }
        }
        None => TokenStream::new(),
    };
    quote! {
        #[doc(hidden)]
        #[macro_export]
        macro_rules! #hidden {
            ([$($check:tt)*] $($kernel:tt)*) => { #body };
        }
        #[doc(hidden)]
        #[allow(unused_imports)]
        #vis use #hidden as #ident;
    }
}

/// A stable hash of the op, so that the hidden macro's crate-wide name is
/// unique (two ops of one name in one crate are a registration error).
fn fingerprint(ident: &Ident, op_def: Option<&OpDef>) -> u64 {
    let text = match op_def {
        Some(op_def) => format!("{ident} {op_def:?}"),
        None => format!("{ident} (invalid)"),
    };
    // FNV-1a.
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// `("T", "type", [DtHalf, DtFloat])`, or `any` for unconstrained types.
fn attr_tokens(attr: &AttrDef) -> TokenStream {
    let name = &attr.name;
    let kind = &attr.r#type;
    let allowed = attr.allowed_values.as_ref().and_then(|v| match &v.value {
        Some(opreg_proto::attr_value::Value::List(l)) if !l.r#type.is_empty() => Some(&l.r#type),
        _ => None,
    });
    match allowed {
        Some(types) => {
            let types = types.iter().map(|&t| {
                let dtype = DataType::try_from(t).unwrap_or(DataType::DtInvalid);
                format_ident!("{}", format!("{dtype:?}"))
            });
            quote!((#name, #kind, [#(#types),*]))
        }
        None => quote!((#name, #kind, any)),
    }
}

/// What `#[kernel]` passes to the op's macro: the checker's path, then its
/// constraints and host-memory args with their spans, and the `const`
/// assertions (`backstop`) to emit when the checker finds nothing wrong.
pub(crate) fn kernel_tokens(
    krate: &syn::Path,
    args: &KernelArgs,
    backstop: &TokenStream,
) -> TokenStream {
    let constraints = args.constraints.iter().map(|c| {
        let attr = &c.attr;
        let types = c.types.iter().map(|(dtype, span)| {
            let variant = Ident::new(&dtype.variant(), *span);
            quote_spanned!(*span=> #variant)
        });
        quote!(#attr: [#(#types),*])
    });
    let host_memory = &args.host_memory;
    quote! {
        [#krate::__private::check_kernel]
        constraints { #(#constraints),* }
        host_memory [#(#host_memory),*]
        backstop { #backstop }
    }
}

/// One attr of the op's signature.
struct SigAttr {
    name: String,
    kind: String,
    /// `None`: any type.
    allowed: Option<Vec<DataType>>,
}

/// One constraint of the kernel: the attr and its types, with spans.
struct KernelConstraint {
    attr: Ident,
    types: Vec<Ident>,
}

/// The checker's input.
struct CheckInput {
    op: String,
    attrs: Vec<SigAttr>,
    args: Vec<String>,
    constraints: Vec<KernelConstraint>,
    host_memory: Vec<LitStr>,
    backstop: TokenStream,
}

fn data_type(ident: &Ident) -> syn::Result<DataType> {
    let name = ident.to_string();
    DATA_TYPES
        .iter()
        .map(|r| r.dtype)
        .find(|t| format!("{t:?}") == name)
        .ok_or_else(|| syn::Error::new(ident.span(), format!("unknown DataType `{name}`")))
}

impl Parse for SigAttr {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let content;
        parenthesized!(content in input);
        let name: LitStr = content.parse()?;
        content.parse::<Token![,]>()?;
        let kind: LitStr = content.parse()?;
        content.parse::<Token![,]>()?;
        let allowed = if content.peek(syn::token::Bracket) {
            let list;
            bracketed!(list in content);
            let idents = Punctuated::<Ident, Token![,]>::parse_terminated(&list)?;
            Some(idents.iter().map(data_type).collect::<syn::Result<_>>()?)
        } else {
            let any: Ident = content.parse()?;
            if any != "any" {
                return Err(syn::Error::new(any.span(), "expected `any` or `[types]`"));
            }
            None
        };
        Ok(Self {
            name: name.value(),
            kind: kind.value(),
            allowed,
        })
    }
}

impl Parse for KernelConstraint {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let attr = input.call(<Ident as syn::ext::IdentExt>::parse_any)?;
        input.parse::<Token![:]>()?;
        let list;
        bracketed!(list in input);
        let types = Punctuated::<Ident, Token![,]>::parse_terminated(&list)?;
        Ok(Self {
            attr,
            types: types.into_iter().collect(),
        })
    }
}

/// Parses `name` then a bracketed, comma-separated list of `T`.
fn keyword_list<T: Parse>(input: ParseStream, name: &str) -> syn::Result<Vec<T>> {
    let key: Ident = input.parse()?;
    if key != name {
        return Err(syn::Error::new(key.span(), format!("expected `{name}`")));
    }
    let list;
    bracketed!(list in input);
    Ok(Punctuated::<T, Token![,]>::parse_terminated(&list)?
        .into_iter()
        .collect())
}

impl Parse for CheckInput {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let key: Ident = input.parse()?;
        if key != "op" {
            return Err(syn::Error::new(key.span(), "expected `op`"));
        }
        let op: LitStr = input.parse()?;
        let attrs = keyword_list::<SigAttr>(input, "attrs")?;
        let args = keyword_list::<LitStr>(input, "args")?;
        let key: Ident = input.parse()?;
        if key != "kernel" {
            return Err(syn::Error::new(key.span(), "expected `kernel`"));
        }
        let kernel;
        braced!(kernel in input);
        let key: Ident = kernel.parse()?;
        if key != "constraints" {
            return Err(syn::Error::new(key.span(), "expected `constraints`"));
        }
        let constraints;
        braced!(constraints in kernel);
        let constraints =
            Punctuated::<KernelConstraint, Token![,]>::parse_terminated(&constraints)?;
        let host_memory = keyword_list::<LitStr>(&kernel, "host_memory")?;
        let key: Ident = kernel.parse()?;
        if key != "backstop" {
            return Err(syn::Error::new(key.span(), "expected `backstop`"));
        }
        let backstop;
        braced!(backstop in kernel);
        Ok(Self {
            op: op.value(),
            attrs,
            args: args.iter().map(LitStr::value).collect(),
            constraints: constraints.into_iter().collect(),
            host_memory,
            backstop: backstop.parse()?,
        })
    }
}

/// Compares a kernel's constraints and host-memory args with the op's
/// signature: every violation becomes a `compile_error!` on the kernel's
/// token (the messages of `#[kernel]`'s `const` assertions, with a
/// suggestion where one is near); without one, the `const` assertions.
pub(crate) fn check(input: TokenStream) -> TokenStream {
    let input: CheckInput = match syn::parse2(input) {
        Ok(input) => input,
        Err(e) => return e.into_compile_error(),
    };
    let mut errors = Errors::default();
    let op = &input.op;
    for c in &input.constraints {
        let attr = c.attr.to_string();
        let Some(sig) = input.attrs.iter().find(|a| a.name == attr) else {
            let near =
                registry_spec::suggest::nearest(&attr, input.attrs.iter().map(|a| a.name.as_str()))
                    .map(|n| format!("; did you mean `{n}`?"))
                    .unwrap_or_default();
            errors.at(
                c.attr.span(),
                format!("#[kernel]: op `{op}` has no attr `{attr}`{near}"),
            );
            continue;
        };
        if sig.kind != "type" && sig.kind != "list(type)" {
            errors.at(
                c.attr.span(),
                format!(
                    "#[kernel]: attr `{attr}` of op `{op}` is not a `type` or `list(type)` \
                     attr, so it cannot be a type constraint"
                ),
            );
            continue;
        }
        let Some(allowed) = &sig.allowed else {
            continue;
        };
        for t in &c.types {
            let Ok(dtype) = data_type(t) else { continue };
            if !allowed.contains(&dtype) {
                let name = opreg_proto::DataTypeExt::type_name(dtype);
                errors.at(
                    t.span(),
                    format!("#[kernel]: op `{op}` does not allow type `{name}` for attr `{attr}`"),
                );
            }
        }
    }
    for arg in &input.host_memory {
        let value = arg.value();
        if !input.args.contains(&value) {
            let near =
                registry_spec::suggest::nearest(&value, input.args.iter().map(String::as_str))
                    .map(|n| format!("; did you mean `{n}`?"))
                    .unwrap_or_default();
            errors.at(
                arg.span(),
                format!("#[kernel]: op `{op}` has no input or output named `{value}`{near}"),
            );
        }
    }
    if errors.is_empty() {
        input.backstop
    } else {
        errors.into_compile_errors()
    }
}

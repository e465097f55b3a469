//! `#[kernel]`: check the arguments against the item, emit `const`
//! assertions against the op's `SIGNATURE`, and one inventory registration
//! per type combination.

use proc_macro2::{Ident, Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::{GenericParam, Generics, Item, Path};

use super::args::{Constraint, KernelArgs, parse_args};
use super::dtypes::rust_type;
use crate::errors::Errors;

/// Whether the item is a function (stateless kernel) or a kernel type.
enum Form {
    Fn,
    Type,
}

/// Expands `#[kernel(args)] item`.
pub(crate) fn expand(args: TokenStream, item: TokenStream) -> TokenStream {
    let mut errors = Errors::default();
    let args = parse_args(args, &mut errors);
    let parsed = match syn::parse2::<Item>(item.clone()) {
        Ok(parsed) => parsed,
        Err(e) => {
            errors.push(e);
            let errors = errors.into_compile_errors();
            return quote!(#item #errors);
        }
    };
    let (ident, generics, form) = match &parsed {
        Item::Fn(f) => (f.sig.ident.clone(), f.sig.generics.clone(), Form::Fn),
        Item::Struct(s) => (s.ident.clone(), s.generics.clone(), Form::Type),
        Item::Enum(e) => (e.ident.clone(), e.generics.clone(), Form::Type),
        other => {
            errors.spanned(
                other,
                "#[kernel] goes on a kernel function \
                 (`fn k(ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError>`) or on a \
                 struct implementing `BuildKernel` and `OpKernel`",
            );
            let errors = errors.into_compile_errors();
            return quote!(#item #errors);
        }
    };
    let type_params = check_generics(&generics, &args.constraints, &mut errors);
    if args.op.is_none() {
        errors.at(
            Span::call_site(),
            "#[kernel] needs `op = OpType` (the op's #[op] struct)",
        );
    }
    if args.device.is_none() {
        errors.at(
            Span::call_site(),
            "#[kernel] needs `device = CPU`, `device = GPU` or `device = \"Name\"`",
        );
    }
    for c in &args.constraints {
        if let Some(p) = type_params.iter().find(|p| **p == c.attr) {
            for (dtype, span) in &c.types {
                if dtype.rust.is_none() {
                    errors.at(
                        *span,
                        format!(
                            "type `{}` has no Rust element type, so the generic parameter `{p}` \
                             cannot be instantiated with it; register it with a non-generic kernel",
                            dtype.tf_name
                        ),
                    );
                }
            }
        }
    }
    if !errors.is_empty() {
        let errors = errors.into_compile_errors();
        // Name the op even so: its import is used, and a wrong path is
        // reported where it is written.
        let op_use = args.op.as_ref().map(|op| {
            quote_spanned! {op_span(op)=>
                const _: ::core::marker::PhantomData<#op> = ::core::marker::PhantomData;
            }
        });
        return quote!(#item #errors #op_use);
    }
    let (Some(op), Some(device)) = (&args.op, &args.device) else {
        return item;
    };
    let krate: Path = args
        .krate
        .clone()
        .unwrap_or_else(|| syn::parse_quote!(::registry_core));
    // The checks run while macros expand, through the hidden macro `#[op]`
    // emits beside the op (so their errors reach the editor), which emits
    // the `const` assertions as the backstop when it finds nothing wrong.
    let backstop = emit_checks(&krate, op, &args);
    let kernel = super::check::kernel_tokens(&krate, &args, &backstop);
    let checks = quote_spanned!(op_span(op)=> #op! { #kernel });
    let registrations =
        emit_registrations(&krate, op, &device.0, &args, &ident, &type_params, &form);
    quote! {
        #item
        const _: () = {
            #checks
            #registrations
        };
    }
}

/// The item's type parameters, which must each be a constrained attr.
fn check_generics(
    generics: &Generics,
    constraints: &[Constraint],
    errors: &mut Errors,
) -> Vec<Ident> {
    let mut out = Vec::new();
    for param in &generics.params {
        match param {
            GenericParam::Type(t) => {
                if constraints.iter().any(|c| c.attr == t.ident) {
                    out.push(t.ident.clone());
                } else {
                    errors.spanned(
                        &t.ident,
                        format!(
                            "generic parameter `{0}` is not a constrained attr: #[kernel] \
                             instantiates each type parameter with the types of the attr of the \
                             same name; add `{0} = [...]`",
                            t.ident
                        ),
                    );
                }
            }
            GenericParam::Lifetime(l) => errors.spanned(
                l,
                "a kernel cannot have lifetime parameters (it is built once per node and kept)",
            ),
            GenericParam::Const(c) => errors.spanned(
                c,
                "a kernel cannot have const parameters; only type parameters named after type attrs",
            ),
        }
    }
    out
}

fn op_display(op: &Path) -> String {
    op.segments
        .last()
        .map(|s| s.ident.to_string())
        .unwrap_or_default()
}

/// `const` assertions: each constrained attr exists and is a type attr, each
/// type is allowed, each host-memory arg exists.
fn emit_checks(krate: &Path, op: &Path, args: &KernelArgs) -> TokenStream {
    let name = op_display(op);
    let sig = quote_spanned!(op_span(op)=> <#op as #krate::Op>::SIGNATURE);
    let mut out = TokenStream::new();
    for c in &args.constraints {
        let attr = c.attr.to_string();
        let missing = format!("#[kernel]: op `{name}` has no attr `{attr}`");
        let not_type = format!(
            "#[kernel]: attr `{attr}` of op `{name}` is not a `type` or `list(type)` attr, \
             so it cannot be a type constraint"
        );
        out.extend(quote_spanned! {c.attr.span()=>
            const _: () = ::core::assert!(#sig.attr(#attr).is_some(), #missing);
            const _: () = ::core::assert!(
                #sig.attr(#attr).is_none() || #sig.is_type_attr(#attr), #not_type
            );
        });
        for (dtype, span) in &c.types {
            let variant = format_ident!("{}", dtype.variant());
            let message = format!(
                "#[kernel]: op `{name}` does not allow type `{}` for attr `{attr}`",
                dtype.tf_name
            );
            out.extend(quote_spanned! {*span=>
                const _: () = ::core::assert!(
                    !#sig.is_type_attr(#attr)
                        || #sig.allows_type(#attr, #krate::__private::DataType::#variant),
                    #message
                );
            });
        }
    }
    for arg in &args.host_memory {
        let value = arg.value();
        let message = format!("#[kernel]: op `{name}` has no input or output named `{value}`");
        out.extend(quote_spanned! {arg.span()=>
            const _: () = ::core::assert!(#sig.has_arg(#value), #message);
        });
    }
    out
}

fn op_span(op: &Path) -> Span {
    op.segments
        .last()
        .map(|s| s.ident.span())
        .unwrap_or_else(Span::call_site)
}

/// Every combination of the constraints' types, as indices.
fn combinations(constraints: &[Constraint]) -> Vec<Vec<usize>> {
    let mut out: Vec<Vec<usize>> = vec![Vec::new()];
    for c in constraints {
        let mut next = Vec::new();
        for prefix in &out {
            for i in 0..c.types.len() {
                let mut combo = prefix.clone();
                combo.push(i);
                next.push(combo);
            }
        }
        out = next;
    }
    out
}

fn emit_registrations(
    krate: &Path,
    op: &Path,
    device: &str,
    args: &KernelArgs,
    ident: &Ident,
    type_params: &[Ident],
    form: &Form,
) -> TokenStream {
    let label = args.label.as_ref().map(|l| l.value()).unwrap_or_default();
    let priority: i32 = args
        .priority
        .as_ref()
        .and_then(|p| p.base10_parse::<i32>().ok())
        .map(|p| if args.priority_negative { -p } else { p })
        .unwrap_or(0);
    let host_memory = args.host_memory.iter().map(|s| s.value());
    let host_memory = quote!(&[#(#host_memory),*]);
    let sources = match &args.sources {
        Some(path) => {
            quote_spanned!(path.segments.last().map(|s| s.ident.span()).unwrap_or_else(Span::call_site)=>
            ::core::option::Option::Some(#path as #krate::kernel::KernelSourcesFn))
        }
        None => quote!(::core::option::Option::None),
    };
    let mut out = TokenStream::new();
    for (n, combo) in combinations(&args.constraints).iter().enumerate() {
        let constraints = args.constraints.iter().zip(combo).map(|(c, &i)| {
            let attr = c.attr.to_string();
            let variant = format_ident!("{}", c.types[i].0.variant());
            quote!(#krate::__private::TypeConstraint {
                attr: #attr,
                types: &[#krate::__private::DataType::#variant],
            })
        });
        let type_args: Vec<(TokenStream, String)> = type_params
            .iter()
            .filter_map(|p| {
                let pos = args.constraints.iter().position(|c| c.attr == *p)?;
                let rust = args.constraints[pos].types[combo[pos]].0.rust?;
                Some((rust_type(krate, rust), rust.to_owned()))
            })
            .collect();
        let types = type_args.iter().map(|(t, _)| t);
        let turbofish = if type_args.is_empty() {
            quote!(#ident)
        } else {
            quote!(#ident::<#(#types),*>)
        };
        let item_name = if type_args.is_empty() {
            format!("::{ident}")
        } else {
            let names: Vec<&str> = type_args.iter().map(|(_, n)| n.as_str()).collect();
            format!("::{ident}::<{}>", names.join(", "))
        };
        let factory_ident = format_ident!("__opreg_kernel_factory_{}", n);
        let factory = match form {
            Form::Fn => quote_spanned! {ident.span()=>
                fn #factory_ident(
                    _: &#krate::kernel::OpKernelConstruction<'_>,
                ) -> ::core::result::Result<
                    ::std::boxed::Box<dyn #krate::__private::OpKernel>,
                    #krate::kernel::KernelError,
                > {
                    const COMPUTE: #krate::kernel::ComputeFn = #turbofish;
                    ::core::result::Result::Ok(::std::boxed::Box::new(
                        #krate::__private::FnKernel(COMPUTE),
                    ))
                }
            },
            Form::Type => quote_spanned! {ident.span()=>
                fn #factory_ident(
                    ctx: &#krate::kernel::OpKernelConstruction<'_>,
                ) -> ::core::result::Result<
                    ::std::boxed::Box<dyn #krate::__private::OpKernel>,
                    #krate::kernel::KernelError,
                > {
                    #krate::__private::build_boxed::<#turbofish>(ctx)
                }
            },
        };
        out.extend(quote! {
            #factory
            #krate::__private::inventory::submit! {
                #krate::__private::KernelRegistration {
                    op: <#op as #krate::Op>::NAME,
                    device: #device,
                    constraints: &[#(#constraints),*],
                    host_memory: #host_memory,
                    label: #label,
                    priority: #priority,
                    factory: #factory_ident,
                    kernel_name: ::core::concat!(::core::module_path!(), #item_name),
                    sources: #sources,
                    location: #krate::__private::SourceLocation {
                        file: ::core::file!(),
                        line: ::core::line!(),
                        module_path: ::core::module_path!(),
                    },
                }
            }
        });
    }
    out
}

//! The dtype names a `#[kernel]` constraint may use: TensorFlow's (`float`,
//! `DT_FLOAT`) and Rust's (`f32`), with the Rust element type of each.

use proc_macro2::TokenStream;
use quote::quote;

/// One dtype a constraint names.
pub(crate) struct KernelDtype {
    /// The `DataType` variant (`DtFloat`).
    pub(crate) variant: &'static str,
    /// TF's name (`float`), for messages.
    pub(crate) tf_name: &'static str,
    /// The Rust element type, when tensors of it have one.
    pub(crate) rust: Option<&'static str>,
}

/// (TF name, Rust name, variant, has a Rust element type).
const TABLE: &[(&str, &str, &str, bool)] = &[
    ("half", "f16", "DtHalf", true),
    ("bfloat16", "bf16", "DtBfloat16", true),
    ("float", "f32", "DtFloat", true),
    ("double", "f64", "DtDouble", true),
    ("int8", "i8", "DtInt8", true),
    ("int16", "i16", "DtInt16", true),
    ("int32", "i32", "DtInt32", true),
    ("int64", "i64", "DtInt64", true),
    ("uint8", "u8", "DtUint8", true),
    ("uint16", "u16", "DtUint16", true),
    ("uint32", "u32", "DtUint32", true),
    ("uint64", "u64", "DtUint64", true),
    ("bool", "bool", "DtBool", true),
    ("complex64", "Complex64", "DtComplex64", true),
    ("complex128", "Complex128", "DtComplex128", true),
    ("string", "", "DtString", false),
    ("qint8", "", "DtQint8", false),
    ("quint8", "", "DtQuint8", false),
    ("qint16", "", "DtQint16", false),
    ("quint16", "", "DtQuint16", false),
    ("qint32", "", "DtQint32", false),
    ("resource", "", "DtResource", false),
    ("variant", "", "DtVariant", false),
    ("float8_e5m2", "", "DtFloat8E5m2", false),
    ("float8_e4m3fn", "", "DtFloat8E4m3fn", false),
];

/// Looks up `float`, `DT_FLOAT` or `f32`.
pub(crate) fn lookup(name: &str) -> Option<KernelDtype> {
    let tf = name
        .strip_prefix("DT_")
        .map(str::to_ascii_lowercase)
        .unwrap_or_else(|| name.to_owned());
    TABLE
        .iter()
        .find(|(t, r, _, _)| *t == tf || (!r.is_empty() && *r == name))
        .map(|&(tf_name, rust, variant, has_rust)| KernelDtype {
            variant,
            tf_name,
            rust: has_rust.then_some(rust),
        })
}

/// Every accepted name, for "did you mean" suggestions.
pub(crate) fn all_names() -> impl Iterator<Item = &'static str> {
    TABLE
        .iter()
        .flat_map(|(t, r, _, _)| [*t, *r])
        .filter(|n| !n.is_empty())
}

/// The Rust element type's path under `krate`.
pub(crate) fn rust_type(krate: &syn::Path, rust: &str) -> TokenStream {
    match rust {
        "f16" => quote!(#krate::tensor::f16),
        "bf16" => quote!(#krate::tensor::bf16),
        "Complex64" => quote!(#krate::tensor::Complex64),
        "Complex128" => quote!(#krate::tensor::Complex128),
        other => {
            let ident = proc_macro2::Ident::new(other, proc_macro2::Span::call_site());
            quote!(#ident)
        }
    }
}

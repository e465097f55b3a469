//! The dtype names a `#[kernel]` constraint may use: TensorFlow's (`float`,
//! `DT_FLOAT`), Rust's (`f32`) and TensorFlow's type sets (`realnumbertype`,
//! `numbertype`, `quantizedtype`), read from opreg-proto's one dtype table
//! and registry-spec's alias sets.

use opreg_proto::{DATA_TYPES, DataType, DataTypeExt};
use proc_macro2::TokenStream;
use quote::quote;

/// One dtype a constraint names.
#[derive(Clone, Copy)]
pub(crate) struct KernelDtype {
    /// The type.
    pub(crate) dtype: DataType,
    /// TF's name (`float`), for messages.
    pub(crate) tf_name: &'static str,
    /// The Rust element type, when tensors of it have one.
    pub(crate) rust: Option<&'static str>,
}

impl KernelDtype {
    fn of(dtype: DataType) -> Option<Self> {
        let info = dtype.info()?;
        Some(Self {
            dtype,
            tf_name: info.name,
            rust: info.rust,
        })
    }

    /// The `DataType` variant's name (`DtFloat`).
    pub(crate) fn variant(&self) -> String {
        format!("{:?}", self.dtype)
    }
}

/// Looks up `float`, `DT_FLOAT` or `f32`; a type-set name (`realnumbertype`)
/// stands for its types, in TensorFlow's order.
pub(crate) fn lookup(name: &str) -> Option<Vec<KernelDtype>> {
    if let Some(set) = registry_spec::alias_set(name) {
        return set.iter().map(|&t| KernelDtype::of(t)).collect();
    }
    let tf = name
        .strip_prefix("DT_")
        .map(str::to_ascii_lowercase)
        .unwrap_or_else(|| name.to_owned());
    DATA_TYPES
        .iter()
        .find(|r| r.name == tf || r.rust == Some(name))
        .and_then(|r| KernelDtype::of(r.dtype))
        .map(|d| vec![d])
}

/// Every accepted name, for "did you mean" suggestions.
pub(crate) fn all_names() -> impl Iterator<Item = &'static str> {
    DATA_TYPES
        .iter()
        .flat_map(|r| [Some(r.name), r.rust])
        .flatten()
        .chain(["numbertype", "realnumbertype", "quantizedtype"])
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

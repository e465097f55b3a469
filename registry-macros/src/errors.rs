//! Collecting every error of one item (serde's `Ctxt`): nothing stops at the
//! first problem, and all of them are emitted together at the end.

use proc_macro2::{Span, TokenStream};
use quote::ToTokens;

/// The errors found so far in one `#[op]` item.
#[derive(Default)]
pub(crate) struct Errors {
    combined: Option<syn::Error>,
}

impl Errors {
    /// Records an error.
    pub(crate) fn push(&mut self, error: syn::Error) {
        match &mut self.combined {
            Some(all) => all.combine(error),
            None => self.combined = Some(error),
        }
    }

    /// Records an error at `span`.
    pub(crate) fn at(&mut self, span: Span, message: impl std::fmt::Display) {
        self.push(syn::Error::new(span, message));
    }

    /// Records an error spanning all of `tokens`.
    pub(crate) fn spanned(&mut self, tokens: impl ToTokens, message: impl std::fmt::Display) {
        self.push(syn::Error::new_spanned(tokens, message));
    }

    /// Whether no error was recorded.
    pub(crate) fn is_empty(&self) -> bool {
        self.combined.is_none()
    }

    /// The `compile_error!` invocations of every recorded error.
    pub(crate) fn into_compile_errors(self) -> TokenStream {
        self.combined
            .map(|e| e.into_compile_error())
            .unwrap_or_default()
    }
}

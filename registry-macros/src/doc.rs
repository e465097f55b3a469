//! The op's Doc text, read from the struct's doc comments, and the way back
//! from a byte range of that text to the doc comment it came from.

use std::ops::Range;

use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{Attribute, Expr, ExprLit, Lit, Meta};

use crate::errors::Errors;

/// One line of the joined Doc text.
struct DocLine {
    /// Byte range in the joined text (without the `\n`).
    range: Range<usize>,
    /// The doc attribute the line came from.
    span: Span,
}

/// The Doc text of an op: every `#[doc = "..."]` of the struct, one leading
/// space stripped from each line, joined with `\n`.
pub(crate) struct DocText {
    /// The joined text (TF's `Doc(...)` argument).
    pub(crate) text: String,
    lines: Vec<DocLine>,
}

impl DocText {
    /// Reads the doc attributes of an item. `#[doc(hidden)]` and the like are
    /// not text and are skipped; `#[doc = some_macro!()]` cannot be read by a
    /// macro and is an error.
    pub(crate) fn from_attrs(attrs: &[Attribute], errors: &mut Errors) -> Option<DocText> {
        let mut text = String::new();
        let mut lines = Vec::new();
        for attr in attrs.iter().filter(|a| a.path().is_ident("doc")) {
            let Meta::NameValue(nv) = &attr.meta else {
                continue;
            };
            let Expr::Lit(ExprLit {
                lit: Lit::Str(lit), ..
            }) = &nv.value
            else {
                errors.spanned(
                    &nv.value,
                    "#[op] reads the op's Doc text at compile time: doc attributes of an op \
                     must be string literals (doc comments), not macro calls",
                );
                continue;
            };
            for line in lit.value().split('\n') {
                if !lines.is_empty() {
                    text.push('\n');
                }
                let line = line.strip_suffix('\r').unwrap_or(line);
                let line = line.strip_prefix(' ').unwrap_or(line);
                let start = text.len();
                text.push_str(line);
                lines.push(DocLine {
                    range: start..text.len(),
                    span: attr.span(),
                });
            }
        }
        if lines.is_empty() {
            None
        } else {
            Some(DocText { text, lines })
        }
    }

    /// The doc attribute holding byte `range` of the text, and a snippet of
    /// that line with a caret line under the range (empty when the range is
    /// the whole text or spans several lines).
    pub(crate) fn locate(&self, range: &Range<usize>) -> (Span, String) {
        let first = self.lines[0].span;
        if range.start == 0 && range.end >= self.text.len() {
            return (first, String::new());
        }
        let Some(line) = self
            .lines
            .iter()
            .find(|l| l.range.start <= range.start && range.start <= l.range.end)
        else {
            return (first, String::new());
        };
        if range.end > line.range.end {
            return (line.span, String::new());
        }
        let line_text = &self.text[line.range.clone()];
        let start = self.text[line.range.start..range.start].chars().count();
        let width = self
            .text
            .get(range.clone())
            .map_or(0, |s| s.chars().count())
            .max(1);
        (
            line.span,
            format!("{line_text}\n{}{}", " ".repeat(start), "^".repeat(width)),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn joins_and_locates() {
        let item: syn::ItemStruct = syn::parse_quote! {
            /// Computes things.
            ///
            /// x: the input.
            #[doc = " bogus: not an arg.\n second line"]
            #[doc(hidden)]
            struct Foo;
        };
        let mut errors = Errors::default();
        let doc = DocText::from_attrs(&item.attrs, &mut errors).unwrap();
        assert!(errors.is_empty());
        assert_eq!(
            doc.text,
            "Computes things.\n\nx: the input.\nbogus: not an arg.\nsecond line"
        );
        let start = doc.text.find("bogus").unwrap();
        let (_, snippet) = doc.locate(&(start..start + 5));
        assert_eq!(snippet, "bogus: not an arg.\n^^^^^");
        let (_, snippet) = doc.locate(&(0..doc.text.len()));
        assert_eq!(snippet, "");
    }
}

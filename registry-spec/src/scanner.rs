//! A cursor over one spec string with TensorFlow's `Scanner` character
//! classes, and the [`Failure`] a parse step returns (kind + byte span).

use std::ops::Range;

use crate::error::SpecErrorKind;

/// A parse failure inside one spec: what and where (byte range in the spec).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Failure {
    pub kind: SpecErrorKind,
    pub span: Range<usize>,
    pub suggestion: Option<String>,
}

impl Failure {
    pub fn at(kind: SpecErrorKind, span: Range<usize>) -> Self {
        Failure {
            kind,
            span,
            suggestion: None,
        }
    }
    /// A failure about the spec as a whole (empty span at 0).
    pub fn whole(kind: SpecErrorKind) -> Self {
        Failure {
            kind,
            span: 0..0,
            suggestion: None,
        }
    }
    pub fn suggest(mut self, word: Option<String>) -> Self {
        self.suggestion = word;
        self
    }
}

pub(crate) fn is_letter(c: u8) -> bool {
    c.is_ascii_alphabetic()
}
pub(crate) fn is_lower(c: u8) -> bool {
    c.is_ascii_lowercase()
}
pub(crate) fn is_digit(c: u8) -> bool {
    c.is_ascii_digit()
}
pub(crate) fn is_letter_digit_underscore(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}
pub(crate) fn is_lower_digit_underscore(c: u8) -> bool {
    is_lower(c) || is_digit(c) || c == b'_'
}
pub(crate) fn is_lower_digit(c: u8) -> bool {
    is_lower(c) || is_digit(c)
}
/// TF's `Scanner::SPACE`: space, tab, newline, vertical tab, form feed, CR.
pub(crate) fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// A position in a spec string. All methods are byte-based: every token of
/// the grammar is ASCII, and anything else simply fails to match.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Cursor<'a> {
    text: &'a str,
    pos: usize,
}

impl<'a> Cursor<'a> {
    pub fn new(text: &'a str) -> Self {
        Cursor { text, pos: 0 }
    }
    pub fn pos(&self) -> usize {
        self.pos
    }
    pub fn rest(&self) -> &'a str {
        &self.text[self.pos..]
    }
    /// Byte range from `self.pos` to the end.
    pub fn rest_span(&self) -> Range<usize> {
        self.pos..self.text.len()
    }
    pub fn is_empty(&self) -> bool {
        self.pos >= self.text.len()
    }
    pub fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.pos).copied()
    }
    /// Consumes `prefix` if the rest starts with it.
    pub fn eat(&mut self, prefix: &str) -> bool {
        if self.rest().starts_with(prefix) {
            self.pos += prefix.len();
            true
        } else {
            false
        }
    }
    pub fn skip_space(&mut self) {
        while self.peek().is_some_and(is_space) {
            self.pos += 1;
        }
    }
    /// Consumes a run of bytes of class `class`; returns its range (maybe empty).
    pub fn take_while(&mut self, class: impl Fn(u8) -> bool) -> Range<usize> {
        let start = self.pos;
        while self.peek().is_some_and(&class) {
            self.pos += 1;
        }
        start..self.pos
    }
    /// One byte of `first`, then any of `rest`: an identifier-like token.
    pub fn token(
        &mut self,
        first: impl Fn(u8) -> bool,
        rest: impl Fn(u8) -> bool,
    ) -> Option<Range<usize>> {
        if !self.peek().is_some_and(first) {
            return None;
        }
        let start = self.pos;
        self.pos += 1;
        self.take_while(rest);
        Some(start..self.pos)
    }
    /// TF's `<name>:` prefix (ConsumeAttrName, ConsumeInOutName,
    /// ConsumeDocNameColon): a `first` byte, any `rest` bytes, spaces, `:`,
    /// spaces. Returns the name; on failure the cursor is left unmoved.
    pub fn name_colon(
        &mut self,
        first: impl Fn(u8) -> bool,
        rest: impl Fn(u8) -> bool,
    ) -> Option<&'a str> {
        let save = *self;
        let range = self.token(first, rest)?;
        self.skip_space();
        if !self.eat(":") {
            *self = save;
            return None;
        }
        self.skip_space();
        Some(self.slice(range))
    }
    pub fn slice(&self, range: Range<usize>) -> &'a str {
        &self.text[range]
    }
    /// The word (or single character) at the cursor, as an absolute range;
    /// empty at the end of the text.
    pub fn word_span(&self) -> Range<usize> {
        word_at(self.text, self.pos)
    }
    pub fn set_pos(&mut self, pos: usize) {
        self.pos = pos;
    }
}

/// The range of the "word" (letters, digits, `_`) starting at `pos`, or at
/// least one character, for error spans.
pub(crate) fn word_at(text: &str, pos: usize) -> Range<usize> {
    let bytes = text.as_bytes();
    let mut end = pos;
    while end < bytes.len() && is_letter_digit_underscore(bytes[end]) {
        end += 1;
    }
    if end == pos && pos < text.len() {
        end = pos + text[pos..].chars().next().map_or(1, char::len_utf8);
    }
    pos..end
}

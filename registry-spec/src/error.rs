//! Errors of the spec language: which spec, where inside it, what went wrong.

use std::fmt;
use std::ops::Range;

/// Which spec of an op an error belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SpecSite {
    /// The op's name.
    Name,
    /// The `i`-th `Attr` spec (in declaration order).
    Attr(usize),
    /// The `i`-th `Input` spec.
    Input(usize),
    /// The `i`-th `Output` spec.
    Output(usize),
    /// The `i`-th `ControlOutput` name.
    ControlOutput(usize),
    /// The op's Doc text.
    Doc,
    /// The `Deprecated(version, explanation)` call.
    Deprecation,
    /// The op as a whole (a rule that spans several specs).
    Op,
}

impl SpecSite {
    /// The name of the TF builder call this site corresponds to (`Attr`, `Input`...).
    pub fn call_name(self) -> &'static str {
        match self {
            SpecSite::Name => "Name",
            SpecSite::Attr(_) => "Attr",
            SpecSite::Input(_) => "Input",
            SpecSite::Output(_) => "Output",
            SpecSite::ControlOutput(_) => "ControlOutput",
            SpecSite::Doc => "Doc",
            SpecSite::Deprecation => "Deprecated",
            SpecSite::Op => "Op",
        }
    }
}

/// What is wrong with a spec. The `Display` text follows TensorFlow's
/// message for the same problem, so users who know TF recognise it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SpecErrorKind {
    /// `name:` missing or malformed at the start of an attr spec.
    #[error("Trouble parsing '<name>:'")]
    AttrName,
    /// `name:` missing or malformed at the start of an input/output spec.
    #[error("Trouble parsing 'name:'")]
    ArgName,
    /// A control output name is not an identifier.
    #[error("Trouble parsing control output name '{0}'")]
    ControlOutputName(String),
    /// The attr type could not be read at `rest`.
    #[error("Trouble parsing type string at '{rest}'")]
    AttrType {
        /// The text where parsing stopped.
        rest: String,
    },
    /// A name inside a type set is not a data type or alias.
    #[error("Unrecognized type string '{0}'")]
    UnknownTypeName(String),
    /// A quoted string in an enum `{'a', 'b'}` is malformed.
    #[error("Trouble parsing allowed string at '{rest}'")]
    AllowedString {
        /// The text where parsing stopped.
        rest: String,
    },
    /// An escape sequence in a quoted string is invalid.
    #[error("Trouble unescaping \"{text}\", got error: {reason}")]
    Unescape {
        /// The escaped text.
        text: String,
        /// Why it could not be unescaped.
        reason: String,
    },
    /// Neither `,` nor `}` after an element of a set.
    #[error("Expected , or }} after {what} in list, not: '{rest}'")]
    SetSeparator {
        /// `types` or `strings`.
        what: &'static str,
        /// The text found instead.
        rest: String,
    },
    /// `list(` without its `)`.
    #[error("Expected ) to close 'list(', not: '{rest}'")]
    ListClose {
        /// The text found instead.
        rest: String,
    },
    /// `>=` not followed by a 64-bit integer.
    #[error("Could not parse integer lower limit after '>=', found '{rest}' instead")]
    Minimum {
        /// The text found after `>=`.
        rest: String,
    },
    /// The default value does not parse as the attr's type.
    #[error("Could not parse default value '{text}'")]
    DefaultValue {
        /// The default value text.
        text: String,
    },
    /// Text left over after a complete spec.
    #[error("Extra '{rest}' unparsed at the end")]
    Trailing {
        /// The unparsed text.
        rest: String,
    },
    /// An input/output type is neither a data type nor an identifier.
    #[error("Trouble parsing either a type or an attr name at '{rest}'")]
    ArgType {
        /// The text where parsing stopped.
        rest: String,
    },
    /// An input/output names an attr that is not declared.
    #[error("Reference to unknown attr '{0}'")]
    UnknownAttr(String),
    /// An input/output type names an attr that is not `type` or `list(type)`.
    #[error("Reference to attr '{name}' with type {attr_type} that isn't type or list(type)")]
    NotATypeAttr {
        /// The attr's name.
        name: String,
        /// The attr's declared type.
        attr_type: String,
    },
    /// `Ref(` without its `)`.
    #[error("Did not find closing ')' for 'Ref(', instead found: '{rest}'")]
    RefClose {
        /// The text found instead.
        rest: String,
    },
    /// A `name:` line of the Doc text matches no input, output or attr.
    #[error("No matching input/output/attr for name '{0}'")]
    DocName(String),
    /// Doc given twice.
    #[error("Extra call to Doc()")]
    DocTwice,
    /// Deprecated given twice.
    #[error("Deprecated called twice")]
    DeprecatedTwice,
    /// The shape function was set twice.
    #[error("SetShapeFn called twice")]
    ShapeFnTwice,
    /// A rule of the builder is broken.
    #[error("{0}")]
    Invalid(String),
    /// The type constructor cannot be applied to the op.
    #[error("{0}")]
    TypeConstructor(String),
    /// A rule of TensorFlow's `ValidateOpDef` is broken: TF's message, and
    /// the context TF appends to it (`; in OpDef: ...` or ` in Op 'X'`), which
    /// replaces the usual `from Attr("...")` context.
    #[error("{message}")]
    Validation {
        /// TF's message for the rule.
        message: String,
        /// What TF appends.
        context: String,
    },
}

/// One problem in one spec of an op.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecError {
    /// The op's name.
    pub op: String,
    /// Which spec the problem is in.
    pub site: SpecSite,
    /// The text of that spec (empty for [`SpecSite::Op`]).
    pub spec: String,
    /// Byte range inside `spec` that the problem is about (may be empty: a
    /// position).
    pub span: Range<usize>,
    /// What is wrong.
    pub kind: SpecErrorKind,
    /// The nearest valid word, when one is close (`flaot` -> `float`).
    pub suggestion: Option<String>,
}

impl SpecError {
    /// The spec text with a caret line under the offending range, e.g.
    ///
    /// ```text
    /// T: {flaot}
    ///     ^^^^^
    /// ```
    pub fn snippet(&self) -> String {
        if self.spec.is_empty() || self.spec.contains('\n') {
            return String::new();
        }
        let start = self.spec[..self.span.start.min(self.spec.len())]
            .chars()
            .count();
        let width = self
            .spec
            .get(self.span.clone())
            .map_or(0, |s| s.chars().count())
            .max(1);
        format!("{}\n{}{}", self.spec, " ".repeat(start), "^".repeat(width))
    }

    /// The message without the op and spec context (what TF puts before
    /// `from Attr(...)`), plus the suggestion if any.
    pub fn message(&self) -> String {
        match &self.suggestion {
            Some(word) => format!("{}; did you mean '{word}'?", self.kind),
            None => self.kind.to_string(),
        }
    }

    /// The message exactly as TensorFlow words it for the same problem:
    /// [`message`](Self::message) without the suggestion, followed by the
    /// context TF adds (`from Attr("...") for Op X`).
    ///
    /// ```
    /// let errors = registry_spec::OpSpec::new("X").attr("a: flaot").build().unwrap_err();
    /// assert_eq!(
    ///     errors.errors()[0].tf_message(),
    ///     "Trouble parsing type string at 'flaot' from Attr(\"a: flaot\") for Op X"
    /// );
    /// ```
    pub fn tf_message(&self) -> String {
        format!("{}{}", self.kind, Context(self))
    }
}

/// The context TF appends to a message: which builder call, which op.
struct Context<'a>(&'a SpecError);

impl fmt::Display for Context<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let error = self.0;
        if let SpecErrorKind::Validation { context, .. } = &error.kind {
            return f.write_str(context);
        }
        match error.site {
            SpecSite::Op | SpecSite::Name => write!(f, " for Op {}", error.op),
            SpecSite::Doc | SpecSite::Deprecation => {
                write!(f, " from {}() for Op {}", error.site.call_name(), error.op)
            }
            site => write!(
                f,
                " from {}(\"{}\") for Op {}",
                site.call_name(),
                error.spec,
                error.op
            ),
        }
    }
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.message(), Context(self))
    }
}

impl std::error::Error for SpecError {}

/// Every problem found in one op's specs (never empty).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecErrors(pub Vec<SpecError>);

impl SpecErrors {
    /// The individual errors, in spec order.
    pub fn errors(&self) -> &[SpecError] {
        &self.0
    }
}

impl fmt::Display for SpecErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for SpecErrors {}

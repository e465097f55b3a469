//! NodeDef input strings (`"node"`, `"node:2"`, `"^node"`) and node names.

use std::fmt;

/// One entry of [`NodeDef::input`](opreg_proto::NodeDef::input), parsed.
///
/// A data input names an output of another node: `"node"` (output 0) or
/// `"node:2"`. A control input is `"^node"`: it carries no data and names no
/// output, so its [`port`](Self::port) is 0.
///
/// ```
/// use registry_core::node_def::InputRef;
///
/// let data = InputRef::parse("conv/weights:1").unwrap();
/// assert_eq!((data.node, data.port, data.is_control), ("conv/weights", 1, false));
///
/// let control = InputRef::parse("^init").unwrap();
/// assert_eq!((control.node, control.is_control), ("init", true));
/// assert_eq!(control.to_string(), "^init");
///
/// assert!(InputRef::parse("x:-1").is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct InputRef<'a> {
    /// The name of the node the input comes from.
    pub node: &'a str,
    /// The output index of that node (0 when the string has no `:port`, and
    /// for control inputs).
    pub port: usize,
    /// True for control inputs (`^node`).
    pub is_control: bool,
}

impl<'a> InputRef<'a> {
    /// Parses an input string; see [`parse_input`].
    pub fn parse(input: &'a str) -> Result<Self, InputParseError> {
        parse_input(input)
    }
}

impl fmt::Display for InputRef<'_> {
    /// Writes the canonical form: `^node`, `node` for port 0, else `node:port`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_control {
            write!(f, "^{}", self.node)
        } else if self.port == 0 {
            f.write_str(self.node)
        } else {
            write!(f, "{}:{}", self.node, self.port)
        }
    }
}

/// Why an input string could not be parsed (see [`parse_input`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InputParseError {
    /// The string is empty.
    #[error("input is empty")]
    Empty,
    /// The string is `^` or `:N` (or `^:N`): it names no node.
    #[error("input '{input}' names no node")]
    EmptyNodeName {
        /// The input string.
        input: String,
    },
    /// The text after the last `:` is not a non-negative decimal integer
    /// that fits in `usize`.
    #[error("input '{input}' has output port '{port}', which is not a non-negative integer")]
    BadPort {
        /// The input string.
        input: String,
        /// The text after the last `:`.
        port: String,
    },
    /// A control input (`^node:1`) names an output port.
    #[error("control input '{input}' must not name an output port")]
    ControlWithPort {
        /// The input string.
        input: String,
    },
    /// The node part breaks the node name rule (see [`is_valid_node_name`]).
    #[error("input '{input}' names node '{node}', which is not a valid node name: {reason}")]
    InvalidNodeName {
        /// The input string.
        input: String,
        /// The node part of the input.
        node: String,
        /// Which rule it breaks.
        reason: String,
    },
}

/// Parses a NodeDef input string into (node, port, is_control), as
/// TensorFlow's `ParseTensorName` does, but strictly: a `:` must be followed
/// by a decimal port, control inputs take no port, and the node part must be
/// a valid node name ([`is_valid_node_name`]).
///
/// ```
/// use registry_core::node_def::{InputParseError, parse_input};
///
/// assert_eq!(parse_input("x").unwrap().port, 0);
/// assert_eq!(parse_input("x:0").unwrap(), parse_input("x").unwrap());
/// assert!(parse_input("^x").unwrap().is_control);
/// assert!(matches!(parse_input("^x:1"), Err(InputParseError::ControlWithPort { .. })));
/// assert!(matches!(parse_input(""), Err(InputParseError::Empty)));
/// ```
pub fn parse_input(input: &str) -> Result<InputRef<'_>, InputParseError> {
    if input.is_empty() {
        return Err(InputParseError::Empty);
    }
    let (is_control, rest) = match input.strip_prefix('^') {
        Some(rest) => (true, rest),
        None => (false, input),
    };
    let (node, port) = match rest.rsplit_once(':') {
        Some((node, port_text)) => {
            if is_control {
                return Err(InputParseError::ControlWithPort {
                    input: input.to_owned(),
                });
            }
            let port = (!port_text.is_empty() && port_text.bytes().all(|b| b.is_ascii_digit()))
                .then(|| port_text.parse::<usize>().ok())
                .flatten()
                .ok_or_else(|| InputParseError::BadPort {
                    input: input.to_owned(),
                    port: port_text.to_owned(),
                })?;
            (node, port)
        }
        None => (rest, 0),
    };
    if node.is_empty() {
        return Err(InputParseError::EmptyNodeName {
            input: input.to_owned(),
        });
    }
    if let Some(reason) = node_name_problem(node) {
        return Err(InputParseError::InvalidNodeName {
            input: input.to_owned(),
            node: node.to_owned(),
            reason,
        });
    }
    Ok(InputRef {
        node,
        port,
        is_control,
    })
}

/// True if `name` follows TensorFlow's node name rule
/// `[A-Za-z0-9.][A-Za-z0-9_./>-]*`.
///
/// ```
/// use registry_core::node_def::is_valid_node_name;
///
/// assert!(is_valid_node_name("dense/MatMul_1"));
/// assert!(is_valid_node_name(".hidden-scope>x"));
/// assert!(!is_valid_node_name("_internal"));
/// assert!(!is_valid_node_name("a:0"));
/// assert!(!is_valid_node_name(""));
/// ```
pub fn is_valid_node_name(name: &str) -> bool {
    node_name_problem(name).is_none()
}

/// Why `name` is not a valid node name, or `None` if it is.
pub(crate) fn node_name_problem(name: &str) -> Option<String> {
    let mut chars = name.char_indices();
    let Some((_, first)) = chars.next() else {
        return Some("a node name must not be empty".to_owned());
    };
    if !(first.is_ascii_alphanumeric() || first == '.') {
        return Some(format!(
            "a node name must start with a letter, a digit or '.', not {first:?}"
        ));
    }
    chars
        .find(|(_, c)| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '/' | '>' | '-')))
        .map(|(at, c)| {
            format!(
                "character {c:?} at byte {at} is not allowed \
                 (allowed: letters, digits, '_', '.', '/', '>', '-')"
            )
        })
}

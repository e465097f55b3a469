//! [`RegistryError`]: everything that can go wrong when registering or
//! looking up an op, with enough context to act on it.

use std::fmt;

use registry_spec::{SpecErrors, ValidationError};

use super::OpOrigin;

/// Why registering, or looking up, an op failed.
///
/// Every variant names the op. Registration never panics, aborts or silently
/// replaces an op: a conflict is always one of these errors.
///
/// ```
/// # use opreg_standard_ops as _; // links the standard ops
/// use registry_core::registry::{OpRegistry, RegistryError};
/// use registry_core::spec::OpSpec;
///
/// let registry = OpRegistry::new();
/// registry.register(OpSpec::new("Square").input("x: float").output("y: float"), None).unwrap();
/// match registry.look_up("Sqaure") {
///     Err(RegistryError::NotFound { suggestions, .. }) => assert_eq!(suggestions, ["Square"]),
///     other => panic!("{other:?}"),
/// }
/// ```
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum RegistryError {
    /// No op of that name is registered.
    #[error("{}", not_found_message(name, suggestions))]
    NotFound {
        /// The name looked up.
        name: String,
        /// Registered names close to it, nearest first (at most three).
        suggestions: Vec<String>,
    },
    /// An op of that name is registered already; the second registration was
    /// refused (the first is kept).
    #[error("op '{name}' is registered twice: first {first}, again {again}")]
    AlreadyExists {
        /// The op's name.
        name: String,
        /// Where the registration that is kept comes from.
        first: OpOrigin,
        /// Where the refused registration comes from.
        again: OpOrigin,
    },
    /// The registration itself is wrong (bad spec, OpDef that fails
    /// validation, bytes that do not decode); the op is not usable.
    #[error("invalid registration of op '{name}' ({origin}): {reason}")]
    Invalid {
        /// The name the op was registered under.
        name: String,
        /// Where the registration comes from.
        origin: OpOrigin,
        /// What is wrong with it.
        reason: InvalidOp,
    },
    /// [`OpRegistry::set_watcher`](super::OpRegistry::set_watcher) was called
    /// while a watcher was set (as in TensorFlow, one watcher at a time).
    #[error("a watcher is already set on this op registry; clear it before setting another")]
    WatcherAlreadySet,
}

impl RegistryError {
    /// The op the error is about (`None` for
    /// [`WatcherAlreadySet`](RegistryError::WatcherAlreadySet)).
    pub fn op_name(&self) -> Option<&str> {
        match self {
            RegistryError::NotFound { name, .. }
            | RegistryError::AlreadyExists { name, .. }
            | RegistryError::Invalid { name, .. } => Some(name),
            RegistryError::WatcherAlreadySet => None,
        }
    }
}

/// What is wrong with an invalid registration.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum InvalidOp {
    /// The specs given to [`OpRegistry::register`](super::OpRegistry::register)
    /// do not parse (every problem, each with its spec).
    #[error("{0}")]
    Spec(SpecErrors),
    /// The OpDef breaks one of TensorFlow's `ValidateOpDef` rules.
    #[error("{0}")]
    Validation(ValidationError),
    /// The serialized OpDef of an inventory registration does not decode.
    #[error("its serialized OpDef does not decode: {0}")]
    Decode(prost::DecodeError),
    /// The inventory registration's name differs from its OpDef's name.
    #[error("it is registered as '{registered}' but its OpDef is named '{op_def}'")]
    NameMismatch {
        /// `OpRegistration::name`.
        registered: String,
        /// The decoded OpDef's `name`.
        op_def: String,
    },
}

fn not_found_message(name: &str, suggestions: &[String]) -> String {
    let mut message = format!("op '{name}' is not registered in this binary");
    match suggestions {
        [] => message.push_str(
            "; if it is declared in another crate, the binary must name that crate \
             (e.g. `registry_core::link_ops!(that_crate);`): \
             a crate that only appears in Cargo.toml is not linked",
        ),
        [one] => {
            let _ = fmt::Write::write_fmt(&mut message, format_args!("; did you mean '{one}'?"));
        }
        [init @ .., last] => {
            let quoted: Vec<String> = init.iter().map(|s| format!("'{s}'")).collect();
            let _ = fmt::Write::write_fmt(
                &mut message,
                format_args!("; did you mean {} or '{last}'?", quoted.join(", ")),
            );
        }
    }
    message
}

//! [`CallError`]: why a call of an op from JAX failed, with the XLA FFI
//! error code it is reported with and the Python exception the package
//! raises for it.

use registry_core::kernel::{KernelError, StatusCode};

/// Why a call (or the shape inference before it) failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CallError {
    /// An input's dtype is not one the op takes (Python's `TypeError`).
    #[error("{0}")]
    Type(String),
    /// Bad inputs or attrs: their number, shapes or values (`ValueError`).
    #[error("{0}")]
    Value(String),
    /// Something JAX cannot express for this op: an attr kind XLA has no
    /// attribute for, an output shape that depends on input values
    /// (`NotImplementedError`).
    #[error("{0}")]
    Unsupported(String),
    /// The kernel refused the call (or panicked).
    #[error(transparent)]
    Kernel(#[from] KernelError),
    /// A broken promise between XLA and the handler.
    #[error("{0}")]
    Internal(String),
}

impl CallError {
    /// The XLA FFI error code (absl's numbering) it is reported with.
    pub fn code(&self) -> i32 {
        match self {
            CallError::Type(_) | CallError::Value(_) => StatusCode::InvalidArgument as i32,
            CallError::Unsupported(_) => StatusCode::Unimplemented as i32,
            CallError::Kernel(e) => e.status_code() as i32,
            CallError::Internal(_) => StatusCode::Internal as i32,
        }
    }

    /// What the Python package raises for it (`type`, `value`,
    /// `unsupported`, `kernel`, `internal`).
    pub fn python_kind(&self) -> &'static str {
        match self {
            CallError::Type(_) => "type",
            CallError::Value(_) => "value",
            CallError::Unsupported(_) => "unsupported",
            CallError::Kernel(_) => "kernel",
            CallError::Internal(_) => "internal",
        }
    }

    /// The same error, its message prefixed with `context` (the op).
    pub fn context(self, context: &str) -> CallError {
        let wrap = |m: String| format!("{context}: {m}");
        match self {
            CallError::Type(m) => CallError::Type(wrap(m)),
            CallError::Value(m) => CallError::Value(wrap(m)),
            CallError::Unsupported(m) => CallError::Unsupported(wrap(m)),
            CallError::Kernel(e) => CallError::Kernel(kernel_error_in(e, context)),
            CallError::Internal(m) => CallError::Internal(wrap(m)),
        }
    }
}

/// `error` with its message prefixed with `context`, of the same code.
fn kernel_error_in(error: KernelError, context: &str) -> KernelError {
    let message = format!("{context}: {error}");
    match error.status_code() {
        StatusCode::InvalidArgument => KernelError::invalid_argument(message),
        StatusCode::OutOfRange => KernelError::out_of_range(message),
        StatusCode::Unimplemented => KernelError::unimplemented(message),
        StatusCode::ResourceExhausted => KernelError::resource_exhausted(message),
        StatusCode::Internal => KernelError::internal(message),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_follow_the_kind_and_context_keeps_them() {
        let e = CallError::Kernel(KernelError::out_of_range("index 9")).context("op 'Gather'");
        assert_eq!(e.code(), 11);
        assert_eq!(e.to_string(), "op 'Gather': index 9");
        assert_eq!(e.python_kind(), "kernel");
        let e = CallError::Type("int64 is not allowed".into()).context("op 'Abs'");
        assert_eq!((e.code(), e.python_kind()), (3, "type"));
        assert_eq!(CallError::Unsupported(String::new()).code(), 12);
        assert_eq!(CallError::Internal(String::new()).code(), 13);
    }
}

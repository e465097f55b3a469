//! [`KernelError`]: why building or running a kernel failed (TensorFlow's
//! `Status` codes, as a typed enum).

use opreg_proto::{DataType, DataTypeExt};

use crate::tensor::TensorError;

/// Why a kernel could not be built from a node or could not compute.
///
/// The variants follow TensorFlow's status codes where a kernel reports a
/// problem with its inputs (`InvalidArgument`, `OutOfRange`, `Unimplemented`,
/// `ResourceExhausted`, `Internal`), plus typed variants for the mistakes the
/// context itself detects (a bad input or output index, a dtype mismatch).
///
/// ```
/// use registry_core::kernel::KernelError;
/// let err = KernelError::invalid_argument(format!("In[0] is not a matrix: shape {}", "[3]"));
/// assert_eq!(err.to_string(), "In[0] is not a matrix: shape [3]");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum KernelError {
    /// An input's shape or value is not acceptable (TF's `InvalidArgument`).
    #[error("{0}")]
    InvalidArgument(String),
    /// A value is outside the range the kernel accepts (TF's `OutOfRange`).
    #[error("{0}")]
    OutOfRange(String),
    /// The kernel does not support this case (TF's `Unimplemented`).
    #[error("{0}")]
    Unimplemented(String),
    /// The result would be too large to allocate (TF's `ResourceExhausted`).
    #[error("{0}")]
    ResourceExhausted(String),
    /// A broken invariant inside the kernel (TF's `Internal`).
    #[error("{0}")]
    Internal(String),
    /// The kernel panicked; the executor caught the panic and failed the
    /// run instead of unwinding through the caller.
    #[error("the kernel panicked: {0}")]
    Panicked(String),
    /// An attr the kernel reads is missing or has the wrong kind.
    #[error("attr '{attr}' of node '{node}' (op '{op}'): {message}")]
    Attr {
        /// The node's name.
        node: String,
        /// The node's op.
        op: String,
        /// The attr's name.
        attr: String,
        /// What is wrong.
        message: String,
    },
    /// The kernel asked for an input index the node does not have.
    #[error("input index {index} is out of range: the node has {count} inputs")]
    InputIndex {
        /// The index asked for.
        index: usize,
        /// The number of inputs.
        count: usize,
    },
    /// The kernel asked for an input that it has already forwarded to an output.
    #[error("input {index} was forwarded to an output and can no longer be read")]
    InputForwarded {
        /// The input's index.
        index: usize,
    },
    /// The kernel asked for an output index the node does not have.
    #[error("output index {index} is out of range: the node has {count} outputs")]
    OutputIndex {
        /// The index asked for.
        index: usize,
        /// The number of outputs.
        count: usize,
    },
    /// The caller gave a different number of inputs than the node has.
    #[error("expected {expected} inputs, got {actual}")]
    InputCount {
        /// The node's input count.
        expected: usize,
        /// The number given.
        actual: usize,
    },
    /// An input has another dtype than the node declares for it.
    #[error("input {index} has dtype {}, but the node expects {}", .actual.type_name(), .expected.type_name())]
    InputDtype {
        /// The input's index.
        index: usize,
        /// The dtype the node declares.
        expected: DataType,
        /// The dtype given.
        actual: DataType,
    },
    /// The kernel set an output of another dtype than the node declares.
    #[error("output {index} was set with dtype {}, but the node declares {}", .actual.type_name(), .expected.type_name())]
    OutputDtype {
        /// The output's index.
        index: usize,
        /// The dtype the node declares.
        expected: DataType,
        /// The dtype the kernel produced.
        actual: DataType,
    },
    /// The kernel returned without setting an output.
    #[error("the kernel did not set output {index}")]
    MissingOutput {
        /// The output's index.
        index: usize,
    },
    /// Building, viewing or allocating a tensor failed.
    #[error(transparent)]
    Tensor(#[from] TensorError),
    /// The device (its driver or a library such as cuBLAS) failed, or is
    /// missing something the kernel needs.
    #[error(transparent)]
    Device(#[from] crate::memory::DeviceError),
}

/// The canonical status codes (absl's, which TensorFlow's `error::Code`,
/// its C API's `TF_Code` and XLA's FFI error codes all number alike) that
/// kernel errors map to: what a host tells its framework when an opreg
/// kernel fails ([`KernelError::status_code`]).
///
/// ```
/// use registry_core::kernel::{KernelError, StatusCode};
/// let err = KernelError::out_of_range("index 7 is not in [0, 3)");
/// assert_eq!(err.status_code(), StatusCode::OutOfRange);
/// assert_eq!(StatusCode::OutOfRange as i32, 11);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(i32)]
pub enum StatusCode {
    /// `INVALID_ARGUMENT`: bad inputs or attrs.
    InvalidArgument = 3,
    /// `RESOURCE_EXHAUSTED`: an allocation was refused.
    ResourceExhausted = 8,
    /// `OUT_OF_RANGE`: a value outside the accepted range.
    OutOfRange = 11,
    /// `UNIMPLEMENTED`: a case the kernel does not support.
    Unimplemented = 12,
    /// `INTERNAL`: a broken invariant (or a panic).
    Internal = 13,
}

impl KernelError {
    /// The status code a framework reports this error with: the code
    /// TensorFlow's own kernels use for the same kind of problem.
    pub fn status_code(&self) -> StatusCode {
        match self {
            KernelError::InvalidArgument(_)
            | KernelError::Attr { .. }
            | KernelError::InputCount { .. }
            | KernelError::InputDtype { .. } => StatusCode::InvalidArgument,
            KernelError::OutOfRange(_) => StatusCode::OutOfRange,
            KernelError::Unimplemented(_) => StatusCode::Unimplemented,
            KernelError::ResourceExhausted(_) => StatusCode::ResourceExhausted,
            KernelError::Tensor(e) => match e {
                TensorError::AllocationFailed { .. }
                | TensorError::AllocationLimit { .. }
                | TensorError::TooLarge { .. } => StatusCode::ResourceExhausted,
                TensorError::UnsupportedDtype(_) => StatusCode::Unimplemented,
                _ => StatusCode::InvalidArgument,
            },
            _ => StatusCode::Internal,
        }
    }

    /// TF's `errors::InvalidArgument`.
    pub fn invalid_argument(message: impl Into<String>) -> Self {
        Self::InvalidArgument(message.into())
    }

    /// TF's `errors::OutOfRange`.
    pub fn out_of_range(message: impl Into<String>) -> Self {
        Self::OutOfRange(message.into())
    }

    /// TF's `errors::Unimplemented`.
    pub fn unimplemented(message: impl Into<String>) -> Self {
        Self::Unimplemented(message.into())
    }

    /// TF's `errors::ResourceExhausted`.
    pub fn resource_exhausted(message: impl Into<String>) -> Self {
        Self::ResourceExhausted(message.into())
    }

    /// A [`Panicked`](Self::Panicked) error from a caught panic's payload
    /// (its `&str` or `String` message, when it has one).
    pub fn from_panic(payload: &(dyn std::any::Any + Send)) -> Self {
        let message = payload
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic without a message".to_owned());
        Self::Panicked(message)
    }

    /// TF's `errors::Internal`.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::Internal(message.into())
    }
}

/// Returns early with [`KernelError::InvalidArgument`] unless `cond` holds
/// (TF's `OP_REQUIRES(ctx, cond, errors::InvalidArgument(...))`).
///
/// ```
/// use registry_core::{kernel::KernelError, kernel_ensure};
/// fn check(rank: usize) -> Result<(), KernelError> {
///     kernel_ensure!(rank == 2, "In[0] is not a matrix: rank {}", rank);
///     Ok(())
/// }
/// assert_eq!(check(3).unwrap_err().to_string(), "In[0] is not a matrix: rank 3");
/// ```
#[macro_export]
macro_rules! kernel_ensure {
    ($cond:expr, $($fmt:tt)+) => {
        if !$cond {
            return ::core::result::Result::Err(
                $crate::kernel::KernelError::InvalidArgument(::std::format!($($fmt)+)),
            );
        }
    };
}

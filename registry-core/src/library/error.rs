//! [`LibraryProblem`]: why an op library's registrations were refused.

use crate::registry::{OpOrigin, RegistryError};

/// One problem with a library's registrations.
#[derive(Debug, thiserror::Error)]
pub enum LibraryProblem {
    /// An op is already registered (or registered twice by the library).
    #[error("op '{name}' is already registered ({first}); the library declares it again ({again})")]
    DuplicateOp {
        /// The op.
        name: String,
        /// The registration already there.
        first: OpOrigin,
        /// The library's.
        again: OpOrigin,
    },
    /// An op's OpDef is invalid.
    #[error("{0}")]
    InvalidOp(Box<RegistryError>),
    /// A kernel has the same op, device, label, constraints and priority as
    /// a registered one.
    #[error(
        "kernel {kernel} ({location}) duplicates the registered kernel {existing} \
         (op '{op}', device {device}, same constraints, label and priority)"
    )]
    DuplicateKernel {
        /// The op.
        op: String,
        /// The device type.
        device: String,
        /// The library's kernel.
        kernel: String,
        /// Where the library registers it.
        location: String,
        /// The kernel already registered.
        existing: String,
    },
    /// A kernel's op is registered neither in the host nor in the library.
    #[error("kernel {kernel} ({location}) is for op '{op}', which is not registered")]
    KernelWithoutOp {
        /// The op.
        op: String,
        /// The kernel.
        kernel: String,
        /// Where it is registered.
        location: String,
    },
}

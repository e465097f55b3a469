//! [`LibraryError`]: why an op library was not loaded.

use std::path::PathBuf;

use crate::registry::{OpOrigin, RegistryError};

/// Why [`load_op_library`](super::load_op_library) refused a library.
/// Nothing of a refused library is registered.
#[derive(Debug, thiserror::Error)]
pub enum LibraryError {
    /// The file could not be opened as a shared library.
    #[error("cannot load op library {}: {reason}", path.display())]
    Open {
        /// The file.
        path: PathBuf,
        /// The loader's message.
        reason: String,
    },
    /// The library has no opreg header: it was not built with
    /// `registry_core::export_op_library!`.
    #[error(
        "{} is not an opreg op library: it exports no `{symbol}` \
         (an op library calls `registry_core::export_op_library!(its_crate);` \
         and keeps the file name cargo gives it, lib<crate>.so)",
        path.display()
    )]
    NotAnOpLibrary {
        /// The file.
        path: PathBuf,
        /// The symbol looked for.
        symbol: String,
    },
    /// The header is not one this build can read.
    #[error(
        "op library {} has an unreadable header ({detail}); \
         it was built by an incompatible version of opreg",
        path.display()
    )]
    BadHeader {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        detail: String,
    },
    /// The library was built by another compiler, another version of
    /// registry-core, or with other settings: its Rust types cannot be
    /// trusted to match the host's.
    #[error(
        "op library {} was built against an incompatible framework build, \
         so it is not loaded (rebuild it with the host's toolchain and \
         registry-core):\n  library: {library}\n  host:    {host}",
        path.display()
    )]
    Incompatible {
        /// The file.
        path: PathBuf,
        /// The library's build fingerprint.
        library: String,
        /// The host's.
        host: String,
    },
    /// The library's registrations clash with the host's or are invalid.
    #[error(
        "op library {} was not loaded: {} problem(s):\n{}",
        path.display(),
        problems.len(),
        problems.iter().map(|p| format!("  - {p}")).collect::<Vec<_>>().join("\n")
    )]
    Conflicts {
        /// The file.
        path: PathBuf,
        /// Every problem found.
        problems: Vec<LibraryProblem>,
    },
}

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

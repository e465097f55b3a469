//! The errors of `opreg coverage`.

use std::path::PathBuf;

/// Why `opreg coverage` failed.
#[derive(Debug, thiserror::Error)]
pub enum CoverageError {
    /// The `--against` file could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The `--against` file is not a binary protobuf of a `KernelList`.
    #[error("{} is not a binary KernelList protobuf: {source}", path.display())]
    Decode {
        /// The file.
        path: PathBuf,
        /// The decoder's complaint.
        source: prost::DecodeError,
    },
    /// The `--against` file decodes, but not into a sensible `KernelList`.
    #[error("{} is not a KernelList: {reason}", path.display())]
    NotKernelList {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// A `--device` names no known device type.
    #[error("unknown device '{device}' (known: {})", known.join(", "))]
    UnknownDevice {
        /// The name given.
        device: String,
        /// The device types known to this binary and the `--against` file.
        known: Vec<String>,
    },
    /// The JSON output could not be written.
    #[error("cannot write the coverage as JSON: {0}")]
    Json(#[from] serde_json::Error),
}

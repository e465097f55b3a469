//! Shared helpers for opreg's integration tests: where `../shared` is.

use std::path::PathBuf;

/// The `shared/` data folder beside the checkout (override with
/// `OPREG_SHARED_DIR`).
pub fn shared_dir() -> PathBuf {
    std::env::var_os("OPREG_SHARED_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared"))
}

pub mod conformance;
pub mod fuzz;
pub mod graphs;
pub mod op_library;

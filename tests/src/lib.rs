//! Shared helpers for opreg's integration tests: where `../shared` and the
//! workspace are.

use std::path::{Path, PathBuf};

/// The `shared/` data folder beside the checkout (override with
/// `OPREG_SHARED_DIR`).
pub fn shared_dir() -> PathBuf {
    std::env::var_os("OPREG_SHARED_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared"))
}

/// The workspace root.
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ sits in the workspace")
        .to_path_buf()
}

pub mod conformance;
pub mod fixture_crate;
pub mod fuzz;
pub mod graphs;
pub mod numerics;
pub mod op_library;
pub mod tf_ops;

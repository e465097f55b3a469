//! Builds the op libraries of the loader tests: `zero-out`'s cdylib (a real
//! op library) and the fake headers of `tests/op-library-fixture/`.
//!
//! The builds run `cargo build --workspace --tests` from the test, in the
//! test's own profile: the same build as `cargo test --workspace`, so in a
//! test run it is up to date already (nothing is rebuilt), and the library
//! matches its host's build (features and debug assertions included), which
//! loading requires.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::workspace_root;

fn cargo() -> Command {
    Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
}

/// Runs `cargo build` with `args` (plus `--release` when the test is
/// optimized) and returns the artifacts cargo reports: (target name, files).
fn build(
    args: &[&str],
    manifest: Option<&Path>,
    target_dir: Option<&Path>,
) -> Vec<(String, Vec<PathBuf>)> {
    let mut command = cargo();
    command.arg("build").args(args).arg("--message-format=json");
    if !cfg!(debug_assertions) {
        command.arg("--release");
    }
    if let Some(manifest) = manifest {
        command.arg("--manifest-path").arg(manifest);
    }
    if let Some(dir) = target_dir {
        command.env("CARGO_TARGET_DIR", dir);
    }
    let output = command
        .current_dir(workspace_root())
        .output()
        .expect("run cargo build");
    assert!(
        output.status.success(),
        "cargo build {args:?} failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        // Test harnesses (`profile.test`) share their target's name: skip them.
        .filter(|msg| msg["reason"] == "compiler-artifact" && msg["profile"]["test"] != true)
        .map(|msg| {
            let name = msg["target"]["name"].as_str().unwrap_or("").to_owned();
            let mut files: Vec<PathBuf> = msg["filenames"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .map(PathBuf::from)
                .collect();
            if let Some(exe) = msg["executable"].as_str() {
                files.push(PathBuf::from(exe));
            }
            (name, files)
        })
        .collect()
}

fn is_dylib(path: &Path) -> bool {
    matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("so" | "dylib" | "dll")
    )
}

/// The workspace's test build: every artifact cargo reports, built once
/// per test process.
fn workspace_artifacts() -> &'static [(String, Vec<PathBuf>)] {
    static ARTIFACTS: std::sync::OnceLock<Vec<(String, Vec<PathBuf>)>> = std::sync::OnceLock::new();
    ARTIFACTS.get_or_init(|| build(&["--workspace", "--tests"], None, None))
}

/// The cdylib of `examples/zero_out` (`libzero_out.so`).
pub fn zero_out_library() -> PathBuf {
    workspace_library("zero_out")
}

/// The cdylib of `tests/tf-fixture-ops` (`libtf_fixture_ops.so`), the
/// TensorFlow host tests' fixture.
pub fn tf_fixture_library() -> PathBuf {
    workspace_library("tf_fixture_ops")
}

/// The cdylib of the workspace's library target `name`.
fn workspace_library(name: &str) -> PathBuf {
    workspace_artifacts()
        .iter()
        .filter(|(target, _)| target == name)
        .flat_map(|(_, files)| files)
        .find(|f| is_dylib(f))
        .cloned()
        .unwrap_or_else(|| panic!("cargo reports no cdylib of {name}"))
}

/// The `opreg` executable.
pub fn opreg_binary() -> PathBuf {
    workspace_artifacts()
        .iter()
        .filter(|(name, _)| name == "opreg")
        .flat_map(|(_, files)| files)
        .find(|f| f.extension().is_none() || f.extension().is_some_and(|e| e == "exe"))
        .cloned()
        .expect("cargo reports the opreg executable")
}

/// Builds `tests/op-library-fixture` and copies it into `dir` under the
/// three names that select its headers: `libmismatch.so` (a valid header
/// from another build), `libbadmagic.so` (wrong magic) and
/// `libnewheader.so` (a header version from the future).
pub fn fake_libraries(dir: &Path) -> [PathBuf; 3] {
    let root = workspace_root();
    let built = build(
        &["--offline"],
        Some(&root.join("tests/op-library-fixture/Cargo.toml")),
        Some(&root.join("target/op-library-fixture")),
    )
    .into_iter()
    .flat_map(|(_, files)| files)
    .find(|f| is_dylib(f))
    .expect("cargo reports the fixture's cdylib");
    let extension = built.extension().and_then(|e| e.to_str()).unwrap_or("so");
    ["mismatch", "badmagic", "newheader"].map(|name| {
        let path = dir.join(format!("lib{name}.{extension}"));
        std::fs::copy(&built, &path).expect("copy the fixture library");
        path
    })
}

//! Does a binary see the `inventory` registrations of a crate of ops it
//! depends on? Builds and runs the fixture workspace in `tests/link/` in
//! debug and release:
//!
//! - `use-crate` names the crate once (`use link_test_ops as _;`): its op is seen;
//! - `link-macro` names it with `registry_core::link_ops!`: its op is seen;
//! - `cargo-toml-only` only lists it in Cargo.toml: rustc never loads the
//!   crate, so its op is *not* seen. This asserts today's toolchain
//!   behaviour; if it starts failing, dependencies named only in Cargo.toml
//!   are now linked, and the `link_ops!` documentation should say so.
//!
//! The fixture builds offline into `target/link-test/`, with the versions of
//! the main workspace's Cargo.lock.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

/// The op that `tests/link/link-test-ops` registers.
const OP: &str = "LinkTestOp";

/// One fixture build at a time (they share a target dir and the Cargo.lock copy).
static FIXTURE: Mutex<()> = Mutex::new(());

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("registry-core sits in the workspace")
        .to_path_buf()
}

/// Runs one binary of the fixture with `cargo run` and returns the op names it prints.
fn run_fixture(bin: &str, release: bool) -> Vec<String> {
    let _guard = FIXTURE
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let root = workspace_root();
    let fixture = root.join("tests/link");
    std::fs::copy(root.join("Cargo.lock"), fixture.join("Cargo.lock"))
        .expect("copy Cargo.lock into tests/link");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = Command::new(cargo);
    command
        .arg("run")
        .arg("--offline")
        .arg("--quiet")
        .arg("--manifest-path")
        .arg(fixture.join("Cargo.toml"))
        .args(["--bin", bin])
        .env("CARGO_TARGET_DIR", root.join("target/link-test"));
    if release {
        command.arg("--release");
    }
    let output = command.output().expect("run cargo");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "cargo run --bin {bin} (release: {release}) failed: {}\nstdout:\n{stdout}\nstderr:\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    stdout.lines().map(str::to_owned).collect()
}

fn check(release: bool) {
    let seen = run_fixture("use-crate", release);
    assert!(
        seen.iter().any(|n| n == OP),
        "`use link_test_ops as _;` must link the op crate; saw {seen:?}"
    );

    let seen = run_fixture("link-macro", release);
    assert!(
        seen.iter().any(|n| n == OP),
        "`link_ops!(link_test_ops)` must link the op crate; saw {seen:?}"
    );

    let seen = run_fixture("cargo-toml-only", release);
    assert!(
        !seen.iter().any(|n| n == OP),
        "a crate named only in Cargo.toml is now linked: update the docs of `link_ops!` and this test"
    );
}

#[test]
fn named_op_crates_are_linked_in_debug() {
    check(false);
}

#[test]
fn named_op_crates_are_linked_in_release() {
    check(true);
}

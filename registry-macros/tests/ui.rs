//! Compile-fail (and compile-pass) tests of `#[op]`: every error class of the
//! spec language and of the macro's own syntax, with rustc's output pinned in
//! `tests/ui/*.stderr`.
//!
//! rustc's diagnostics change between releases, so the snapshots are pinned
//! to one toolchain: with another one the test is skipped (loudly).
//! Regenerate the snapshots with `TRYBUILD=overwrite cargo test -p registry-macros --test ui`.

/// The toolchain the `.stderr` snapshots were written with.
const PINNED_RUSTC: &str = "rustc 1.95.0";

fn rustc_version() -> Option<String> {
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let out = std::process::Command::new(rustc)
        .arg("--version")
        .output()
        .ok()?;
    Some(String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

#[test]
fn ui() {
    match rustc_version() {
        Some(version) if version.starts_with(PINNED_RUSTC) => {}
        other => {
            eprintln!(
                "SKIPPED: the #[op] UI snapshots are pinned to {PINNED_RUSTC}, but the compiler \
                 is {}; run the UI tests with {PINNED_RUSTC} (or regenerate the snapshots with \
                 TRYBUILD=overwrite)",
                other
                    .as_deref()
                    .unwrap_or("unknown (rustc --version failed)")
            );
            return;
        }
    }
    let t = trybuild::TestCases::new();
    t.pass("tests/ui/pass_*.rs");
    t.compile_fail("tests/ui/fail_*.rs");
}

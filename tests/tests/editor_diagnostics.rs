//! What an editor shows as you type: rust-analyzer's own diagnostics (not
//! `cargo check`'s) on a small crate with a bad `#[op]` spec and kernels
//! the op does not allow. Both kinds of error must be reported by
//! rust-analyzer on the offending token: the spec's (a `compile_error!` of
//! `#[op]`) and the kernel's (a `compile_error!` of the check `#[kernel]`
//! runs through the hidden macro `#[op]` emits beside the op; the `const`
//! assertions, which rust-analyzer's live diagnostics do not evaluate, are
//! only the backstop).
//!
//! Needs rust-analyzer (`rustup component add rust-analyzer`), so it is
//! ignored unless asked for: `cargo test -p opreg-tests --test
//! editor_diagnostics -- --ignored` (`scripts/editor-check.sh` installs the
//! component and runs it).

use opreg_tests::fixture_crate::{line_col, target_dir, write_fixture_crate};
use std::process::Command;

/// The fixture crate's `src/lib.rs`.
const FIXTURE_SRC: &str = r#"use opreg_standard_ops::Abs;
use registry_core::kernel::{KernelError, OpKernelContext};
use registry_core::{kernel, op};

/// Computes the absolute value of a tensor.
#[op(input = "x: T", output = "y: T", attr = "T: {half, flaot, double}")]
pub struct MyAbs;

#[kernel(op = Abs, device = CPU, T = [float, uint8])]
fn abs(_ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    Ok(())
}

#[kernel(op = Abs, device = GPU, T = [float], host_memory = ["axis"])]
fn abs_gpu(_ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
    Ok(())
}
"#;

/// 0-based (line, column) of the first occurrence of `needle` in the
/// fixture after `after` (rust-analyzer's `LineCol`).
fn position_of(needle: &str, after: &str) -> (usize, usize) {
    let from = FIXTURE_SRC.find(after).expect("anchor in fixture");
    let offset = from + FIXTURE_SRC[from..].find(needle).expect("needle in fixture");
    line_col(FIXTURE_SRC, offset)
}

/// One error rust-analyzer reports: (line, column) of its start, message.
fn errors() -> Vec<((usize, usize), String)> {
    let dir = target_dir().join("tests").join("editor-diagnostics");
    write_fixture_crate(
        &dir,
        "opreg-editor-fixture",
        &["registry-core", "opreg-standard-ops"],
        FIXTURE_SRC,
    );
    let output = Command::new("rust-analyzer")
        .arg("diagnostics")
        .arg(&dir)
        .env("CARGO_TARGET_DIR", dir.join("target"))
        .output()
        .expect("rust-analyzer is not installed: rustup component add rust-analyzer");
    let text = String::from_utf8_lossy(&output.stdout).into_owned()
        + &String::from_utf8_lossy(&output.stderr);
    // `at crate opreg_editor_fixture, file <path>: Error Ra("macro-error",
    // Error) from LineCol { line: 8, col: 45 } to LineCol { .. }: message`
    let mut errors = Vec::new();
    for part in text.split("at crate opreg_editor_fixture, file ").skip(1) {
        let Some(rest) = part.split_once(": Error ").map(|(_, r)| r) else {
            continue;
        };
        let Some(from) = rest.split_once("from LineCol { line: ").map(|(_, r)| r) else {
            continue;
        };
        let mut numbers = from
            .split(|c: char| !c.is_ascii_digit())
            .filter(|s| !s.is_empty());
        let line: usize = numbers.next().unwrap().parse().unwrap();
        let col: usize = numbers.next().unwrap().parse().unwrap();
        // After `to LineCol { line: .., col: .. }: `.
        let message = from
            .split_once("to LineCol {")
            .and_then(|(_, r)| r.split_once("}: "))
            .map_or("", |(_, m)| m)
            .lines()
            .next()
            .unwrap_or("")
            .to_owned();
        errors.push(((line, col), message));
    }
    assert!(
        !errors.is_empty(),
        "rust-analyzer reported no error:\n{text}"
    );
    errors
}

#[test]
#[ignore = "needs rust-analyzer (rustup component add rust-analyzer)"]
fn spec_and_kernel_errors_reach_the_editor_on_their_tokens() {
    let errors = errors();
    let find = |needle: &str| {
        errors
            .iter()
            .find(|(_, m)| m.contains(needle))
            .unwrap_or_else(|| panic!("no error containing {needle:?} in {errors:#?}"))
    };
    // The spec error: on the attr's literal.
    let (at, _) = find("Unrecognized type string 'flaot'; did you mean 'float'?");
    assert_eq!(*at, position_of(r#""T: {half"#, "#[op("), "{errors:#?}");
    // The kernel's type the op does not allow: on `uint8`.
    let (at, _) = find("#[kernel]: op `Abs` does not allow type `uint8` for attr `T`");
    assert_eq!(*at, position_of("uint8", "device = CPU"), "{errors:#?}");
    // The unknown host-memory arg: on its literal.
    let (at, _) = find("#[kernel]: op `Abs` has no input or output named `axis`");
    assert_eq!(*at, position_of(r#""axis""#, "device = GPU"), "{errors:#?}");
}

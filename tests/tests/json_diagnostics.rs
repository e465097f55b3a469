//! What editors see: builds a small crate with bad `#[op]` specs using
//! `cargo check --message-format=json` and checks that each error's primary
//! span is the offending string literal (file, line, column) and that the
//! message draws the position inside the literal (the caret line).

use opreg_tests::fixture_crate::{line_col, target_dir, write_fixture_crate};
use std::process::Command;

use serde_json::Value;

/// The fixture crate's `src/lib.rs`: two bad specs on known lines.
const FIXTURE_SRC: &str = r#"use registry_core::op;

/// Computes the absolute value of a tensor.
#[op(input = "x: T", output = "y: T", attr = "T: {half, flaot, double}")]
pub struct Abs;

#[op(
    inptu = "x: float",
    output = "y: float",
)]
pub struct Typo;
"#;

/// 1-based (line, column) of the first occurrence of `needle` in the fixture.
fn position_of(needle: &str) -> (u64, u64) {
    let offset = FIXTURE_SRC.find(needle).expect("needle in fixture");
    let (line, column) = line_col(FIXTURE_SRC, offset);
    (line as u64 + 1, column as u64 + 1)
}

/// The compiler's error messages from `cargo check --message-format=json`.
fn check_fixture() -> Vec<Value> {
    let base = target_dir().join("tests").join("json-diagnostics");
    let crate_dir = base.join("fixture");
    write_fixture_crate(
        &crate_dir,
        "opreg-json-diagnostics-fixture",
        &["registry-core"],
        FIXTURE_SRC,
    );
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = Command::new(cargo)
        .args([
            "check",
            "--offline",
            "--quiet",
            "--message-format=json",
            "--lib",
        ])
        .current_dir(&crate_dir)
        .env("CARGO_TARGET_DIR", base.join("target"))
        .env_remove("RUSTFLAGS")
        .output()
        .expect("run cargo check");
    assert!(!output.status.success(), "the fixture must not compile");
    let stdout = String::from_utf8(output.stdout).unwrap();
    let messages: Vec<Value> = stdout
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|m| m["reason"] == "compiler-message" && m["message"]["level"] == "error")
        .map(|m| m["message"].clone())
        .filter(|m| !m["message"].as_str().unwrap_or("").starts_with("aborting"))
        .collect();
    assert!(
        !messages.is_empty(),
        "no compiler errors in cargo's output; stderr:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    messages
}

fn primary_span(message: &Value) -> &Value {
    message["spans"]
        .as_array()
        .and_then(|spans| spans.iter().find(|s| s["is_primary"] == true))
        .unwrap_or_else(|| panic!("no primary span in {message:#}"))
}

#[test]
fn errors_point_at_the_literal_with_a_caret_line() {
    let messages = check_fixture();
    let texts: Vec<&str> = messages
        .iter()
        .map(|m| m["message"].as_str().unwrap())
        .collect();

    // The attr spec: the error is on the third literal of line 4.
    let attr = messages
        .iter()
        .find(|m| m["message"].as_str().unwrap().contains("'flaot'"))
        .unwrap_or_else(|| panic!("no error about 'flaot' in {texts:#?}"));
    let text = attr["message"].as_str().unwrap();
    assert!(text.contains("did you mean 'float'?"), "{text}");
    assert!(
        text.contains(r#"from Attr("T: {half, flaot, double}") for Op Abs"#),
        "{text}"
    );
    // The caret line sits under `flaot` in the spec line above it.
    let lines: Vec<&str> = text.lines().collect();
    let caret = lines
        .iter()
        .position(|l| l.trim() == "^^^^^")
        .unwrap_or_else(|| panic!("{text}"));
    let spec_line = lines[caret - 1];
    assert_eq!(spec_line.trim(), "T: {half, flaot, double}", "{text}");
    assert_eq!(
        &spec_line[lines[caret].find('^').unwrap()..][..5],
        "flaot",
        "caret not under the typo:\n{text}"
    );

    let span = primary_span(attr);
    let (line, column) = position_of(r#""T: {half, flaot, double}""#);
    assert_eq!(span["file_name"], "src/lib.rs", "{span:#}");
    assert_eq!(span["line_start"], line, "{span:#}");
    assert_eq!(span["column_start"], column, "{span:#}");
    // On stable the whole literal is spanned; with `Literal::subspan` (nightly)
    // only the typo is.
    let end = span["column_end"].as_u64().unwrap();
    assert!(
        end == column + r#""T: {half, flaot, double}""#.len() as u64
            || end == column + "\"T: {half, ".len() as u64 + 5,
        "{span:#}"
    );

    // The unknown key of the second op is reported too, on its own line.
    let typo = messages
        .iter()
        .find(|m| m["message"].as_str().unwrap().contains("`inptu`"))
        .unwrap_or_else(|| panic!("no error about `inptu` in {texts:#?}"));
    assert!(
        typo["message"]
            .as_str()
            .unwrap()
            .contains("did you mean `input`?")
    );
    let span = primary_span(typo);
    let (line, column) = position_of("inptu");
    assert_eq!(
        (span["line_start"].as_u64(), span["column_start"].as_u64()),
        (Some(line), Some(column))
    );
    assert_eq!(span["file_name"], "src/lib.rs");

    assert_eq!(
        messages.len(),
        2,
        "exactly the two errors, no follow-on errors: {texts:#?}"
    );
}

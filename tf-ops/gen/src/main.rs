//! Writes `tf-ops/src/generated.rs` from `conformance/tf_registry_2_21.json`
//! (every op but the standard op set's, which `opreg-standard-ops` declares).
//!
//! `cargo run -p tf-registry-ops-gen` regenerates the file; with `--check` it
//! only reports (exit status 1) whether the checked-in file is stale.

use std::process::ExitCode;

fn main() -> ExitCode {
    let check = std::env::args().skip(1).any(|a| a == "--check");
    let input = tf_registry_ops_gen::registry_json_path();
    let output = tf_registry_ops_gen::generated_rs_path();
    let json = match std::fs::read_to_string(&input) {
        Ok(json) => json,
        Err(e) => {
            eprintln!("cannot read {}: {e}", input.display());
            return ExitCode::FAILURE;
        }
    };
    let code = match tf_registry_ops_gen::generate(&json, &opreg_standard_ops::NAMES) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("{}: {e}", input.display());
            return ExitCode::FAILURE;
        }
    };
    let current = std::fs::read_to_string(&output).unwrap_or_default();
    if current == code {
        println!("{} is up to date", output.display());
        return ExitCode::SUCCESS;
    }
    if check {
        eprintln!(
            "{} is stale: run `cargo run -p tf-registry-ops-gen`",
            output.display()
        );
        return ExitCode::FAILURE;
    }
    if let Err(e) = std::fs::write(&output, code) {
        eprintln!("cannot write {}: {e}", output.display());
        return ExitCode::FAILURE;
    }
    println!("wrote {}", output.display());
    ExitCode::SUCCESS
}

//! Records what an op library must share with its host to be loaded (see
//! `registry_core::library`): the compiler, the target, the panic strategy,
//! debug assertions and this crate's features. Rust has no stable ABI, so a
//! library built with any of these different is refused.

use std::env;
use std::process::Command;

fn main() {
    let rustc = env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let version = Command::new(&rustc)
        .arg("--version")
        .output()
        .ok()
        .filter(|out| out.status.success())
        .map(|out| String::from_utf8_lossy(&out.stdout).trim().to_owned())
        .unwrap_or_else(|| "unknown rustc".into());
    let target = env::var("TARGET").unwrap_or_default();
    let panic = env::var("CARGO_CFG_PANIC").unwrap_or_default();
    let debug_assertions = env::var_os("CARGO_CFG_DEBUG_ASSERTIONS").is_some();
    let mut features: Vec<String> = env::vars()
        .filter_map(|(key, _)| key.strip_prefix("CARGO_FEATURE_").map(str::to_lowercase))
        .collect();
    features.sort();
    println!(
        "cargo:rustc-env=OPREG_BUILD_FINGERPRINT={version}; target {target}; panic={panic}; \
         debug_assertions={debug_assertions}; features [{}]",
        features.join(",")
    );
    println!("cargo:rerun-if-env-changed=RUSTC");
    println!("cargo:rerun-if-changed=build.rs");
}

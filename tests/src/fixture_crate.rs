//! Small crates that depend on workspace crates by path, written under the
//! target dir (not in the source tree, so building them leaves no
//! `Cargo.lock` or `target/` in the checkout): what the compiler and
//! rust-analyzer say about user code is checked on them.

use std::path::{Path, PathBuf};

use crate::workspace_root;

/// The workspace's target dir: the test binary is
/// `<target>/<profile>/deps/<exe>` (or `CARGO_TARGET_DIR`).
pub fn target_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("CARGO_TARGET_DIR") {
        return PathBuf::from(dir);
    }
    let exe = std::env::current_exe().expect("test binary path");
    exe.ancestors()
        .nth(3)
        .expect("<target>/<profile>/deps/<exe>")
        .to_path_buf()
}

/// Writes crate `package` into `dir`: `src/lib.rs` is `lib_src`, and each
/// of `dependencies` (workspace folder = package name) is a path
/// dependency. The workspace's lock file is copied, so the build pins the
/// same versions and works offline from the cached registry.
pub fn write_fixture_crate(dir: &Path, package: &str, dependencies: &[&str], lib_src: &str) {
    let root = workspace_root();
    std::fs::create_dir_all(dir.join("src")).unwrap();
    let dependencies: String = dependencies
        .iter()
        .map(|name| {
            format!(
                "{name} = {{ path = {:?} }}\n",
                root.join(name).display().to_string()
            )
        })
        .collect();
    let manifest = format!(
        r#"[package]
name = "{package}"
version = "0.0.0"
edition = "2024"
publish = false

[lib]
path = "src/lib.rs"

[dependencies]
{dependencies}
# Not part of the opreg workspace.
[workspace]
"#
    );
    std::fs::write(dir.join("Cargo.toml"), manifest).unwrap();
    std::fs::write(dir.join("src/lib.rs"), lib_src).unwrap();
    std::fs::copy(root.join("Cargo.lock"), dir.join("Cargo.lock")).unwrap();
}

/// The 0-based (line, column) of byte `offset` in `text`.
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset];
    let line = before.matches('\n').count();
    let column = before.len() - before.rfind('\n').map_or(0, |i| i + 1);
    (line, column)
}

#!/usr/bin/env bash
# Checks that `#[op]` and `#[kernel]` errors reach the editor: installs
# rust-analyzer (the rustup component) when it is missing and runs the
# ignored test tests/tests/editor_diagnostics.rs, which runs
# `rust-analyzer diagnostics` on a small crate with a bad spec and kernels
# the op does not allow, and checks each error is reported on its token.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! rust-analyzer --version >/dev/null 2>&1; then
    rustup component add rust-analyzer
fi
rust-analyzer --version
cargo test -p opreg-tests --test integration -- --ignored editor_diagnostics::

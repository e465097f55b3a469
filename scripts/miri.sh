#!/usr/bin/env bash
# Runs the tests that exercise opreg's `unsafe` code (tensor storage, typed
# views, and tensors over another framework's memory) under Miri. Needs the nightly toolchain with the miri and
# rust-src components: `rustup component add miri rust-src --toolchain nightly`.
# Not part of CI (which has stable only).
set -euo pipefail
cd "$(dirname "$0")/.."
export MIRIFLAGS="${MIRIFLAGS:--Zmiri-disable-isolation}"   # the tests read ../shared
cargo +nightly miri test -p registry-core --test tensor --test foreign "$@"

#!/usr/bin/env bash
# The project's tests (the README's test command; .ci/run calls it).
#
# 1. NVRTC, NVIDIA's CUDA C compiler library, from PyPI into .cache/nvrtc
#    (it needs no GPU, and with it the tests compile every GPU kernel source
#    here; without it they print "skipped:", or fail when
#    OPREG_REQUIRE_NVRTC=1, which .ci/run sets).
# 2. `cargo test --workspace` (tests that need a GPU are ignored: they are
#    `#[ignore = "needs a GPU"]`, run by scripts/gpu-verify.sh).
# 3. The example crate's GPU kernels (its `cuda` feature, off by default).
# 4. The API docs, with every intra-doc link resolved (`-D warnings`).
set -euo pipefail
cd "$(dirname "$0")/.."
if nvrtc_lib="$(scripts/install-nvrtc.sh 2>/dev/null)"; then
    export LD_LIBRARY_PATH="$nvrtc_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    echo "NVRTC: $nvrtc_lib"
else
    echo "NVRTC could not be installed: GPU kernel sources will not be compiled (their tests skip, or fail under OPREG_REQUIRE_NVRTC=1)"
fi
cargo test --workspace
cargo test -p zero-out --features cuda,kernels-cuda/cuda --test gpu
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps

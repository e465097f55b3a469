#!/usr/bin/env bash
# The project's tests (the README's test command; .ci/run calls it).
#
# 1. NVRTC, NVIDIA's CUDA C compiler library, from PyPI into .cache/nvrtc
#    (best effort: it needs no GPU, and with it the tests compile every GPU
#    kernel source here; without it they skip, saying so).
# 2. `cargo test --workspace` (GPU tests skip without a GPU, saying why).
# 3. The example crate's GPU kernels (its `cuda` feature, off by default).
set -euo pipefail
cd "$(dirname "$0")/.."
if nvrtc_lib="$(scripts/install-nvrtc.sh 2>/dev/null)"; then
    export LD_LIBRARY_PATH="$nvrtc_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    echo "NVRTC: $nvrtc_lib"
else
    echo "NVRTC could not be installed: GPU kernel sources will not be compiled (their tests skip)"
fi
cargo test --workspace
cargo test -p zero-out --features cuda --test gpu

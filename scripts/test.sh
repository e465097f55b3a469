#!/usr/bin/env bash
# The project's tests (the README's test command; .ci/run calls it).
#
# 1. NVRTC, NVIDIA's CUDA C compiler library, from PyPI into .cache/nvrtc
#    (it needs no GPU, and with it the tests compile every GPU kernel source
#    here; without it they print "skipped:", or fail when
#    OPREG_REQUIRE_NVRTC=1, which .ci/run sets).
# 2. TensorFlow 2.21 (tensorflow-cpu) from PyPI into .cache/tf, for the
#    TensorFlow host tests (tests/tests/tensorflow_host.rs load the example
#    op library with tf.load_op_library). A failed install fails the run.
# 3. JAX 0.10.2 (CPU) from PyPI into .cache/jax, with the opreg_jax package
#    (python/) installed into it, for the JAX host tests
#    (tests/tests/jax_host.rs). A failed install fails the run.
# 4. `cargo test --workspace` (tests that need a GPU are ignored: they are
#    `#[ignore = "needs a GPU"]`, run by scripts/gpu-verify.sh).
# 5. The example crate's GPU kernels (its `cuda` feature, off by default).
# 6. The API docs, with every intra-doc link resolved (`-D warnings`).
set -euo pipefail
cd "$(dirname "$0")/.."
if nvrtc_lib="$(scripts/install-nvrtc.sh 2>/dev/null)"; then
    export LD_LIBRARY_PATH="$nvrtc_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    echo "NVRTC: $nvrtc_lib"
else
    echo "NVRTC could not be installed: GPU kernel sources will not be compiled (their tests skip, or fail under OPREG_REQUIRE_NVRTC=1)"
fi
OPREG_TF_PYTHON="$(scripts/install-tf.sh)"
export OPREG_TF_PYTHON
echo "TensorFlow: $OPREG_TF_PYTHON"
OPREG_JAX_PYTHON="$(scripts/install-jax.sh)"
export OPREG_JAX_PYTHON
echo "JAX: $OPREG_JAX_PYTHON"
cargo test --workspace
cargo test -p zero-out --features cuda,kernels-cuda/cuda --test gpu
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps

#!/usr/bin/env bash
# Times opreg kernels inside TensorFlow 2.21 against TensorFlow's own (see
# scripts/tf_host_bench.py): builds the benchmark op library in release mode,
# installs TensorFlow into .cache/tf if needed, and prints the table.
set -euo pipefail
cd "$(dirname "$0")/.."
python="$(scripts/install-tf.sh)"
cargo build --release -p tf-bench-ops >&2
"$python" scripts/tf_host_bench.py "$PWD/target/release/libtf_bench_ops.so"

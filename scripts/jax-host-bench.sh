#!/usr/bin/env bash
# Times the example op library called from JAX (opreg_jax) against jnp
# expressions doing the same work and against the same kernels in opreg's
# own executor (see scripts/jax_host_bench.py): builds the release binaries,
# installs JAX and the package into .cache/jax if needed, prints the tables.
# Not part of the tests.
set -euo pipefail
cd "$(dirname "$0")/.."
python="$(scripts/install-jax.sh)"
cargo build --release -p zero-out -p opreg-cli >&2
"$python" scripts/jax_host_bench.py "$PWD/target/release/libzero_out.so" "$PWD/target/release/opreg"

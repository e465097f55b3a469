#!/usr/bin/env bash
# Runs the MatMul benchmark (kernels-cpu/benches/matmul.rs) with OpenBLAS's
# sgemm alongside opreg's kernel, OpenBLAS on 2 threads. Installs Debian's
# libopenblas-dev first when the library is missing (needs root and apt).
#
# Usage: scripts/openblas-bench.sh [extra cargo bench args...]
set -euo pipefail

cd "$(dirname "$0")/.."

if ! ldconfig -p 2>/dev/null | grep -q 'libopenblas\.so\b'; then
    echo "libopenblas not found: installing libopenblas-dev" >&2
    if [ "$(id -u)" -ne 0 ]; then
        SUDO=sudo
    else
        SUDO=
    fi
    $SUDO apt-get update
    $SUDO apt-get install -y libopenblas-dev
fi

export OPENBLAS_NUM_THREADS=2
exec cargo bench -p kernels-cpu --features bench-openblas --bench matmul "$@"

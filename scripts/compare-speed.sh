#!/usr/bin/env bash
# Times every graph of ../shared/models and ../shared/graphs through opreg,
# TensorFlow 2.21 and ONNX Runtime side by side and prints a Markdown table
# with the ratios (scripts/compare_speed.py). Not part of the tests.
#
#   scripts/compare-speed.sh [--runs N] [--rounds R] [--only NAME...] [--kernels]
#
# Builds `opreg` in release, and installs tensorflow-cpu 2.21.0,
# onnxruntime and tf2onnx from PyPI into .cache/speed (a virtual environment
# of its own, so that the tests' .cache/tf stays as it is). The shared data
# folder is $OPREG_SHARED_DIR, else ../shared.
set -euo pipefail
cd "$(dirname "$0")/.."
shared=${OPREG_SHARED_DIR:-../shared}
venv=.cache/speed
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import tensorflow, onnxruntime, tf2onnx' >/dev/null 2>&1; then
    python3 -m venv "$venv" >&2
    "$venv/bin/pip" install -q tensorflow-cpu==2.21.0 onnxruntime tf2onnx >&2
fi
cargo build --release -q -p opreg-cli --bin opreg
exec "$venv/bin/python" scripts/compare_speed.py target/release/opreg "$shared" "$@"

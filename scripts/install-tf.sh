#!/usr/bin/env bash
# Installs TensorFlow 2.21 (CPU) from PyPI into .cache/tf (a virtual
# environment, created once) and prints its python. The TensorFlow host tests
# (tests/tests/tensorflow_host.rs, through the README's test command), the
# TF oracle scripts (scripts/tf-oracle/) and the timing scripts run under it:
#
#   py=$(scripts/install-tf.sh) && "$py" scripts/tf-oracle/specs.py
#
# A failed install exits non-zero (the test command then fails).
set -euo pipefail
cd "$(dirname "$0")/.."
venv=.cache/tf
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import tensorflow' >/dev/null 2>&1; then
    python3 -m venv "$venv" >&2
    "$venv/bin/pip" install -q tensorflow-cpu==2.21.0 >&2
fi
version=$("$venv/bin/python" -c 'import os; os.environ["TF_CPP_MIN_LOG_LEVEL"]="3"; import tensorflow as tf; print(tf.__version__)' 2>/dev/null)
[ "$version" = 2.21.0 ] || { echo "install-tf: TensorFlow $version in $venv, not 2.21.0" >&2; exit 1; }
echo "$PWD/$venv/bin/python"

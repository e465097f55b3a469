#!/usr/bin/env bash
# Installs JAX (CPU) from PyPI into .cache/jax (a virtual environment,
# created once), then this repository's opreg_jax package (python/) into it,
# and prints its python. The JAX host tests (tests/tests/jax_host.rs, through
# the README's test command) and scripts/jax-host-bench.sh run under it:
#
#   py=$(scripts/install-jax.sh) && "$py" -c 'import opreg_jax'
#
# A failed install exits non-zero (the test command then fails).
set -euo pipefail
cd "$(dirname "$0")/.."
venv=.cache/jax
jax_version=0.10.2
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import jax' >/dev/null 2>&1; then
    python3 -m venv "$venv" >&2
    "$venv/bin/pip" install -q "jax==$jax_version" "jaxlib==$jax_version" >&2
fi
version=$("$venv/bin/python" -c 'import jax; print(jax.__version__)' 2>/dev/null)
[ "$version" = "$jax_version" ] || { echo "install-jax: JAX $version in $venv, not $jax_version" >&2; exit 1; }
# The package as a user installs it (reinstalled each time: it is small).
"$venv/bin/pip" install -q --force-reinstall --no-deps ./python >&2
echo "$PWD/$venv/bin/python"

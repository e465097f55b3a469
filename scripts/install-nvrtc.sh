#!/usr/bin/env bash
# Installs NVIDIA's NVRTC library (the CUDA C compiler GPU kernels are built
# with at run time) from PyPI into .cache/nvrtc, and prints its lib folder.
# NVRTC needs no GPU: with it on LD_LIBRARY_PATH, kernels-cuda's tests
# compile every GPU kernel source on this machine (they skip without it).
#
#   export LD_LIBRARY_PATH="$(scripts/install-nvrtc.sh):${LD_LIBRARY_PATH:-}"
set -euo pipefail
cd "$(dirname "$0")/.."
dir=.cache/nvrtc
lib="$PWD/$dir/nvidia/cu13/lib"
if [ ! -e "$lib/libnvrtc.so.13" ]; then
    PIP_ROOT_USER_ACTION=ignore python3 -m pip install --quiet --disable-pip-version-check --no-deps \
        --target "$dir" "nvidia-cuda-nvrtc==13.*" >&2
fi
echo "$lib"

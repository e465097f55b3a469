#!/usr/bin/env bash
# Verifies the GPU kernels on a machine with an NVIDIA GPU, in two halves:
#
#   scripts/gpu-verify.sh build   # here (Rust): builds .device-bin/bundle.tar.xz
#   scripts/gpu-verify.sh run     # on the GPU machine (no Rust needed), from the
#                                 # repository root, with .device-bin/ carried there
#
# `build` compiles, in release, and strips:
#   - every test target of kernels-cuda (features cuda)  -> tests/kernels-cuda-<target>
#   - the tests crate's gpu_graphs test                   -> tests/opreg-tests-gpu_graphs
#   - the example crate's gpu test (features cuda, and kernels-cuda's cuda
#     for the standard GPU kernels its graph uses)         -> tests/zero-out-gpu
#   - kernels-cuda's `gpu` criterion bench                -> bench-gpu
#   - the `opreg` CLI (opreg-cli, default features: cuda) -> opreg
# and copies the shared TensorFlow graphs (graph.pb, io.json) to
# shared/graphs and the feed-forward models (mobilenet_v2, unet_small,
# transformer_encoder) to shared/models, all staged in target/gpu-verify/ and packed into
# .device-bin/bundle.tar.xz (the binaries share most of their code, so xz
# packs ~20 MiB each into a few MiB in all). It fails when .device-bin would
# not fit the 64 MiB a device run can carry.
#
# `run` unpacks the bundle into a temporary folder, puts every
# `nvidia/*/lib` folder of python3's site-packages (CUDA's NVRTC, cuBLAS,
# cuDNN from the pip wheels) on LD_LIBRARY_PATH, prints nvidia-smi, runs each
# test binary with --include-ignored --nocapture (the tests that need a GPU
# are `#[ignore = "needs a GPU"]`, so they run here and are reported as
# ignored elsewhere; a failure, or a test that printed "skipped:", fails the
# run; OPREG_REQUIRE_NVRTC=1, so a missing NVRTC fails the source
# checks; gpu_graphs compares every graph and model with TF's outputs), runs
# `opreg run --device gpu` on every shared graph, times each model with
# `opreg bench --device gpu` (the "N runs: min ..." line goes to the
# summary), and runs the bench binary with --bench. Logs go to $OUT (or a
# temporary folder when OUT is unset), in four files: tests.log, opreg.log,
# bench.log, summary.txt. Exit status 0 only when everything passed. Without
# a GPU (no nvidia-smi, or it fails) `run` stops at once with exit status 2,
# unless GPU_VERIFY_FORCE=1 (to exercise this script on a machine without
# one: every step then fails, saying why).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

carried=.device-bin
bundle=$carried/bundle.tar.xz
limit_bytes=$((64 * 1024 * 1024))
# Wall-clock limits of `run`'s steps, in seconds (a device command has 10
# minutes in all; a hung kernel must not take the whole of it).
test_timeout=${GPU_VERIFY_TEST_TIMEOUT:-300}
opreg_timeout=${GPU_VERIFY_OPREG_TIMEOUT:-60}
bench_timeout=${GPU_VERIFY_BENCH_TIMEOUT:-300}

die() {
    echo "gpu-verify: $*" >&2
    exit 1
}

# The executables of a cargo build's JSON messages on stdin, one per line:
# "<kind> <target name> <path>".
executables() {
    python3 -c '
import json, sys
for line in sys.stdin:
    try:
        m = json.loads(line)
    except ValueError:
        continue
    if m.get("reason") == "compiler-artifact" and m.get("executable"):
        print(m["target"]["kind"][0], m["target"]["name"], m["executable"])
'
}

# Copies executable $1 to $2, stripped.
install_stripped() {
    cp "$1" "$2" || die "copying $1"
    chmod u+w "$2"
    strip --strip-all "$2" 2>/dev/null || objcopy --strip-all "$2" 2>/dev/null ||
        echo "gpu-verify: warning: could not strip $2" >&2
}

build() {
    command -v cargo >/dev/null || die "cargo not found: 'build' runs where Rust is installed"
    command -v python3 >/dev/null || die "python3 not found (it reads cargo's JSON messages)"
    command -v xz >/dev/null || die "xz not found (it packs the bundle)"
    local shared=${OPREG_SHARED_DIR:-../shared}
    [ -d "$shared/graphs" ] || die "no shared graphs at $shared/graphs (set OPREG_SHARED_DIR)"
    local stage=target/gpu-verify
    rm -rf "$stage" "$carried"
    mkdir -p "$stage/tests" "$stage/shared/graphs" "$carried" || die "cannot create $stage or $carried"
    local list _kind name path
    list=$(mktemp) || die "mktemp"
    # shellcheck disable=SC2064
    trap "rm -f '$list'" EXIT

    echo "== kernels-cuda tests (release, features cuda)"
    cargo test --release -p kernels-cuda --features cuda --no-run --message-format=json-render-diagnostics |
        executables >"$list" || die "building kernels-cuda's tests failed"
    while read -r _kind name path; do
        install_stripped "$path" "$stage/tests/kernels-cuda-$name"
    done <"$list"

    echo "== opreg-tests gpu_graphs (release)"
    cargo test --release -p opreg-tests --test gpu_graphs --no-run --message-format=json-render-diagnostics |
        executables >"$list" || die "building the gpu_graphs test failed"
    while read -r _kind name path; do
        if [ "$name" = gpu_graphs ]; then
            install_stripped "$path" "$stage/tests/opreg-tests-gpu_graphs"
        fi
    done <"$list"
    [ -x "$stage/tests/opreg-tests-gpu_graphs" ] || die "the gpu_graphs test binary was not produced"

    echo "== zero-out gpu test (release, features cuda)"
    cargo test --release -p zero-out --features cuda,kernels-cuda/cuda --test gpu --no-run --message-format=json-render-diagnostics |
        executables >"$list" || die "building the example's gpu test failed"
    while read -r _kind name path; do
        if [ "$name" = gpu ]; then
            install_stripped "$path" "$stage/tests/zero-out-gpu"
        fi
    done <"$list"
    [ -x "$stage/tests/zero-out-gpu" ] || die "the example's gpu test binary was not produced"

    echo "== kernels-cuda bench gpu"
    cargo bench --no-run -p kernels-cuda --features cuda --bench gpu --message-format=json-render-diagnostics |
        executables >"$list" || die "building the gpu bench failed"
    while read -r _kind name path; do
        if [ "$name" = gpu ]; then
            install_stripped "$path" "$stage/bench-gpu"
        fi
    done <"$list"
    [ -x "$stage/bench-gpu" ] || die "the gpu bench binary was not produced"

    echo "== opreg CLI (release)"
    cargo build --release -p opreg-cli --bin opreg --message-format=json-render-diagnostics |
        executables >"$list" || die "building opreg failed"
    while read -r _kind name path; do
        if [ "$name" = opreg ]; then
            install_stripped "$path" "$stage/opreg"
        fi
    done <"$list"
    [ -x "$stage/opreg" ] || die "the opreg binary was not produced"

    echo "== shared graphs"
    local g
    for g in "$shared"/graphs/*/; do
        if [ ! -f "$g/graph.pb" ] || [ ! -f "$g/io.json" ]; then
            continue
        fi
        mkdir -p "$stage/shared/graphs/$(basename "$g")"
        cp "$g/graph.pb" "$g/io.json" "$stage/shared/graphs/$(basename "$g")/" || die "copying $g"
    done

    echo "== shared models"
    local m
    for m in mobilenet_v2 unet_small transformer_encoder; do
        [ -f "$shared/models/$m/graph.pb" ] || die "no shared model at $shared/models/$m"
        mkdir -p "$stage/shared/models/$m"
        cp "$shared/models/$m/graph.pb" "$shared/models/$m/io.json" "$stage/shared/models/$m/" ||
            die "copying model $m"
    done

    echo "== packing $bundle"
    ls -la "$stage" "$stage/tests"
    tar -cf - -C "$stage" . | xz -9e -T2 >"$bundle" || die "packing $bundle failed"
    local size
    size=$(du -sb "$carried" | cut -f1)
    echo "== $carried: $size bytes ($(du -sb "$stage" | cut -f1) unpacked)"
    [ "$size" -lt "$limit_bytes" ] ||
        die "$carried is $size bytes, over the 64 MiB a device run can carry"
    echo "built. On the GPU machine: run with carry [\"$carried\"] and the command: scripts/gpu-verify.sh run"
}

# Unpacks the bundle into folder $1.
unpack() {
    if command -v xz >/dev/null; then
        tar -xJf "$bundle" -C "$1"
    else
        python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' "$bundle" "$1"
    fi
}

run() {
    [ -f "$bundle" ] ||
        die "$bundle is missing: run 'scripts/gpu-verify.sh build' first and carry $carried"
    local bin
    bin=$(mktemp -d) || die "mktemp"
    # shellcheck disable=SC2064
    trap "rm -rf '$bin'" EXIT
    unpack "$bin" || die "unpacking $bundle failed"
    if [ ! -x "$bin/opreg" ] || [ ! -d "$bin/tests" ]; then
        die "$bundle is incomplete"
    fi
    local out=${OUT:-}
    if [ -z "$out" ]; then
        out=$(mktemp -d) || die "mktemp"
    fi
    mkdir -p "$out" || die "cannot create $out"
    local tests_log="$out/tests.log" opreg_log="$out/opreg.log" bench_log="$out/bench.log"
    local summary="$out/summary.txt"
    : >"$tests_log"
    : >"$opreg_log"
    : >"$bench_log"
    : >"$summary"
    local status=0
    note() { echo "$*" | tee -a "$summary"; }
    fail() {
        note "FAIL: $*"
        status=1
    }

    # CUDA's libraries from the pip wheels python3 has (NVRTC, cuBLAS, cuDNN):
    # every nvidia/*/lib folder on python3's sys.path (site-packages,
    # dist-packages, the user site), e.g. nvidia/cu13/lib and nvidia/cudnn/lib.
    local libs="" site=""
    if command -v python3 >/dev/null; then
        libs=$(python3 -c '
import glob, os, sys
found = []
for entry in sys.path:
    for d in sorted(glob.glob(os.path.join(entry or ".", "nvidia", "*", "lib"))):
        d = os.path.realpath(d)
        if os.path.isdir(d) and d not in found:
            found.append(d)
print(":".join(found))
' 2>/dev/null)
        site=$(python3 -c 'import sys; print(" ".join(p for p in sys.path if p.endswith("-packages")))' 2>/dev/null)
    fi
    libs=${libs#:}
    if [ -n "$libs" ]; then
        export LD_LIBRARY_PATH="$libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    else
        note "warning: no nvidia/*/lib folder under python3's site-packages (${site:-python3 not found})"
    fi
    export OPREG_SHARED_DIR="$bin/shared"
    export OPREG_REQUIRE_NVRTC=1
    note "LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}"
    note "OPREG_SHARED_DIR=$OPREG_SHARED_DIR"

    echo "== nvidia-smi"
    if ! command -v nvidia-smi >/dev/null; then
        note "no GPU: nvidia-smi not found (no NVIDIA driver on this machine)"
        if [ "${GPU_VERIFY_FORCE:-0}" != 1 ]; then
            note "logs: $out"
            exit 2
        fi
        status=1
    elif ! nvidia-smi 2>&1 | tee -a "$summary"; then
        note "no GPU: nvidia-smi failed"
        if [ "${GPU_VERIFY_FORCE:-0}" != 1 ]; then
            note "logs: $out"
            exit 2
        fi
        status=1
    fi

    echo "== tests"
    local t name rc result section
    for t in "$bin"/tests/*; do
        [ -x "$t" ] || continue
        name=$(basename "$t")
        echo "===== $name" >>"$tests_log"
        # Tests share the one device, in parallel as in any process;
        # GPU_VERIFY_TEST_THREADS=1 runs them one at a time (unmixed logs).
        timeout "$test_timeout" "$t" --include-ignored --nocapture ${GPU_VERIFY_TEST_THREADS:+--test-threads="$GPU_VERIFY_TEST_THREADS"} \
            >>"$tests_log" 2>&1
        rc=$?
        section=$(sed -n "/^===== $name\$/,\$p" "$tests_log")
        result=$(grep '^test result:' <<<"$section" | tail -1)
        if [ $rc -eq 124 ]; then
            fail "$name: timed out after ${test_timeout}s"
        elif [ $rc -ne 0 ]; then
            fail "$name: exit status $rc (${result:-no test result line})"
        elif grep -q 'skipped:' <<<"$section"; then
            fail "$name: a test was skipped: $(grep -m1 'skipped:' <<<"$section")"
        else
            note "ok: $name: $result"
        fi
        # Failed tests, and gpu_graphs' per-graph placement lines.
        grep -E '^test .* FAILED$|nodes on GPU|: on CPU:' <<<"$section" >>"$summary"
    done

    echo "== opreg run --device gpu"
    local g
    for g in "$bin"/shared/graphs/*/; do
        name=$(basename "$g")
        echo "===== $name" >>"$opreg_log"
        if timeout "$opreg_timeout" "$bin/opreg" run "$g/graph.pb" --feeds "$g/io.json" --device gpu >>"$opreg_log" 2>&1; then
            note "ok: opreg run --device gpu $name"
        else
            fail "opreg run --device gpu $name: $(sed -n "/^===== $name\$/,\$p" "$opreg_log" | grep -m1 -i 'error')"
        fi
    done

    echo "== opreg bench --device gpu (models)"
    local timing
    for g in "$bin"/shared/models/*/; do
        [ -f "$g/graph.pb" ] || continue
        name=$(basename "$g")
        echo "===== bench $name" >>"$opreg_log"
        if timeout "$opreg_timeout" "$bin/opreg" bench "$g/graph.pb" --feeds "$g/io.json" --device gpu --runs 50 --top 5 >>"$opreg_log" 2>&1; then
            timing=$(sed -n "/^===== bench $name\$/,\$p" "$opreg_log" | grep -m1 'runs:')
            note "ok: opreg bench --device gpu $name: $timing"
        else
            fail "opreg bench --device gpu $name: $(sed -n "/^===== bench $name\$/,\$p" "$opreg_log" | grep -m1 -i 'error')"
        fi
    done

    echo "== bench (criterion)"
    if [ ! -x "$bin/bench-gpu" ]; then
        fail "the bundle has no bench-gpu"
    else
        timeout "$bench_timeout" "$bin/bench-gpu" --bench >"$bench_log" 2>&1
        rc=$?
        if [ $rc -eq 124 ]; then
            fail "bench-gpu: timed out after ${bench_timeout}s"
        elif [ $rc -ne 0 ]; then
            fail "bench-gpu: exit status $rc"
        elif grep -q 'skipped:' "$bench_log"; then
            fail "bench-gpu: $(grep -m1 'skipped:' "$bench_log")"
        else
            note "ok: bench-gpu"
        fi
        # The summary table and any part that failed.
        sed -n '/^## GPU summary/,$p' "$bench_log" >>"$summary"
        grep -E '^(FAILED|skipped):' "$bench_log" >>"$summary"
    fi

    echo
    echo "== summary (logs in $out)"
    grep -E '^(ok|FAIL|no GPU|warning|FAILED|skipped)|^test .* FAILED$|nodes on GPU|: on CPU:|^\|' "$summary"
    if [ $status -eq 0 ]; then
        echo "gpu-verify: all passed"
    else
        echo "gpu-verify: FAILED (see $out)"
    fi
    exit $status
}

case "${1:-}" in
build) build ;;
run) run ;;
*)
    echo "usage: $0 build|run" >&2
    exit 64
    ;;
esac

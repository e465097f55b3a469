#!/usr/bin/env bash
# Runs opreg's fuzz targets with cargo-fuzz (libFuzzer, AddressSanitizer)
# and reports executions and findings per target.
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]
#
# SECONDS per target (default 600); TARGETs default to all of them:
# spec_parser decode_binary decode_text graph_validation executor.
# Needs nightly and cargo-fuzz: `cargo install cargo-fuzz`.
# Seeds come from ../shared (written to fuzz/corpus/<target>/ first); a
# crash stops its target and is left in fuzz/artifacts/<target>/: copy it
# to fuzz/regressions/<target>/ once fixed, so the stable smoke test
# (tests/tests/fuzz_smoke.rs, run by CI) replays it forever.
set -uo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-600}
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(spec_parser decode_binary decode_text graph_validation executor)
fi

OPREG_FUZZ_CORPUS="$PWD/fuzz/corpus" cargo test -q -p opreg-tests --test integration \
  -- --ignored fuzz_smoke::write_seed_corpora >/dev/null || { echo "writing seed corpora failed"; exit 1; }
(cd fuzz && cargo +nightly fuzz build) || { echo "cargo fuzz build failed"; exit 1; }

mkdir -p fuzz/logs
status=0
printf '%-18s %8s %14s %10s %8s %s\n' target seconds executions exec/s corpus findings
for target in "${targets[@]}"; do
  mkdir -p "fuzz/artifacts/$target" "fuzz/corpus/$target"
  log="fuzz/logs/$target.log"
  (cd fuzz && cargo +nightly fuzz run "$target" "corpus/$target" -- \
    -max_total_time="$seconds" -timeout=30 -rss_limit_mb=4096 -max_len=65536 \
    -print_final_stats=1) >"$log" 2>&1
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
  rate=$(grep -o 'exec/s: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
  corpus=$(find "fuzz/corpus/$target" -type f | wc -l)
  findings=$(find "fuzz/artifacts/$target" -type f | wc -l)
  [ "$findings" -gt 0 ] && status=1
  printf '%-18s %8s %14s %10s %8s %s\n' "$target" "$seconds" "${execs:-?}" "${rate:-?}" "$corpus" "$findings"
done
exit $status

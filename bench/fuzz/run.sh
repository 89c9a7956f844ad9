#!/usr/bin/env bash
# The fuzz targets' longer run: the bounded stable harness of CI
# (crates/devassert-fuzzing/tests/bounded.rs), with minutes per parser family
# instead of CI's 60 s for all, going on after a failure. Prints each
# family's executions and failures; every failing input is saved under
# target/tmp/fuzz-failures/ (add the real ones to fuzz/regressions/).
# usage: bench/fuzz/run.sh [SECONDS_PER_FAMILY] [FAMILY…]   (default 180, every family)
#   DEVASSERT_FUZZ_SEED=N  other mutations (default 1)
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds="${1:-180}"
shift || true
out=bench/out
mkdir -p "$out"
# The test profile, as CI: overflow checks on (they found the saturating counts).
cargo test -q -p devassert-fuzzing --test bounded --no-run
DEVASSERT_FUZZ_FAMILY_SECONDS="$seconds" DEVASSERT_FUZZ_KEEP_GOING=1 \
    cargo test -q -p devassert-fuzzing --test bounded -- --test-threads=1 --nocapture "$@" \
    2>&1 | tee "$out/fuzz.txt" | sed -E 's/^test [a-z_]+ \.\.\. //' \
    | grep -E '^[a-z_]+: ([0-9]+ executions|a panic|no answer|the worker|peak memory)' || true
echo "full output: $out/fuzz.txt"

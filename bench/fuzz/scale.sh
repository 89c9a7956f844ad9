#!/usr/bin/env bash
# The size-scaling test at full size: every format family grown to several
# hundred MB (crates/devassert-fuzzing/tests/scaling.rs; CI runs it at 24 MB
# in `make test`), asserting the 256 MiB heap budget and linear time, in the
# release profile so that the times are the user's.
# usage: bench/fuzz/scale.sh [MB]   (default 400; needs ~3x MB free on TMPDIR)
set -euo pipefail
cd "$(dirname "$0")/../.."
mb="${1:-400}"
out=bench/out
mkdir -p "$out"
DEVASSERT_SCALE_MB="$mb" cargo test -q --release -p devassert-fuzzing --test scaling -- --nocapture \
    2>&1 | tee "$out/scale.txt" | grep -E '^[a-z_]+: [0-9]+ MiB in|panicked|failures' || true
echo "full output: $out/scale.txt"

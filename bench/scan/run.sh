#!/usr/bin/env bash
# devassert scan vs numpy (1 GiB u16 token file in page cache) and vs
# pyarrow.compute.min_max (a Parquet column), in the same run.
# Usage: bench/scan/run.sh [--runs N] [--gib G]   (needs the test venv: scripts/venv)
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo build --release -p devassert --locked
PY="${DEVASSERT_TEST_PYTHON:-$(scripts/venv)}"
exec "$PY" bench/scan/bench.py --devassert target/release/devassert "$@"

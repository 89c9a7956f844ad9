#!/usr/bin/env bash
# devassert.preflight of a 1M-row tokenized datasets.Dataset (about 0.5 GB of
# ids) beside numpy's max() over the same column, in the same process.
# Usage: bench/preflight/run.sh [--runs N] [--rows N]   (needs the test venv: scripts/venv)
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo build --release -p devassert --locked
TARGET="${CARGO_TARGET_DIR:-target}"
PY="${DEVASSERT_TEST_PYTHON:-$(scripts/venv)}"
# preflight finds the binary as `python -m devassert` does: on PATH here.
PATH="$PWD/$TARGET/release:$TARGET/release:$PATH" PYTHONPATH="$PWD/python" exec "$PY" bench/preflight/bench.py "$@"

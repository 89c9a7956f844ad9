#!/usr/bin/env bash
# CPU overhead of the guard on a small transformer training step.
set -euo pipefail
cd "$(dirname "$0")/../.."
PY="${DEVASSERT_TEST_PYTHON:-$(scripts/venv)}"
exec "$PY" bench/guard/bench.py "$@"

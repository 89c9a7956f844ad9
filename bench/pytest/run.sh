#!/usr/bin/env bash
# What the pytest plugin costs: off (loaded, option not given) and on
# (`--devassert`), each beside pytest without the plugin in the same run.
set -euo pipefail
cd "$(dirname "$0")/../.."
PY="${DEVASSERT_TEST_PYTHON:-$(scripts/venv)}"
exec "$PY" bench/pytest/bench.py "$@"

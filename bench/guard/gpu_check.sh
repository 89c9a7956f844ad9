#!/usr/bin/env bash
# The guard on a GPU, one table in about 4 minutes:  bash bench/guard/gpu_check.sh
# Without CUDA (or with --cpu-smoke) it runs the CPU-able parts at tiny sizes.
# PYTHON picks the interpreter (default python3; it needs torch).
set -euo pipefail
cd "$(dirname "$0")/../.."
export PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}"
exec "${PYTHON:-python3}" bench/guard/gpu_check.py "$@"

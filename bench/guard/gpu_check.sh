#!/usr/bin/env bash
# One-line runner for the CUDA check: python bench/guard/gpu_check.py
cd "$(dirname "$0")/../.." && exec "${PYTHON:-python3}" bench/guard/gpu_check.py "$@"

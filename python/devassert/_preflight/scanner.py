"""Runs `devassert scan --format json`, the bundled binary, on data files:
preflight reads ids with the same Rust reader as the command line, never
with a Python loop over rows. Several scans run at once (one process per
column, each with its own bounds), so their start-up costs overlap."""

import json
import subprocess

from .._binary import _binary, _how_to_get_binary


class ScanError(RuntimeError):
    """The scanner could not be run, or could not read a file (exit 2)."""


def binary():
    path = _binary()
    if path is None:
        raise ScanError("devassert.preflight: the devassert binary is not installed next to this package or on PATH (it reads the data);\n" + _how_to_get_binary())
    return path


def scan_all(jobs):
    """Run each job (paths, flags) as `devassert scan PATHS FLAGS --format json`
    and return their reports in order."""
    exe = binary()
    procs = []
    for paths, flags in jobs:
        cmd = [exe, "scan", *paths, *flags, "--format", "json", "--color", "never"]
        procs.append((cmd, subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)))
    reports = []
    for cmd, p in procs:
        stdout, stderr = p.communicate()
        if p.returncode not in (0, 1):
            detail = stderr.decode("utf-8", "replace").strip()
            try:
                errors = json.loads(stdout).get("errors") or []
                detail = "; ".join(f"{e.get('file')}: {e.get('error') or e.get('message') or e}" for e in errors) or detail
            except ValueError:
                pass
            raise ScanError(f"devassert.preflight: `devassert scan` could not read the data (exit {p.returncode}): {detail}")
        try:
            reports.append(json.loads(stdout))
        except ValueError as e:
            raise ScanError(f"devassert.preflight: `devassert scan` gave no JSON report: {e}") from None
    return reports

"""What the pytest plugin costs, beside pytest without it, in the same run.

1. Off: the plugin loaded (as the wheel's `pytest11` entry point loads it in
   every pytest run of the environment) with `--devassert` not given, on a
   suite of trivial tests that never import torch; the peer is the same
   pytest with the plugin not loaded. Measured as the import time of the
   plugin module (`python -X importtime`, and whether torch got imported),
   then as whole runs of `pytest.main` alternating in one process (no
   process start-up in the figure, the module already imported: what the
   plugin's hooks cost a run), then as whole `python -m pytest` processes
   (noisier: process start-up and imports are in them).
2. On: `--devassert` on a suite of small torch tests (an embedding lookup and
   a cross-entropy each), beside the same suite with the plugin not loaded,
   in one process and as whole processes.

Figures are medians of wall times; the variants alternate run by run so that
load on a shared machine hits them alike.

    python bench/pytest/bench.py [--reps 7] [--tests 500]
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
PLUGIN = ["-p", "devassert.pytest_plugin"]

PLAIN_TEST = "def test_{i}():\n    assert sum(range({i} % 7 + 3)) >= 3\n\n\n"
TORCH_HEAD = "import torch\nimport torch.nn.functional as F\n\nEMB = torch.nn.Embedding(100, 16)\n\n\n"
TORCH_TEST = (
    "def test_{i}():\n"
    "    ids = torch.randint(0, 100, (4, 8))\n"
    "    logits = EMB(ids).sum(-1)\n"
    "    assert F.cross_entropy(logits, torch.randint(0, 8, (4,))).isfinite()\n\n\n"
)


def write_suite(folder, head, test, n):
    os.makedirs(folder)
    for f in range(0, n, 50):
        with open(os.path.join(folder, f"test_{f:05d}.py"), "w") as fh:
            fh.write(head + "".join(test.format(i=i) for i in range(f, min(f + 50, n))))


def pytest(folder, extra):
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"), PYTHONDONTWRITEBYTECODE="1")
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *extra, folder]
    t = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, env=env)
    elapsed = time.perf_counter() - t
    if done.returncode != 0:
        raise SystemExit(f"pytest failed:\n{done.stdout}{done.stderr}")
    return elapsed


def compare(title, folder, variants, reps):
    times = {name: [] for name, _ in variants}
    for _ in range(reps):
        for name, extra in variants:
            times[name].append(pytest(folder, extra))
    base = statistics.median(times[variants[0][0]])
    print(title)
    for name, _ in variants:
        m = statistics.median(times[name])
        print(f"  {name:<44} {m:7.3f} s  ({m / base:.3f}x, {1000 * (m - base):+.0f} ms)")


def in_process(folder, variants, reps):
    """Medians of `pytest.main` runs of `folder` alternating the `variants`
    (lists of extra arguments) in one process."""
    code = (
        "import contextlib, io, statistics, sys, time, pytest\n"
        f"folder, reps, variants = {folder!r}, {reps}, {variants!r}\n"
        "times = [[] for _ in variants]\n"
        "for _ in range(reps):\n"
        "    for i, extra in enumerate(variants):\n"
        "        t = time.perf_counter()\n"
        "        with contextlib.redirect_stdout(io.StringIO()):\n"
        "            rc = pytest.main(['-q', '-p', 'no:cacheprovider', *extra, folder])\n"
        "        times[i].append(time.perf_counter() - t)\n"
        "        assert rc == 0, rc\n"
        "print(*(statistics.median(t) for t in times))\n"
    )
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"), PYTHONDONTWRITEBYTECODE="1")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    if out.returncode != 0:
        raise SystemExit(out.stdout + out.stderr)
    return [float(x) for x in out.stdout.split()]


def show(title, names, medians):
    print(title)
    for name, m in zip(names, medians):
        print(f"  {name:<44} {m:7.3f} s  ({m / medians[0]:.3f}x, {1000 * (m - medians[0]):+.1f} ms)")


def import_cost(reps):
    """(median microseconds to import devassert.pytest_plugin with pytest
    already imported, whether torch was imported)."""
    runs = [_import_once() for _ in range(reps)]
    return statistics.median(us for us, _ in runs), runs[0][1]


def _import_once():
    code = "import pytest, sys; import devassert.pytest_plugin; print('torch' in sys.modules)"
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    out = subprocess.run([sys.executable, "-X", "importtime", "-c", code], capture_output=True, text=True, env=env)
    us = 0
    for line in out.stderr.splitlines():
        m = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|\s+(\S.*)$", line)
        if m and m.group(3).strip().startswith("devassert"):
            us += int(m.group(1))  # self times of every devassert module it imported
    return us, out.stdout.strip()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--tests", type=int, default=500)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        plain = os.path.join(tmp, "plain")
        torchy = os.path.join(tmp, "torch")
        write_suite(plain, "", PLAIN_TEST, args.tests)
        write_suite(torchy, TORCH_HEAD, TORCH_TEST, args.tests)
        us, torch_imported = import_cost(args.reps)
        print(f"import devassert.pytest_plugin: {us / 1000:.2f} ms (median; the devassert modules' own time), torch imported: {torch_imported}")
        names = ["pytest without the plugin", "plugin loaded, --devassert not given", "--devassert"]
        variants = [[], PLUGIN, PLUGIN + ["--devassert"]]
        show(f"off: {args.tests} tests without torch, median of {3 * args.reps} pytest.main runs in one process", names[:2], in_process(plain, variants[:2], 3 * args.reps))
        show(f"on: {args.tests} small torch tests, median of {3 * args.reps} pytest.main runs in one process (torch imported once)", names, in_process(torchy, variants, 3 * args.reps))
        compare(
            f"off: {args.tests} tests without torch, median of {args.reps} whole pytest processes",
            plain,
            [("pytest without the plugin", []), ("plugin loaded, --devassert not given", PLUGIN)],
            args.reps,
        )
        compare(
            f"on: {args.tests} small torch tests, median of {args.reps} whole pytest processes",
            torchy,
            [("pytest without the plugin", []), ("plugin loaded, --devassert not given", PLUGIN), ("--devassert", PLUGIN + ["--devassert"])],
            args.reps,
        )


if __name__ == "__main__":
    main()

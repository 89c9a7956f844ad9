"""Another project's pytest file run twice, plain and under the plugin
(`-p devassert.pytest_plugin --devassert`), and the outcomes compared test by
test: the plugin must change none. Meant for PyTorch's own
`test/test_overrides.py` of the installed torch's version, which is not kept
in this repository: pass its path.

    bench/pytest/foreign.py PATH/test_overrides.py [-k EXPR] [--cpu-stream]

The file is copied to a temporary folder and run there (outside this
checkout, so no conftest of ours applies). `--cpu-stream`: on a machine
without a GPU, a CUDA build of torch cannot make `torch.Stream()` (it asks
the driver); test_overrides.py makes one at import as a dummy argument, so
both runs get a conftest in which an argument-less `torch.Stream()` is a CPU
stream. Prints the counts of each run and every test whose outcome differs;
exits 1 when one does.
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

CPU_STREAM = '''
import torch

_Stream = torch.Stream


class _CpuDefault(_Stream):
    """torch.Stream() with no device: a CPU stream where no accelerator is."""

    def __new__(cls, *args, **kwargs):
        if not args and not kwargs:
            return _Stream("cpu")
        return _Stream(*args, **kwargs)


if not torch.accelerator.is_available():
    torch.Stream = _CpuDefault
'''


def outcomes(xml_path):
    """{test id: passed | failed | error | skipped} from a junit XML file."""
    out = {}
    for case in ET.parse(xml_path).getroot().iter("testcase"):
        name = f"{case.get('classname')}::{case.get('name')}"
        kinds = [child.tag for child in case]
        if "failure" in kinds:
            out[name] = "failed"
        elif "error" in kinds:
            out[name] = "error"
        elif "skipped" in kinds:
            out[name] = "skipped"
        else:
            out[name] = "passed"
    return out


def run(py, folder, name, extra, plugin):
    xml = os.path.join(folder, f"{'plugin' if plugin else 'plain'}.xml")
    cmd = [py, "-m", "pytest", name, "-q", "-p", "no:cacheprovider", f"--junitxml={xml}", *extra]
    if plugin:
        cmd[3:3] = ["-p", "devassert.pytest_plugin", "--devassert"]
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    started = time.perf_counter()
    done = subprocess.run(cmd, cwd=folder, env=env, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - started
    if not os.path.exists(xml):
        sys.exit(f"{' '.join(cmd)} wrote no report (exit {done.returncode}):\n{done.stdout[-3000:]}{done.stderr[-3000:]}")
    return outcomes(xml), seconds, done.stdout.strip().splitlines()[-1:] or [""]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("path", help="the test file (e.g. PyTorch's test/test_overrides.py)")
    ap.add_argument("-k", dest="keyword", help="pytest -k expression, the same for both runs")
    ap.add_argument("--cpu-stream", action="store_true", help="torch.Stream() with no arguments is a CPU stream (no GPU here)")
    args = ap.parse_args()
    py = os.environ.get("DEVASSERT_TEST_PYTHON") or sys.executable
    extra = ["-k", args.keyword] if args.keyword else []
    with tempfile.TemporaryDirectory(prefix="devassert-foreign-") as folder:
        name = os.path.basename(args.path)
        shutil.copy(args.path, os.path.join(folder, name))
        if args.cpu_stream:
            with open(os.path.join(folder, "conftest.py"), "w", encoding="utf-8") as fh:
                fh.write(CPU_STREAM)
        plain, t_plain, line_plain = run(py, folder, name, extra, plugin=False)
        guarded, t_plugin, line_plugin = run(py, folder, name, extra, plugin=True)
    for label, got, seconds, line in (("plain", plain, t_plain, line_plain), ("plugin", guarded, t_plugin, line_plugin)):
        counts = {}
        for v in got.values():
            counts[v] = counts.get(v, 0) + 1
        print(f"{label:7s} {len(got)} tests: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) + f"  ({seconds:.0f} s; pytest: {line[0]})")
    changed = sorted(t for t in set(plain) | set(guarded) if plain.get(t) != guarded.get(t))
    print(f"changed by the plugin: {len(changed)}")
    for t in changed:
        print(f"  {t}: plain {plain.get(t, 'absent')}, plugin {guarded.get(t, 'absent')}")
    return 1 if changed else 0


if __name__ == "__main__":
    sys.exit(main())

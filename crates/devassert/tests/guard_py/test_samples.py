"""What the guard says about a bad value: found in bounded memory and time
(a huge view costs what its storage costs), and mapped to the right dataset
samples, or honestly to none, with loaders that prefetch.

Run: python -m unittest test_samples (PYTHONPATH must hold python/).
"""

import json
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

import torch

from devassert import _intercept, _violation

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHONPATH = os.path.abspath(os.path.join(HERE, "..", "..", "..", "..", "python"))


def run_file(code, env=None, timeout=300):
    """Run `code` as a script file (DataLoader workers re-import __main__)."""
    with tempfile.TemporaryDirectory() as tmp:
        script = os.path.join(tmp, "train.py")
        with open(script, "w") as fh:
            fh.write(textwrap.dedent(code))
        full = dict(os.environ, PYTHONPATH=PYTHONPATH, **(env or {}))
        return subprocess.run([sys.executable, script], capture_output=True, text=True, env=full, cwd=tmp, timeout=timeout)


class BoundedDiagnostics(unittest.TestCase):
    def test_a_2_31_element_expanded_index_raises_like_torch_in_small_memory(self):
        # Materialising the view (rows, positions, copies for the repeat) would
        # take 16 GiB: a MemoryError, not the IndexError torch raises.
        code = """
            import json, sys, time, torch
            from devassert import _intercept, _violation
            mode = sys.argv[1] if len(sys.argv) > 1 else MODE
            x = torch.arange(5.0)
            idx = torch.tensor([7]).expand(2**31)
            if mode != "plain":
                _violation.PRECHECK_CPU = mode == "precheck"
                _intercept.set_level("on")

            def peak_mib():
                with open("/proc/self/status") as fh:
                    return next(int(line.split()[1]) for line in fh if line.startswith("VmHWM")) // 1024

            before, start = peak_mib(), time.perf_counter()
            try:
                x[idx]
                kind = None
            except Exception as e:
                kind = [c.__name__ for c in type(e).__mro__]
                finding = getattr(e, "finding", None)
            took = time.perf_counter() - start
            print(json.dumps({"kind": kind, "s": took, "mib": peak_mib() - before, "finding": finding}))
        """
        got = {}
        for mode in ("plain", "cpu", "precheck"):
            r = run_file(code.replace("MODE", repr(mode)))
            self.assertEqual(r.returncode, 0, r.stderr)
            got[mode] = json.loads(r.stdout)
        self.assertEqual(got["plain"]["kind"][0], "IndexError", got["plain"])
        for mode in ("cpu", "precheck"):
            g = got[mode]
            self.assertIn("IndexError", g["kind"], (mode, g))
            self.assertTrue(g["kind"][0].startswith("DeviceAssertPrevented"), (mode, g))
            # torch itself: ~10 ms, ~25 MiB; the guard adds one import of
            # torch's meta registrations (~0.4 s) and small tensors.
            self.assertLess(g["mib"], got["plain"]["mib"] + 128, got)
            self.assertLess(g["s"], got["plain"]["s"] + 3.0, got)
            f = g["finding"]
            self.assertEqual(f["count"], 2**31)
            self.assertEqual(f["values"], [7])
            self.assertEqual([p["position"] for p in f["locations"]], [[i] for i in range(_violation.MAX_POSITIONS)])
        print("\n2^31 expanded index:", {m: (round(g["s"], 3), g["mib"]) for m, g in got.items()}, file=sys.stderr)


class FirstPlaces(unittest.TestCase):
    """The first places of bad values, unfolded from the collapsed mask, are
    exactly the first `nonzero` places of the materialised argument."""

    def check(self, idx, size):
        for precheck in (False, True):
            _violation.PRECHECK_CPU = precheck
            _intercept.set_level("on")
            try:
                torch.arange(float(size))[idx]
            except IndexError as e:
                got = [p["position"] for p in e.finding["locations"]]
                count = e.finding["count"]
            else:
                self.fail("no IndexError")
            finally:
                _violation.PRECHECK_CPU = False
                _intercept.set_level("off")
            dense = idx.contiguous()
            bad = (dense >= size) | (dense < -size)
            self.assertEqual(got, bad.nonzero()[: _violation.MAX_POSITIONS].tolist(), (idx.shape, idx.stride()))
            self.assertEqual(count, int(bad.sum()))

    def test_expanded_dims_anywhere(self):
        row = torch.tensor([1, 9, 2, 9, 0])
        self.check(row.expand(3, 5), 5)
        self.check(row.view(5, 1).expand(5, 4), 5)
        self.check(row.view(1, 5, 1).expand(2, 5, 3), 5)
        self.check(torch.tensor([[0, 1], [7, 2]]).view(2, 1, 2).expand(2, 6, 2), 5)
        self.check(torch.tensor(9).expand(2, 3), 5)

    def test_a_mostly_bad_index_larger_than_a_search_chunk(self):
        idx = torch.full((3, 1 << 19), 2)
        idx[2, 5:] = 11
        idx[1, -1] = -12
        self.check(idx, 5)


if __name__ == "__main__":
    unittest.main()

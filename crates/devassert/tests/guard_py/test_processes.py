"""The guard follows the process tree: children started by spawn and
forkserver (``torch.multiprocessing.spawn``, ``start_processes(...,
start_method=...)``) from a guarded parent run guarded at the parent's level
without ``devassert run``, and their findings say where the guard came from;
after ``unguard()`` they run plain.

Run: python -m unittest test_processes (PYTHONPATH must hold python/).
"""

import json
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHONPATH = os.path.abspath(os.path.join(HERE, "..", "..", "..", "..", "python"))

PARENT = r"""
import json, os, sys
import torch
import torch.multiprocessing as mp


def child(rank, out, tag):
    import sys
    level = None
    intercept = sys.modules.get("devassert._guard.intercept")
    try:
        torch.nn.Embedding(10, 2)(torch.tensor([3, 12]))
        got = None
    except Exception as e:
        got = {"type": type(e).__name__, "finding": getattr(e, "finding", None)}
    level = intercept.current_level() if intercept else "not installed"
    with open(os.path.join(out, f"{tag}.json"), "w") as f:
        json.dump({"level": level, "error": got}, f)


if __name__ == "__main__":
    out = sys.argv[1]
    import devassert

    devassert.guard("strict")
    mp.spawn(child, args=(out, "spawn"), nprocs=1)
    mp.start_processes(child, args=(out, "forkserver"), nprocs=1, start_method="forkserver")
    devassert.unguard()
    mp.spawn(child, args=(out, "after_unguard"), nprocs=1)
    with open(os.path.join(out, "parent.json"), "w") as f:
        json.dump({"pid": os.getpid()}, f)
"""


class SpawnedChildren(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        script = os.path.join(cls.tmp.name, "parent.py")
        with open(script, "w") as f:
            f.write(textwrap.dedent(PARENT))
        # The package is not installed: only the parent finds it (its own
        # sys.path), as with a checkout added at run time.
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "DEVASSERT_GUARD")}
        env["OMP_NUM_THREADS"] = "1"
        code = f"import sys; sys.path.insert(0, {PYTHONPATH!r}); sys.argv = [{script!r}, {cls.tmp.name!r}]; import runpy; runpy.run_path({script!r}, run_name='__main__')"
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=600, cwd=cls.tmp.name)
        assert done.returncode == 0, done.stdout + done.stderr
        cls.results = {}
        for tag in ("spawn", "forkserver", "after_unguard", "parent"):
            with open(os.path.join(cls.tmp.name, f"{tag}.json")) as f:
                cls.results[tag] = json.load(f)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_children_run_at_the_parents_level_and_say_so(self):
        for method in ("spawn", "forkserver"):
            got = self.results[method]
            self.assertEqual(got["level"], "strict", method)
            self.assertEqual(got["error"]["type"], "DeviceAssertPreventedIndexError", method)
            inherited = got["error"]["finding"]["evidence"]["guard_inherited"]
            self.assertEqual(inherited, {"pid": self.results["parent"]["pid"], "start_method": method, "level": "strict"})

    def test_after_unguard_children_run_plain(self):
        got = self.results["after_unguard"]
        self.assertEqual(got["level"], "not installed")
        self.assertEqual(got["error"], {"type": "IndexError", "finding": None})


if __name__ == "__main__":
    unittest.main()

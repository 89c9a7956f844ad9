"""The pytest plugin (`pytest --devassert`), run by real pytest in a subprocess
on test suites written to a temporary folder.

The package is on PYTHONPATH here (not installed), so the plugin is named
with `-p devassert.pytest_plugin`; scripts/test-wheel checks that the wheel's
`pytest11` entry point loads it without `-p`.
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
import unittest

VALID = '''
import torch
import torch.nn.functional as F


def test_embedding():
    emb = torch.nn.Embedding(10, 4)
    assert emb(torch.tensor([[0, 9], [3, 4]])).shape == (2, 2, 4)


def test_cross_entropy_with_ignore_index():
    loss = F.cross_entropy(torch.randn(3, 5), torch.tensor([0, 4, -100]))
    assert loss.isfinite()


def test_gather_and_indexing():
    x = torch.arange(12).reshape(3, 4)
    assert x.gather(1, torch.tensor([[3], [0], [1]])).flatten().tolist() == [3, 4, 9]
    assert x[torch.tensor([2, 0])].shape == (2, 4)


def test_pure_python():
    assert sorted([3, 1, 2]) == [1, 2, 3]
'''

BAD = '''
import pytest
import torch


def test_lookup():
    emb = torch.nn.Embedding(10, 4)
    ids = torch.tensor([[1, 12], [3, 4]])
    emb(ids)


def test_valid_after_a_failure():
    emb = torch.nn.Embedding(10, 4)
    assert emb(torch.tensor([9])).shape == (1, 4)


def test_caught():
    emb = torch.nn.Embedding(10, 4)
    with pytest.raises(IndexError):
        emb(torch.tensor([10]))


@pytest.mark.xfail(reason="known bad label")
def test_known_bad_label():
    torch.nn.functional.cross_entropy(torch.randn(2, 3), torch.tensor([0, 5]))


@pytest.mark.xfail(raises=IndexError, strict=True)
def test_xfail_raises_index_error():
    torch.nn.Embedding(10, 4)(torch.tensor([10]))


@pytest.mark.skip(reason="not yet")
def test_skipped():
    torch.nn.Embedding(10, 4)(torch.tensor([99]))
'''

LEVEL_PROBE = '''
import sys

import torch  # noqa: F401 - the guard installs once torch is imported


def test_level():
    intercept = sys.modules.get("devassert._guard.intercept")
    level = intercept.current_level() if intercept else "not installed"
    print("LEVEL=" + level)
'''

AFTER_SESSION = '''
import os
import sys

import torch

# Taken at import, before any test ran: the guard is already on.
AT_IMPORT = (torch.embedding, torch.Tensor.__getitem__, torch.gather)


def pytest_sessionfinish(session):
    intercept = sys.modules.get("devassert._guard.intercept")
    level = intercept.current_level() if intercept else "not installed"
    same = AT_IMPORT == (torch.embedding, torch.Tensor.__getitem__, torch.gather)
    guarded = all(hasattr(f, "__devassert_original__") for f in AT_IMPORT)
    with open(os.environ["AFTER_FILE"], "w") as fh:
        fh.write(f"{level} {same} {guarded}")
'''

# pytest run in this process: what the guard is once pytest.main returned.
IN_PROCESS = '''
import sys

import pytest

rc = pytest.main(sys.argv[1:])
import torch

intercept = sys.modules.get("devassert._guard.intercept")
level = intercept.current_level() if intercept else "not installed"
# The guard off puts every original object back.
restored = not any(hasattr(f, "__devassert_original__") for f in (torch.embedding, torch.Tensor.__getitem__, torch.gather))
print(f"AFTER-MAIN rc={int(rc)} level={level} restored={restored}")
'''

# Bound and tabulated at import, as PyTorch's test_overrides.py does: every
# guarded function that torch's testing overrides cover, called on a
# __torch_function__ type, must reach its override; `gather` bound by name
# must be checked.
BOUND_AT_IMPORT = '''
import pytest
import torch
from torch import gather
from torch.overrides import get_testing_overrides

HANDLED = {}
for func, override in get_testing_overrides().items():
    HANDLED[func] = override


class TensorLike:
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        if func not in HANDLED:
            return NotImplemented
        return ("handled", func.__name__)


GUARDED = [f for f in HANDLED if hasattr(f, "__devassert_original__")]


def test_some_functions_are_guarded_at_import():
    import sys

    print("GUARDED-AT-IMPORT", len(GUARDED))
    assert ("devassert._guard.intercept" in sys.modules) == bool(GUARDED)


T = TensorLike()
CALLS = {
    "gather": (torch.gather, (T, 0, T)),
    "embedding": (torch.embedding, (T, T)),
    "index_select": (torch.index_select, (T, 0, T)),
    "take": (torch.take, (T, T)),
    "bincount": (torch.bincount, (T,)),
    "multinomial": (torch.multinomial, (T, 1)),
    "one_hot": (torch.nn.functional.one_hot, (T,)),
}


@pytest.mark.parametrize("name", list(CALLS))
def test_a_table_built_at_import_matches(name):
    func, args = CALLS[name]
    assert func(*args) == ("handled", func.__name__)


def test_a_name_bound_at_import_is_checked():
    with pytest.raises(RuntimeError) as info:
        gather(torch.zeros(2, 3), 1, torch.tensor([[0], [5]]))
    print("BOUND-GATHER", type(info.value).__name__)
'''

# The shape of PyTorch's test_overrides.py (written here, not copied): every
# function of torch's testing overrides, called on a __torch_function__ type
# with a dispatch table built at import, must reach its override.
OVERRIDES_SUITE = '''
import inspect

import pytest
import torch
from torch.overrides import get_testing_overrides, is_tensor_method_or_property

# Built at import, as PyTorch's test_overrides.py builds its tables.
OVERRIDES = get_testing_overrides()
TRIGGERED = set()


def _handler(func):
    def impl(*args, **kwargs):
        TRIGGERED.add(func)
        return -1

    return impl


HANDLED = {func: _handler(func) for func in OVERRIDES}


class TensorLike:
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        if func not in HANDLED:
            return NotImplemented
        return HANDLED[func](*args, **(kwargs or {}))


class SubTensor(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        if func not in HANDLED:
            return NotImplemented
        return HANDLED[func](*args, **(kwargs or {}))


def _name(func):
    if func.__name__ == "__get__":
        owner = getattr(func.__self__, "__qualname__", None) or "Tensor." + func.__self__.fget.__name__
        return f"{owner}.__get__"
    module = "Tensor" if is_tensor_method_or_property(func) else func.__module__
    return f"{module}.{func.__name__}"


CASES = {}
for func, override in OVERRIDES.items():
    CASES.setdefault(_name(func), (func, override))


@pytest.mark.parametrize("name", sorted(CASES))
def test_override_is_reached(name):
    func, override = CASES[name]
    make = (lambda: SubTensor([5])) if is_tensor_method_or_property(func) else TensorLike
    spec = inspect.getfullargspec(override)
    n = len(spec.args) - len(spec.defaults or ())
    args = [make() for _ in range(n)] + ([make(), make()] if spec.varargs else [])
    ret = func(*args)
    assert func in TRIGGERED or ret == -1
'''

# A plugin that imports torch and binds a guarded op before pytest loads
# the conftest files (where the guard goes on).
EARLY_PLUGIN = '''
from torch import gather  # noqa: F401
'''


def run_pytest(files, *args, env=None):
    """(exit code, output) of `python -m pytest -p devassert.pytest_plugin ARGS`
    in a new folder holding `files` (name -> text)."""
    with tempfile.TemporaryDirectory() as root:
        for name, text in files.items():
            with open(os.path.join(root, name), "w") as fh:
                fh.write(textwrap.dedent(text))
        cmd = [sys.executable, "-m", "pytest", "-p", "devassert.pytest_plugin", "-p", "no:cacheprovider", "-rA", *args]
        done = subprocess.run(cmd, cwd=root, capture_output=True, text=True, env=dict(os.environ, **(env or {})), timeout=600)
        return done.returncode, done.stdout + done.stderr


def counts(output):
    """The final line's counts: {"passed": 4, ...}."""
    last = [line for line in output.splitlines() if " in " in line and ("passed" in line or "failed" in line)][-1]
    return {k: int(n) for n, k in re.findall(r"(\d+) (passed|failed|xfailed|skipped|xpassed|errors?)", last)}


class PassingSuite(unittest.TestCase):
    def test_stays_passing_with_the_same_counts(self):
        rc_plain, plain = run_pytest({"test_valid.py": VALID})
        rc, guarded = run_pytest({"test_valid.py": VALID}, "--devassert")
        self.assertEqual((rc_plain, rc), (0, 0), guarded)
        self.assertEqual(counts(plain), {"passed": 4})
        self.assertEqual(counts(guarded), {"passed": 4})
        self.assertIn("devassert: guard level 'on' around every test", guarded)
        self.assertIn("devassert: guard level 'on': no op stopped", guarded)
        self.assertNotIn("devassert:", plain)

    def test_the_guard_is_on_from_before_collection_and_off_after(self):
        with tempfile.TemporaryDirectory() as tmp:
            after = os.path.join(tmp, "after")
            files = {"test_probe.py": LEVEL_PROBE, "conftest.py": AFTER_SESSION}
            rc, out = run_pytest(files, "--devassert", "-s", env={"AFTER_FILE": after})
            self.assertEqual(rc, 0, out)
            self.assertIn("LEVEL=on", out)
            with open(after) as fh:
                # The conftest imported the guarded functions.
                self.assertEqual(fh.read(), "on True True")

    def test_after_the_session_every_original_is_back(self):
        with tempfile.TemporaryDirectory() as root:
            for name, text in {"test_probe.py": LEVEL_PROBE, "main.py": IN_PROCESS}.items():
                with open(os.path.join(root, name), "w") as fh:
                    fh.write(textwrap.dedent(text))
            cmd = [sys.executable, "main.py", "-p", "devassert.pytest_plugin", "-p", "no:cacheprovider", "--devassert", "-s", "test_probe.py"]
            done = subprocess.run(cmd, cwd=root, capture_output=True, text=True, timeout=600)
        out = done.stdout + done.stderr
        self.assertIn("LEVEL=on", out)
        self.assertIn("AFTER-MAIN rc=0 level=off restored=True", out)


class BoundAtImport(unittest.TestCase):
    """Names and __torch_function__ tables a test module binds at import."""

    def test_tables_match_and_bound_names_are_checked(self):
        rc_plain, plain = run_pytest({"test_bound.py": BOUND_AT_IMPORT}, "-s")
        rc, guarded = run_pytest({"test_bound.py": BOUND_AT_IMPORT}, "-s", "--devassert")
        self.assertEqual((rc_plain, rc), (0, 0), guarded)
        self.assertEqual(counts(plain), counts(guarded))
        self.assertEqual(counts(guarded), {"passed": 9})
        self.assertIn("GUARDED-AT-IMPORT 0", plain)
        self.assertRegex(guarded, r"GUARDED-AT-IMPORT [1-9]")
        self.assertIn("BOUND-GATHER RuntimeError", plain)
        self.assertIn("BOUND-GATHER DeviceAssertPreventedRuntimeError", guarded)

    def test_every_testing_override_is_reached_as_without_the_plugin(self):
        def outcomes(*args):
            rc, out = run_pytest({"test_overrides_like.py": OVERRIDES_SUITE}, "-q", "-W", "ignore", *args)
            found = re.findall(r"^(PASSED|FAILED) test_overrides_like.py::test_override_is_reached\[(.+?)\]", out, re.M)
            return {name: outcome for outcome, name in found}, out

        plain, out_plain = outcomes()
        guarded, out = outcomes("--devassert")
        self.assertGreater(len(plain), 1000, out_plain)
        self.assertEqual(sorted(plain), sorted(guarded), out)
        # Not one changed (torch.scatter with a __torch_function__ object as
        # `dim` included: torch's argument parser rejects it before dispatch).
        self.assertEqual(sorted(n for n in plain if plain[n] != guarded[n]), [], out)
        print(f"\ntesting overrides: {len(plain)} tests; plain {sum(v == 'PASSED' for v in plain.values())} passed; "
              f"under the plugin {sum(v == 'PASSED' for v in guarded.values())} passed", file=sys.stderr)

    def test_names_bound_before_the_guard_are_named_in_one_line(self):
        files = {"test_probe.py": LEVEL_PROBE, "early_plugin.py": EARLY_PLUGIN}
        rc, out = run_pytest(files, "-p", "early_plugin", "--devassert", "-s", env={"PYTHONPATH": os.pathsep.join(filter(None, [".", os.environ.get("PYTHONPATH")]))})
        self.assertEqual(rc, 0, out)
        lines = [line for line in out.splitlines() if "bound before the guard was installed" in line]
        self.assertEqual(len(lines), 1, out)
        self.assertIn("early_plugin.gather (torch.gather)", lines[0])

    def test_levels_from_the_command_line_and_the_ini_file(self):
        rc, out = run_pytest({"test_probe.py": LEVEL_PROBE}, "--devassert-level", "strict", "-s")
        self.assertEqual(rc, 0, out)
        self.assertIn("LEVEL=strict", out)
        ini = {"test_probe.py": LEVEL_PROBE, "pytest.ini": "[pytest]\ndevassert = async\n"}
        rc, out = run_pytest(ini, "-s")
        self.assertEqual(rc, 0, out)
        self.assertIn("LEVEL=async", out)
        rc, out = run_pytest(ini, "-s", "--devassert-level=off")
        self.assertEqual(rc, 0, out)
        self.assertNotIn("LEVEL=", out.replace("LEVEL=not installed", ""))
        self.assertNotIn("devassert:", out)
        rc, out = run_pytest({"test_probe.py": LEVEL_PROBE, "pytest.ini": "[pytest]\ndevassert = loud\n"})
        self.assertEqual(rc, 4, out)
        self.assertIn("devassert = 'loud': expected one of on, async, strict, off", out)


class FailingSuite(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.rc, cls.out = run_pytest({"test_bad.py": BAD}, "--devassert")
        cls.rc_plain, cls.plain = run_pytest({"test_bad.py": BAD})

    def test_outcomes_are_those_of_the_plain_run(self):
        self.assertEqual((self.rc, self.rc_plain), (1, 1), self.out)
        expected = {"failed": 1, "passed": 2, "xfailed": 2, "skipped": 1}
        self.assertEqual(counts(self.plain), expected, self.plain)
        self.assertEqual(counts(self.out), expected, self.out)

    def test_the_failure_holds_the_diagnosis(self):
        out = self.out
        self.assertIn("E       devassert.DeviceAssertPreventedIndexError: index out of range in self", out)
        section = out.split("- devassert: op stopped by the guard -")[1].split("=====")[0]
        for text in (
            "DA101 embedding-index-out-of-range",
            "op: embedding, argument `input` (shape [2, 2], torch.int64, cpu)",
            "bad values: 12 (1 value outside [0, 10))",
            "first at: [0, 1]",
            "line: test_bad.py:9 in test_lookup",
            "| emb(ids)",
            "likely causes, most likely first:\n    1. ",
            "next steps:\n    1. ",
            "more: devassert rule DA101",
        ):
            self.assertIn(text, section)
        # One section per printed report. pytest 8.0-8.1 also prints the
        # reports of xfailed tests under -rA (later versions only with
        # --xfail-tb): each holds its own section once, never the failure's.
        blocks = re.split(r"\n_{3,} (test_\w+) _{3,}\n", out)
        printed = dict(zip(blocks[1::2], blocks[2::2]))
        self.assertIn("test_lookup", printed, out)
        for name, block in printed.items():
            self.assertEqual(block.count("- devassert: op stopped by the guard -"), 1, (name, out))
        self.assertLessEqual(set(printed), {"test_lookup", "test_known_bad_label", "test_xfail_raises_index_error"}, out)

    def test_the_summary_lists_every_stopped_op_per_test(self):
        summary = self.out.split("devassert: 4 ops stopped by the guard in 4 tests")[1].split("short test summary")[0]
        lines = [line for line in summary.splitlines() if line.strip() and not line.strip().startswith("=")]
        self.assertEqual(
            [line.split(":")[0] for line in lines],
            [
                "FAILED test_bad.py",
                "CAUGHT test_bad.py",
                "XFAILED test_bad.py",
                "XFAILED test_bad.py",
            ],
            summary,
        )
        self.assertIn("FAILED test_bad.py::test_lookup: DA101 embedding-index-out-of-range: embedding `input` 12", summary)
        self.assertIn("CAUGHT test_bad.py::test_caught: DA101", summary)
        self.assertIn("(the test caught the exception)", summary)
        self.assertIn("XFAILED test_bad.py::test_known_bad_label: DA201", summary)
        self.assertNotIn("test_skipped", summary)
        self.assertNotIn("test_valid_after_a_failure", summary)

    def test_without_the_option_the_error_is_torchs_own(self):
        self.assertIn("E       IndexError: index out of range in self", self.plain)
        self.assertNotIn("devassert:", self.plain)
        self.assertNotIn("DeviceAssertPrevented", self.plain)


class Phases(unittest.TestCase):
    def test_a_fixture_and_a_lazy_torch_import_are_guarded(self):
        files = {
            "test_phases.py": '''
                import pytest


                @pytest.fixture
                def batch():
                    import torch

                    return torch.nn.functional.one_hot(torch.tensor([0, 7]), 3)


                def test_uses_the_fixture(batch):
                    pass


                def test_imports_torch_itself():
                    import torch

                    torch.zeros(4)[torch.tensor([4])]
            '''
        }
        # Each file on its own: torch is first imported inside the test.
        rc, out = run_pytest(files, "--devassert", "test_phases.py::test_imports_torch_itself")
        self.assertEqual(rc, 1, out)
        self.assertIn("DeviceAssertPrevented", out)
        self.assertIn("line: test_phases.py:19 in test_imports_torch_itself", out)
        rc, out = run_pytest(files, "--devassert", "test_phases.py::test_uses_the_fixture")
        self.assertEqual(rc, 1, out)
        self.assertIn("1 error", out)
        self.assertIn("- devassert: op stopped by the guard -", out)
        self.assertIn("ERROR test_phases.py::test_uses_the_fixture (setup): DA", out)


class UnderDevassertRun(unittest.TestCase):
    def test_the_plugins_level_inside_tests_and_the_runs_after(self):
        """`devassert run -- pytest --devassert-level strict`: run leaves the
        guard waiting for torch at its level; a test that imports torch gets
        the plugin's level, and the run's guard is back after it."""
        binary = shutil.which("devassert")
        self.assertIsNotNone(binary, "the test runner puts the built devassert on PATH")
        files = {
            "test_lazy.py": '''
                import sys


                def test_level():
                    import torch  # noqa: F401

                    print("LEVEL=" + sys.modules["devassert._guard.intercept"].current_level())
            ''',
            "conftest.py": '''
                import sys

                import pytest


                @pytest.hookimpl(trylast=True)
                def pytest_unconfigure(config):
                    print("AFTER=" + sys.modules["devassert._guard.intercept"].current_level())
            ''',
        }
        with tempfile.TemporaryDirectory() as root, tempfile.TemporaryDirectory() as runs:
            for name, text in files.items():
                with open(os.path.join(root, name), "w") as fh:
                    fh.write(textwrap.dedent(text))
            cmd = [binary, "run", "--", sys.executable, "-m", "pytest", "-p", "devassert.pytest_plugin", "-p", "no:cacheprovider", "--devassert-level", "strict", "-s"]
            done = subprocess.run(cmd, cwd=root, capture_output=True, text=True, env=dict(os.environ, DEVASSERT_RUNS_DIR=runs), timeout=600)
        out = done.stdout + done.stderr
        self.assertEqual(done.returncode, 0, out)
        self.assertIn("LEVEL=strict", out)
        self.assertIn("AFTER=on", out)


class OffCostsNothing(unittest.TestCase):
    PROBE = '''
        import sys


        def test_nothing_imported(request):
            assert "torch" not in sys.modules
            assert "devassert._guard.intercept" not in sys.modules
            assert "devassert.integrations.pytest_guard" not in sys.modules
            assert request.config.pluginmanager.get_plugin("devassert-guard") is None
            print("PROBE-OK")
    '''

    def test_the_plugin_off_imports_no_torch_and_adds_no_hook(self):
        rc, out = run_pytest({"test_probe.py": self.PROBE}, "-s")
        self.assertEqual(rc, 0, out)
        self.assertIn("PROBE-OK", out)

    def test_the_plugin_on_imports_no_torch_for_a_suite_without_it(self):
        probe = self.PROBE.replace('assert "devassert.integrations.pytest_guard" not in sys.modules', "").replace(
            'assert request.config.pluginmanager.get_plugin("devassert-guard") is None', 'assert request.config.pluginmanager.get_plugin("devassert-guard") is not None'
        )
        rc, out = run_pytest({"test_probe.py": probe}, "-s", "--devassert")
        self.assertEqual(rc, 0, out)
        self.assertIn("PROBE-OK", out)


if __name__ == "__main__":
    unittest.main()

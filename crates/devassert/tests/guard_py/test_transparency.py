"""The guard is invisible to Python itself, not only to the ops it checks:
construction of tensors from lists of tensors, sequence protocols,
__torch_function__ of subclasses and duck types (every overridable function
torch ships in get_testing_overrides()), warnings attributed to the caller's
line, tracebacks with no frame of the guard, and unguard() putting every
original object back. Each case runs plain and guarded (the CPU path and the
accelerator path forced on CPU tensors) and compares.

Run: python -m unittest test_transparency (PYTHONPATH must hold python/).
"""

import collections.abc
import contextlib
import copy
import ctypes
import inspect
import operator
import os
import pickle
import traceback
import unittest
import warnings

import numpy as np
import torch
import torch.nn.functional as F

import devassert
from devassert._checks import deferred as _async
from devassert._checks import caller as _caller
from devassert._guard import intercept as _intercept
from devassert._checks import violation as _violation

PACKAGE = os.path.dirname(os.path.abspath(devassert.__file__)) + os.sep
MODES = (("plain", "off", False), ("cpu", "on", False), ("precheck", "on", True), ("async", "async", True))


@contextlib.contextmanager
def mode(level, precheck):
    _violation.PRECHECK_CPU = precheck
    _async.FAKE_DEVICE = level == "async"
    _intercept.set_level(level)
    try:
        yield
    finally:
        if level == "async":
            _async.poll(wait=True)
        _violation.PRECHECK_CPU = False
        _async.FAKE_DEVICE = False
        _async.reset()
        _intercept.set_level("off")


def each_mode(fn):
    """{mode name: fn() or the exception it raised}."""
    out = {}
    for name, level, precheck in MODES:
        with mode(level, precheck):
            try:
                out[name] = fn()
            except Exception as e:  # noqa: BLE001
                out[name] = e
    return out


def comparable(value):
    if isinstance(value, torch.Tensor) and type(value) not in (torch.Tensor, torch.nn.Parameter):
        return ("tensor subclass", type(value).__name__)  # its attributes may dispatch
    if isinstance(value, torch.Tensor):
        return ("tensor", type(value).__name__, value.dtype, tuple(value.shape), value.tolist())
    if isinstance(value, np.ndarray):
        return ("ndarray", value.dtype.str, value.tolist())
    if isinstance(value, BaseException):
        return ("raised", type(value).__name__, str(value))
    if isinstance(value, (list, tuple)):
        return type(value)(comparable(v) for v in value)
    if isinstance(value, dict):
        return {k: comparable(v) for k, v in value.items()}
    return value


_is_sequence = ctypes.pythonapi.PySequence_Check
_is_sequence.argtypes = [ctypes.py_object]


class ListsOfTensors(unittest.TestCase):
    """torch's list-to-tensor code asks PySequence_Check of every item."""

    def idioms(self):
        class Made(torch.Tensor):  # a subclass made while the guard is on
            pass

        zero_d = [torch.tensor(1.5), torch.tensor(2.5)]
        return {
            "tensor": torch.tensor(zero_d),
            "nested": torch.tensor([[torch.tensor(1), torch.tensor(2)], [torch.tensor(3), torch.tensor(4)]]),
            "tuple": torch.tensor(tuple(zero_d)),
            "as_tensor": torch.as_tensor(zero_d),
            "new_tensor": torch.zeros(1).new_tensor(zero_d),
            "LongTensor": torch.LongTensor([torch.tensor(1), torch.tensor(2)]),
            "mixed": torch.tensor([1.0, torch.tensor(2.0), np.float32(3.0)]),
            "stack": torch.stack([torch.tensor(1.0), torch.tensor(2.0)]),
            "parameters": torch.tensor([torch.nn.Parameter(torch.tensor(4.0)), torch.nn.Parameter(torch.tensor(5.0))]),
            "later subclass": torch.tensor([torch.tensor(6.0).as_subclass(Made)]),
            "numpy": np.array(zero_d),
            "ragged": self.raises(lambda: torch.tensor([torch.zeros(2), torch.zeros(3)])),
            "len": len(torch.zeros(3, 2)),
            "iter": [t.item() for t in torch.arange(3)],
            "unpack": [t.item() for t in (lambda a, b: (a, b))(*torch.arange(2))],
            "index": operator.index(torch.tensor(3)),
            "list index": [10, 20, 30, 40][torch.tensor(2)],
            "Sequence": isinstance(torch.zeros(2), collections.abc.Sequence),
            "PySequence_Check": (_is_sequence(torch.zeros(2)), _is_sequence(torch.nn.Parameter(torch.zeros(2))), _is_sequence(torch.zeros(1).as_subclass(Made))),
            "len of 0-d": self.raises(lambda: len(torch.tensor(1.0))),
        }

    @staticmethod
    def raises(fn):
        try:
            fn()
        except Exception as e:  # noqa: BLE001
            return e
        return None

    def test_every_idiom_is_the_same_guarded(self):
        results = each_mode(self.idioms)
        plain = comparable(results["plain"])
        self.assertNotIsInstance(results["plain"], Exception, results["plain"])
        for name in ("cpu", "precheck", "async"):
            self.assertEqual(comparable(results[name]), plain, name)

    def test_the_idioms_after_unguard(self):
        devassert.guard()
        devassert.unguard()
        self.assertEqual(comparable(self.idioms()), comparable(each_mode(self.idioms)["plain"]))


def snapshot():
    """Every attribute of the objects the guard touches, by identity, and
    Tensor's sequence slots."""
    from torch._utils import ExceptionWrapper
    from torch.utils.data import dataloader

    owners = [
        torch, torch.Tensor, torch._C._nn, F, torch.nn.Parameter,
        dataloader._BaseDataLoaderIter, dataloader._MultiProcessingDataLoaderIter, ExceptionWrapper,
    ]
    out = {}
    for owner in owners:
        for name, value in vars(owner).items():
            out[(repr(owner), name)] = id(value)
        out[(repr(owner), "<in dict>")] = tuple(sorted(vars(owner)))
    out["slots"] = (_is_sequence(torch.zeros(1)), _is_sequence(torch.nn.Parameter(torch.zeros(1))))
    return out


class UnguardRestores(unittest.TestCase):
    def test_unguard_puts_every_original_object_back(self):
        self.assertFalse(hasattr(torch.gather, "__devassert_original__"), "off: no wrapper is installed")
        before = snapshot()
        devassert.guard()
        self.assertTrue(hasattr(torch.gather, "__devassert_original__"))
        devassert.unguard()
        after = snapshot()
        changed = [k for k in before if before[k] != after.get(k)]
        self.assertEqual(changed, [])
        self.assertEqual(set(before), set(after))

    def test_a_guard_block_restores_them_too(self):
        before = snapshot()
        with devassert.guard():
            torch.zeros(3)[torch.tensor([1])]
        self.assertEqual(snapshot(), before)


# --- __torch_function__ -----------------------------------------------------


def _testing_functions():
    """[(func, lambda)] of get_testing_overrides(), looked up now (guarded:
    the functions a user would call now; the public function is cached)."""
    make = getattr(torch.overrides.get_testing_overrides, "__wrapped__", torch.overrides.get_testing_overrides)
    return list(make().items())


class Recording:
    """A duck type: records what __torch_function__ is handed, answers -1."""

    seen = []

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        cls.seen.append(func)
        return -1


class RecordingTensor(torch.Tensor):
    """A subclass that records and answers -1 (never runs the op)."""

    seen = []

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        cls.seen.append(func)
        return -1


def _arguments(func, override, make):
    """Positional arguments for `func`: one made object per tensor parameter,
    plain values for the others (from the signatures the wheel ships)."""
    from torch.testing._internal.generated.annotated_fn_args import annotated_args

    spec = annotated_args.get(getattr(func, "__devassert_original__", func))
    if spec is None:
        params = [p for p in inspect.signature(override).parameters.values() if p.default is p.empty and p.kind is p.POSITIONAL_OR_KEYWORD]
        return [make() for _ in params], {}
    simple = {
        "Tensor": make, "TensorList": lambda: [make(), make()], "ITensorListRef": lambda: [make(), make()],
        "c10::List<::std::optional<Tensor>>": lambda: [make(), make()], "c10::List<c10::optional<Tensor>>": lambda: [make(), make()],
        "int64_t": lambda: 1, "SymInt": lambda: 1,
        "double": lambda: 1.0, "bool": lambda: False, "IntArrayRef": lambda: [1, 2], "SymIntArrayRef": lambda: [1, 2],
        "Scalar": lambda: 3.5, "ScalarType": lambda: torch.float32, "c10::string_view": lambda: "sum",
        "Dimname": lambda: "a", "DimnameList": lambda: ["a"], "Generator": lambda: None, "Layout": lambda: torch.strided,
        "Device": lambda: "cpu", "MemoryFormat": lambda: torch.contiguous_format, "int": lambda: 1, "float": lambda: 1.0,
        "bool?": lambda: None,
    }
    args, kwargs = [], {}
    for a in spec:
        value = simple.get(a["simple_type"], lambda: None)()
        if a["is_kwarg_only"] == "True":
            kwargs[a["name"]] = value
        else:
            args.append(value)
    return args, kwargs


def _dispatch_outcomes(make, recorder):
    """[(index, called is handed, number of calls, result)] for every testing
    function whose dispatch reached the recorder."""
    out = []
    warnings.simplefilter("ignore")  # deprecations of the functions called
    for i, (func, override) in enumerate(_testing_functions()):
        try:
            args, kwargs = _arguments(func, override, make)
        except Exception:  # noqa: BLE001 - an object that cannot be made
            continue
        recorder.seen.clear()
        try:
            result = func(*args, **kwargs)
        except Exception as e:  # noqa: BLE001
            result = type(e).__name__
        seen = list(recorder.seen)
        out.append((i, getattr(func, "__name__", repr(func)), len(seen), all(f is func for f in seen), comparable(result)))
    return out


class TorchFunctionConformance(unittest.TestCase):
    def check_dispatch(self, make, recorder):
        plain = guarded = None
        self.addCleanup(warnings.resetwarnings)
        for name, level, precheck in MODES[:3]:
            with mode(level, precheck):
                got = _dispatch_outcomes(make, recorder)
            if name == "plain":
                plain = got
                continue
            guarded = got
            self.assertEqual(len(guarded), len(plain), name)
            diff = [(p, g) for p, g in zip(plain, guarded) if p != g]
            self.assertEqual(diff, [], f"{name}: {len(diff)} functions dispatch differently")
        # What the comparison covers: hundreds of functions reach the recorder,
        # among them the guarded ones, handed what was called.
        reached = {o[1] for o in guarded if o[2] and o[3]}
        self.assertGreater(len(reached), 500)
        self.assertLessEqual({"gather", "index_select", "embedding", "one_hot", "cross_entropy", "scatter", "index_put"}, reached)

    def test_duck_types_get_the_function_that_was_called_once(self):
        self.check_dispatch(Recording, Recording)

    def test_subclasses_get_the_function_that_was_called_once(self):
        self.check_dispatch(lambda: torch.zeros(2).as_subclass(RecordingTensor), RecordingTensor)

    def test_func_is_torch_x_still_matches(self):
        class OnlyIndexSelect:
            def __init__(self, t):
                self.t = t

            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                if func is torch.index_select:
                    return "mine"
                return NotImplemented

        def run():
            x = OnlyIndexSelect(torch.arange(4))
            out = [torch.index_select(x, 0, torch.tensor([1]))]
            try:
                torch.gather(x, 0, torch.tensor([1]))
            except TypeError as e:
                out.append(("TypeError", "Multiple dispatch failed" in str(e)))
            return out

        results = each_mode(run)
        for name in ("cpu", "precheck", "async"):
            self.assertEqual(comparable(results[name]), comparable(results["plain"]), name)
        self.assertEqual(results["plain"][0], "mine")

    def test_a_table_built_before_the_guard_keeps_matching(self):
        # Keyed by torch's own functions (built with the guard off, as at a
        # module's import before guard()), and by the name C dispatch hands
        # over (torch._C._VariableFunctions.scatter, as torch's annotated_args
        # is) looked up with the name the user calls.
        table = {torch.gather: "gather", torch.scatter: "scatter", F.one_hot: "one_hot", torch.embedding: "embedding", torch._C._nn.cross_entropy_loss: "ce"}
        by_c_name = {torch._C._VariableFunctions.scatter: "scatter", torch._C._VariableFunctions.gather: "gather"}

        class Tabled:
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                return table.get(func, NotImplemented)

        def run():
            x = Tabled()
            calls = [torch.gather(x, 0, x), torch.scatter(x, 0, x, x), F.one_hot(x, 3), torch.embedding(x, x), torch._C._nn.cross_entropy_loss(x, x)]
            return calls, [by_c_name.get(torch.scatter), by_c_name.get(torch.gather), torch.gather in table, len({torch.gather, *table} - set(table))]

        results = each_mode(run)
        for name in ("cpu", "precheck", "async"):
            self.assertEqual(comparable(results[name]), comparable(results["plain"]), name)
        self.assertEqual(results["plain"], (["gather", "scatter", "one_hot", "embedding", "ce"], ["scatter", "gather", True, 0]))

    def test_a_wrapper_is_pickled_and_copied_by_name(self):
        with mode("on", False):
            self.assertTrue(hasattr(torch.gather, "__devassert_original__"))
            for fn in (torch.gather, F.one_hot, torch.index_select):
                self.assertIs(pickle.loads(pickle.dumps(fn)), fn)
                self.assertIs(copy.deepcopy(fn), fn)
            self.assertEqual(torch.gather.__name__, "gather")

    def test_a_call_torch_cannot_parse_reaches_no_handler(self):
        # torch parses the arguments before any __torch_function__ runs: a
        # call that matches no signature is a TypeError and no handler sees
        # it. Which calls match differs between versions (2.2 wants a list of
        # indices, later ones take a lone duck type), so the guard asks torch.
        def run():
            out = []
            for args in ((Recording(), None, Recording()), (Recording(), Recording(), Recording()), (Recording(), [Recording()], Recording())):
                Recording.seen.clear()
                try:
                    result = torch.index_put(*args)
                except TypeError as e:
                    result = ("TypeError", str(e))
                out.append((result, [f is torch.index_put for f in Recording.seen]))
            return out

        results = each_mode(run)
        for name in ("cpu", "precheck", "async"):
            self.assertEqual(comparable(results[name]), comparable(results["plain"]), name)
        self.assertEqual(results["plain"][0][1], [])
        self.assertEqual(results["plain"][2], (-1, [True]))


class Partial(torch.Tensor):
    """A subclass that supports a few ops and raises for the rest."""

    calls = []
    SUPPORTED = {"__repr__"}

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        cls.calls.append(func)
        if getattr(func, "__name__", "") not in cls.SUPPORTED:
            raise NotImplementedError("Partial does not support this op")
        with torch._C.DisableTorchFunctionSubclass():
            return func(*args, **(kwargs or {}))


class PartialSubclasses(unittest.TestCase):
    def test_unsupported_ops_raise_as_plain_with_as_many_calls(self):
        idx = torch.tensor([1, 0])

        def run():
            x = torch.arange(6.0).reshape(2, 3).as_subclass(Partial)
            out = []
            ops = [
                ("getitem", lambda: x[idx], lambda: torch.Tensor.__getitem__),
                ("gather", lambda: torch.gather(x, 0, idx.view(2, 1).expand(2, 3)), lambda: torch.gather),
                ("index_select", lambda: torch.index_select(x, 0, idx), lambda: torch.index_select),
                ("method", lambda: x.index_select(0, idx), lambda: torch.Tensor.index_select),
                ("embedding", lambda: F.embedding(idx, x), lambda: F.embedding),
                ("cross_entropy", lambda: F.cross_entropy(x, idx), lambda: F.cross_entropy),
            ]
            for name, op, called in ops:
                Partial.calls.clear()
                try:
                    op()
                    got = "ran"
                except NotImplementedError as e:
                    got = str(e)
                out.append((name, got, len(Partial.calls), Partial.calls[0] is called() if Partial.calls else None))
            return out

        results = each_mode(run)
        self.assertTrue(all(o[1] != "ran" and o[2] == 1 and o[3] for o in results["plain"]), results["plain"])
        for name in ("cpu", "precheck", "async"):
            self.assertEqual(results[name], results["plain"], name)


# --- warnings and tracebacks --------------------------------------------------


def _warned_ops():
    x = torch.arange(3.0)
    mask = torch.tensor([1, 0, 1], dtype=torch.uint8)
    out = []
    for _ in range(2):  # twice from each line: "default" shows one per line
        out.append(x[mask])  # line A
        out.append(x[mask])  # line B: another place, another warning
        out.append(x[mask, None])  # line C: a tuple key
    return out


class Warnings(unittest.TestCase):
    def record(self, action):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter(action)
            _warned_ops()
        return [(w.filename, w.lineno, w.category.__name__, str(w.message)) for w in caught]

    def test_warnings_name_the_calling_line_and_merge_as_plain(self):
        for action in ("always", "default"):
            got = {}
            for name, level, precheck in MODES:
                with mode(level, precheck):
                    got[name] = self.record(action)
            self.assertTrue(got["plain"], "the ops warn")
            self.assertTrue(all(f == __file__ for f, *_ in got["plain"]))
            for name in ("cpu", "precheck", "async"):
                self.assertEqual(got[name], got["plain"], f"{action}, {name}")
        lines = {line for _, line, *_ in got["plain"]}
        self.assertEqual(len(lines), 3, "three calling lines, three warnings under 'default'")


def _bad_calls():
    x = torch.arange(4.0)
    return [
        ("getitem", lambda: x[torch.tensor([9])]),
        ("setitem", lambda: x.__setitem__(torch.tensor([-9]), 1.0)),
        ("gather", lambda: torch.gather(x, 0, torch.tensor([7]))),
        ("method", lambda: x.index_select(0, torch.tensor([5]))),
        ("embedding", lambda: F.embedding(torch.tensor([4]), x.view(4, 1))),
        ("cross_entropy", lambda: F.cross_entropy(x.view(1, 4), torch.tensor([4]))),
    ]


class Tracebacks(unittest.TestCase):
    def test_a_prevented_op_leaves_no_guard_frame_and_names_the_users_line(self):
        for name, level, precheck in MODES[:3]:
            with mode(level, precheck):
                for op, call in _bad_calls():
                    try:
                        call()
                    except (IndexError, RuntimeError) as raised:
                        e = raised
                    else:
                        self.fail(f"{name} {op}: no error")
                    frames = traceback.extract_tb(e.__traceback__)
                    ours = [f for f in frames if f.filename.startswith(PACKAGE) or f.name == _caller.MARK]
                    self.assertEqual(ours, [], f"{name} {op}")
                    user = [f for f in frames if f.filename == __file__]
                    self.assertIn("call()", user[-2].line, f"{name} {op}")
                    self.assertIn("lambda", user[-1].name, f"{name} {op}")
                    if name != "plain":
                        self.assertIsInstance(e, devassert.DeviceAssertPrevented, f"{name} {op}")
                        self.assertEqual(e.finding["location"]["file"], __file__, f"{name} {op}")


# A script that binds torch's functions to names of its own, then turns the
# guard on (as a script or notebook does after its imports).
BOUND_BEFORE = """
import sys
import torch
import torch.nn.functional as F
from torch import gather
from torch.nn.functional import one_hot
embed = F.embedding  # a Python function that calls torch.embedding: still checked
import devassert

x = torch.arange(6.0).view(2, 3)
bad = torch.tensor([[0, 5, 1], [0, 0, 0]])


def outcome(call):
    try:
        call()
    except Exception as e:
        return type(e).__name__ + (" finding" if hasattr(e, "finding") else "")
    return "ran"


devassert.guard()
print("bound:", outcome(lambda: gather(x, 1, bad)))
print("embed:", outcome(lambda: embed(torch.tensor([7]), x)))
print("one_hot:", outcome(lambda: one_hot(torch.tensor([5]), 3)))
print("torch.gather:", outcome(lambda: torch.gather(x, 1, bad)))
devassert.unguard()
for _ in range(3):
    with devassert.guard():
        from torch import gather as late
        print("imported while on:", outcome(lambda: late(x, 1, bad)))
"""


class BoundBeforeTheGuard(unittest.TestCase):
    """devassert.guard() turned on after the imports, outside pytest: a name
    bound to a Python function of torch (F.embedding) is still checked, the
    ops it calls are; what the program bound of the guarded entry points
    themselves is named in one line on stderr, once (pytest's plugin says it
    in its header)."""

    def test_names_bound_earlier_are_named_once(self):
        import subprocess
        import sys

        out = subprocess.run([sys.executable, "-c", BOUND_BEFORE], capture_output=True, text=True, timeout=300, check=False)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertEqual(
            out.stdout.splitlines(),
            [
                "bound: RuntimeError",  # torch's own function: not checked
                "embed: DeviceAssertPreventedIndexError finding",
                "one_hot: RuntimeError",
                "torch.gather: DeviceAssertPreventedRuntimeError finding",
            ]
            + ["imported while on: DeviceAssertPreventedRuntimeError finding"] * 3,
        )
        lines = [line for line in out.stderr.splitlines() if line.startswith("devassert:")]
        self.assertEqual(len(lines), 1, out.stderr)
        self.assertIn("__main__.gather (torch.gather)", lines[0])
        self.assertIn("__main__.one_hot (torch.nn.functional.one_hot)", lines[0])
        self.assertNotIn("embed", lines[0])
        self.assertIn("bound before the guard was installed", lines[0])
        self.assertNotIn("__mp_main__", lines[0])


if __name__ == "__main__":
    unittest.main()

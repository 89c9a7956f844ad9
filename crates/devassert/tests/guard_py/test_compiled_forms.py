"""Every guarded op in every form, compiled: the equivalence harness.

Each case is a small function (or module) calling one guarded op in one
form: a torch function (``torch.gather``), a Tensor method (``x.gather``),
keywords, an in-place method, an operator (``x[idx]``, ``x[idx] = v``), an
``F.*`` function or ``nn`` module, an ATen overload
(``torch.ops.aten.gather.default``); its index either a graph input (checked
at the region's boundary) or computed in the region (checked inside it).
Each runs plain compiled and guarded compiled, per configuration (backend ×
dynamic), each compiled fresh:

- valid input: outputs and gradients bit-identical to plain compiled, and
  dynamo's frame, graph, recompile and graph-break counts the same;
- bad input: the eager guard's finding (rule, values, bound, line);
- then valid input again: nothing recompiles.

A real transformers model is a case too: RoBERTa, whose position ids are
computed in the region (``cumsum`` of the padding mask) and read by
``torch.gather`` of its buffered token type ids and by the position
embedding (a tiny config, built, not downloaded).

The matrix run by default (`make test`) is every case with aot_eager,
static and dynamic, and a representative set with Inductor; the whole
matrix (every case × Inductor and aot_eager × static and dynamic):
``DEVASSERT_FULL_MATRIX=1``.

Run: python -m unittest test_compiled_forms (PYTHONPATH must hold python/).
"""

import contextlib
import inspect
import io
import os
import unittest
import warnings

import torch
import torch.nn.functional as F
from torch._dynamo.utils import counters

import devassert
from devassert import _support
from devassert._checks import notes as _notes
from devassert._compiled import table as _table
from devassert._guard import intercept as _intercept


def setUpModule():
    reason = _support.compiled_skip_reason()
    if reason:
        raise unittest.SkipTest(reason)


FULL = os.environ.get("DEVASSERT_FULL_MATRIX", "") not in ("", "0")
HERE = os.path.dirname(os.path.abspath(__file__))
CATALOG = os.path.abspath(os.path.join(HERE, "..", "..", "..", "..", "catalog"))


def t(*v):
    return torch.tensor(v)


def x45():
    return torch.arange(20.0).reshape(4, 5).requires_grad_()


# --- the cases ---------------------------------------------------------------
# (name, function, valid inputs (a function of none), bad argument, its bad
# value); the function's index argument is `i`. "in:" cases compute the index
# in the region (`i + 0`); the others take it as an input.


def gather_fn(x, i):
    return torch.gather(x, 1, i)


def gather_method(x, i):
    return x.gather(1, i)


def gather_kw(x, i):
    return torch.gather(input=x, dim=1, index=i)


def gather_aten(x, i):
    return torch.ops.aten.gather.default(x, 1, i)


def index_select_fn(x, i):
    return torch.index_select(x, 0, i)


def index_select_method(x, i):
    return x.index_select(0, i)


def scatter_add_fn(x, i):
    return torch.scatter_add(x, 1, i, torch.ones_like(x))


def scatter_add_method(x, i):
    return x.scatter_add(1, i, torch.ones_like(x))


def scatter_add_inplace(x, i):
    return (x * 1).scatter_add_(1, i, torch.ones_like(x))


def scatter_fn(x, i):
    return torch.scatter(x, 1, i, 2.0)


def scatter_reduce_method(x, i):
    return x.scatter_reduce(1, i, torch.ones_like(x), reduce="amax")


def index_add_fn(x, i):
    return torch.index_add(x, 0, i, torch.ones(2, 5))


def index_add_method(x, i):
    return x.index_add(0, i, torch.ones(2, 5))


def index_add_inplace(x, i):
    return (x * 1).index_add_(0, i, torch.ones(2, 5))


def index_copy_method(x, i):
    return x.index_copy(0, i, torch.ones(2, 5))


def index_fill_fn(x, i):
    return torch.index_fill(x, 1, i, 0.0)


def take_fn(x, i):
    return torch.take(x, i)


def take_along_dim_fn(x, i):
    return torch.take_along_dim(x, i, 1)


def take_along_dim_method(x, i):
    return x.take_along_dim(i, dim=1)


def subscript(x, i):
    return x[i]


def subscript_pair(x, i):
    return x[i, i]


def assign(x, i):
    y = x * 1
    y[i] = 0.0
    return y


def index_put_fn(x, i):
    return torch.index_put(x, (i,), torch.tensor(1.0))


def embedding_F(x, i):
    return F.embedding(i, x)


def embedding_torch(x, i):
    return torch.embedding(x, i)


def cross_entropy_F(x, i):
    return F.cross_entropy(x, i)


def cross_entropy_ignored(x, i):
    # The loss target computed in the region, as a real program masks labels.
    return F.cross_entropy(x, torch.where(i >= 2, i, -100))


def nll_loss_F(x, i):
    return F.nll_loss(x.log_softmax(1), i)


def one_hot_F(x, i):
    return F.one_hot(i, 5).float() * x.sum()


class _EmbeddingModule(torch.nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.table = torch.nn.Embedding(6, 3)

    def forward(self, x, i):
        return self.table(i) * x.sum()


class _LossModule(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.loss = torch.nn.CrossEntropyLoss(ignore_index=-1)

    def forward(self, x, i):
        return self.loss(x, i)


def gathered_positions(x, i):
    # positions computed in the region (cumsum of a mask), then read twice
    pos = (i > 0).long().cumsum(1)
    return torch.gather(x, 1, pos) + x.gather(1, pos)


COL = lambda: t([0, 4], [1, 2], [3, 3], [0, 0])  # noqa: E731
COL_BAD = t([0, 5], [1, 2], [3, 3], [0, 0])
ROWS = lambda: t(0, 3)  # noqa: E731
ROWS_BAD = t(0, 4)


# name, function, inputs, bad value of i
CASES = [
    ("gather function", gather_fn, lambda: (x45(), COL()), COL_BAD),
    ("gather method", gather_method, lambda: (x45(), COL()), COL_BAD),
    ("gather keywords", gather_kw, lambda: (x45(), COL()), COL_BAD),
    ("gather aten overload", gather_aten, lambda: (x45(), COL()), COL_BAD),
    ("index_select function", index_select_fn, lambda: (x45(), ROWS()), ROWS_BAD),
    ("index_select method", index_select_method, lambda: (x45(), ROWS()), ROWS_BAD),
    ("scatter_add function", scatter_add_fn, lambda: (x45(), t(*[[0, 1, 2, 3, 4]] * 4)), t(*[[0, 1, 2, 3, 5]] * 4)),
    ("scatter_add method", scatter_add_method, lambda: (x45(), t(*[[0, 1, 2, 3, 4]] * 4)), t(*[[0, 1, 2, 3, 5]] * 4)),
    ("scatter_add_ in place", scatter_add_inplace, lambda: (x45(), t(*[[0, 1, 2, 3, 4]] * 4)), t(*[[0, 1, 2, 3, 5]] * 4)),
    ("scatter function", scatter_fn, lambda: (x45(), COL()), COL_BAD),
    ("scatter_reduce method", scatter_reduce_method, lambda: (x45(), t(*[[0, 1, 2, 3, 4]] * 4)), t(*[[0, 1, 2, 3, 7]] * 4)),
    ("index_add function", index_add_fn, lambda: (x45(), ROWS()), ROWS_BAD),
    ("index_add method", index_add_method, lambda: (x45(), ROWS()), ROWS_BAD),
    ("index_add_ in place", index_add_inplace, lambda: (x45(), ROWS()), ROWS_BAD),
    ("index_copy method", index_copy_method, lambda: (x45(), ROWS()), ROWS_BAD),
    ("index_fill function", index_fill_fn, lambda: (x45(), t(0, -5)), t(0, 5)),
    ("take function", take_fn, lambda: (x45(), t(0, 19, -20)), t(0, 20, -20)),
    ("take_along_dim function", take_along_dim_fn, lambda: (x45(), COL()), COL_BAD),
    ("take_along_dim method", take_along_dim_method, lambda: (x45(), COL()), COL_BAD),
    ("x[idx]", subscript, lambda: (x45(), t(0, 3, -4)), t(0, 4, -4)),
    ("x[idx, idx]", subscript_pair, lambda: (x45(), t(0, 3)), t(0, 4)),
    ("x[idx] = v", assign, lambda: (x45(), t(0, 3)), t(0, 6)),
    ("index_put function", index_put_fn, lambda: (x45(), t(0, 3)), t(0, 4)),
    ("F.embedding", embedding_F, lambda: (torch.randn(6, 3, requires_grad=True), t([0, 5], [1, 2])), t([0, 6], [1, 2])),
    ("torch.embedding", embedding_torch, lambda: (torch.randn(6, 3, requires_grad=True), t([0, 5], [1, 2])), t([0, 6], [1, 2])),
    ("nn.Embedding module", _EmbeddingModule(), lambda: (torch.ones(2, requires_grad=True), t([0, 5], [1, 2])), t([0, 6], [1, 2])),
    ("F.cross_entropy", cross_entropy_F, lambda: (torch.randn(4, 5, requires_grad=True), t(0, 4, 1, 2)), t(0, 5, 1, 2)),
    ("F.cross_entropy, target masked in the region", cross_entropy_ignored, lambda: (torch.randn(4, 5, requires_grad=True), t(0, 4, 3, 2)), t(0, 5, 3, 2)),
    ("nn.CrossEntropyLoss module", _LossModule(), lambda: (torch.randn(4, 5, requires_grad=True), t(0, 4, -1, 2)), t(0, 5, -1, 2)),
    ("F.nll_loss", nll_loss_F, lambda: (torch.randn(4, 5, requires_grad=True), t(0, 4, 1, 2)), t(0, 5, 1, 2)),
    ("F.one_hot", one_hot_F, lambda: (torch.ones(2, requires_grad=True), t(0, 4)), t(0, 5)),
    ("positions computed in the region", gathered_positions, lambda: (x45(), t([1, 1, 1, 1, 0], [1, 1, 0, 0, 0], [0, 0, 0, 0, 0], [1, 0, 0, 0, 0])), t([1, 1, 1, 1, 1], [1, 1, 0, 0, 0], [0, 0, 0, 0, 0], [1, 0, 0, 0, 0])),
]


# The eager program whose finding a form must give, where it is another.
EAGER_OF = {"gather aten overload": gather_fn}
ATEN_LINE = {"gather aten overload": gather_aten.__code__.co_firstlineno + 1}


def _inside(fn):
    """The same op with its index computed in the region."""

    def inside(x, i):
        return fn(x, i + 0)

    return inside


# Every case is run with its index as an input (the boundary) and computed
# in the region (inside), but the one that computes it already.
FORMS = [(name, fn, inputs, bad, "boundary") for name, fn, inputs, bad in CASES if fn is not gathered_positions]
FORMS += [(name, _inside(fn), inputs, bad, "inside") for name, fn, inputs, bad in CASES]

# A representative Inductor set (function, method, in place, operator, F,
# module, a computed target, computed positions), the rest with aot_eager.
INDUCTOR = {
    "gather function", "index_select function", "scatter_add function", "index_add method",
    "take_along_dim function", "x[idx]", "F.cross_entropy, target masked in the region",
    "nn.Embedding module", "positions computed in the region",
}


def configurations(name, where):
    for backend in ("aot_eager", "inductor"):
        for dynamic in (False, True):
            if FULL or backend == "aot_eager" or (name in INDUCTOR and (not dynamic or where == "inside")):
                yield backend, dynamic


# --- running one case ----------------------------------------------------------


def _counts():
    return (
        counters["frames"]["total"],
        counters["frames"]["ok"],
        counters["stats"]["unique_graphs"],
        sum(counters["graph_break"].values()),
        sum(counters["recompiles"].values()),
    )


def _run(fn, args):
    """Outputs and the gradients of the float inputs, or the exception."""
    args = [a.detach().clone().requires_grad_(a.requires_grad) for a in args]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = fn(*args)
            if out.requires_grad:
                out.float().sum().backward()
    except Exception as e:  # noqa: BLE001
        return e
    return [out.detach()] + [a.grad for a in args if a.requires_grad]


def _compiled(fn, backend, dynamic):
    torch._dynamo.reset()
    return torch.compile(fn, backend=backend, dynamic=dynamic)


def _facts(finding):
    loc = finding["location"] or {}
    return {
        "rule": finding["rule"],
        "values": finding["values"] or [finding["value_min"], finding["value_max"]],
        "bound": finding["bound"],
        "line": (os.path.basename(loc.get("file") or ""), loc.get("line")),
    }


class EveryForm(unittest.TestCase):
    def tearDown(self):
        _intercept.set_level("off")

    def _equivalent(self, name, fn, inputs, bad, backend, dynamic):
        valid = inputs()
        x = valid[0]
        # plain compiled
        _intercept.set_level("off")
        plain_fn = _compiled(fn, backend, dynamic)
        start = _counts()
        plain = _run(plain_fn, valid)
        plain_counts = tuple(b - a for a, b in zip(start, _counts()))
        self.assertNotIsInstance(plain, Exception, plain)
        # eager, guarded: the finding to expect (an ATen overload is not
        # wrapped in eager code: its torch function's finding)
        _intercept.set_level("on")
        eager = _run(EAGER_OF.get(name, fn), [x, bad])
        self.assertIsInstance(eager, devassert.DeviceAssertPrevented, repr(eager))
        # guarded compiled
        guarded_fn = _compiled(fn, backend, dynamic)
        start = _counts()
        guarded = _run(guarded_fn, valid)
        counts = tuple(b - a for a, b in zip(start, _counts()))
        self.assertNotIsInstance(guarded, Exception, guarded)
        self.assertEqual(len(guarded), len(plain))
        for got, want in zip(guarded, plain):
            self.assertTrue(torch.equal(got, want), f"not bit-identical: max diff {(got.double() - want.double()).abs().max().item()}")
        self.assertEqual(counts, plain_counts, "dynamo's frames, graphs, graph breaks, recompiles")
        start = _counts()
        got = _run(guarded_fn, [x, bad])
        self.assertIsInstance(got, devassert.DeviceAssertPrevented, repr(got))
        want = _facts(eager.finding)
        if name in EAGER_OF:  # the line is the overload's own
            want["line"] = (want["line"][0], ATEN_LINE[name])
        self.assertEqual(_facts(got.finding), want)
        self.assertEqual(_run(guarded_fn, valid)[0].shape, plain[0].shape)
        self.assertEqual(_counts()[:3], start[:3], "a bad input recompiled")

    def test_every_guarded_op_in_every_form(self):
        for name, fn, inputs, bad, where in FORMS:
            for backend, dynamic in configurations(name, where):
                with self.subTest(f"{name} ({where}, {backend}, dynamic={dynamic})"):
                    self._equivalent(name, fn, inputs, bad, backend, dynamic)


class Table(unittest.TestCase):
    def test_every_catalogued_op_a_program_can_call_is_in_the_table(self):
        import tomllib

        listed = set()
        for name in os.listdir(CATALOG):
            if name.endswith(".toml"):
                with open(os.path.join(CATALOG, name), "rb") as f:
                    listed.update(tomllib.load(f).get("aten", []))
        # ATen ops no Python program calls by name (the kernels' own, and
        # max_unpool, which no guard check covers yet).
        internal = {"nll_loss_forward", "nll_loss2d_forward", "_embedding_bag", "_embedding_bag_forward_only",
                    "_unsafe_index", "_unsafe_index_put", "_index_put_impl_", "max_unpool2d", "max_unpool3d"}
        self.assertEqual(sorted(listed - internal - set(_table.guarded_aten_ops())), [])

    def test_each_form_of_an_op_matches_one_entry(self):
        _intercept.set_level("on")
        try:
            seen = {}

            def backend(gm, example_inputs):
                for node in gm.graph.nodes:
                    m = _table.match(node)
                    if m is not None:
                        seen.setdefault(m[0], set()).add((node.op, str(node.target)))
                return gm

            def forms(x, i):
                return (torch.gather(x, 1, i), x.gather(1, i), torch.ops.aten.gather.default(x, 1, i),
                        torch.ops.aten.gather(x, 1, i), torch.take_along_dim(x, i, 1))

            torch._dynamo.reset()
            torch.compile(forms, backend=backend)(x45(), COL())
            self.assertEqual(len(seen["gather"]), 4, seen)
            self.assertIn("take_along_dim", seen)
        finally:
            _intercept.set_level("off")


# --- the guard going on and off ------------------------------------------------------


class _Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.table = torch.nn.Embedding(10, 4)

    def forward(self, x, i):
        return self.table(i + 0).sum() + torch.gather(x, 1, i).sum() + torch.index_select(x, 1, i[0]).sum()


class _Methods(torch.nn.Module):
    """Method and operator forms only: no name a guard of dynamo's looks up
    changes when the guard goes on, so only the guard itself can tell an
    entry compiled while it was off from one compiled while it was on."""

    def forward(self, x, i):
        return x.gather(1, i).sum() + x.index_select(1, i[0]).sum() + x[:, i[0]].sum() + x.gather(1, i + 0).sum()


def _rows(n):
    """Valid and bad inputs of `_Methods` with `n` rows (a new shape: a new cache entry)."""
    x = torch.arange(5.0 * n).reshape(n, 5).requires_grad_()
    valid = torch.tensor([[0, 4]] + [[1, 2]] * (n - 1))
    return [x, valid], [x, torch.tensor([[0, 9]] + [[1, 2]] * (n - 1))]


class OnAndOff(unittest.TestCase):
    def tearDown(self):
        _intercept.set_level("off")

    def _stopped_by(self, fn, args):
        got = _run(fn, args)
        return isinstance(got, devassert.DeviceAssertPrevented), got

    def test_a_shape_compiled_while_the_guard_was_off_is_checked_when_it_goes_on(self):
        # The guard was on once; a new shape compiles while it is off (an
        # entry without checks, beside the checked one, in the same code
        # object); when the guard goes on again that entry must not serve.
        for backend in ("aot_eager", "inductor"):
            with self.subTest(backend=backend):
                _intercept.set_level("on")
                torch._dynamo.reset()
                model = torch.compile(_Methods(), backend=backend)
                valid, bad = _rows(4)
                self.assertIsInstance(_run(model, valid), list)
                self.assertEqual(self._stopped_by(model, bad)[0], True)
                _intercept.set_level("off")
                valid6, bad6 = _rows(6)
                self.assertIsInstance(_run(model, valid6), list)
                _notes._said.discard("recompile-unchecked")
                with contextlib.redirect_stderr(io.StringIO()) as err:
                    _intercept.set_level("on")
                self.assertRegex(err.getvalue(), r"^devassert: 1 compiled region\(s\) were compiled while the guard was off "
                                 r"and ran unchecked: dynamo compiles each again, with the guard's checks, at its next call\n$")
                stopped, got = self._stopped_by(model, bad6)
                self.assertTrue(stopped, repr(got))
                self.assertTrue(self._stopped_by(model, _rows(5)[1])[0])
                # Compiled again with the guard on: it serves both states.
                start = _counts()
                for level in ("off", "on", "off", "on"):
                    _intercept.set_level(level)
                    for n in (4, 6):
                        self.assertIsInstance(_run(model, _rows(n)[0]), list)
                        self.assertEqual(self._stopped_by(model, _rows(n)[1])[0], level == "on")
                self.assertEqual(_counts(), start)

    def test_a_stance_that_skips_guard_evaluation_is_kept_and_named(self):
        # skip_guard_eval_unsafe: dynamo asks no guard and a recompile is an
        # error, so a region compiled while off cannot be compiled again
        # checked. The program runs as it did, the note says so, and the
        # region is checked once the stance is lifted.
        if "skip_guard_eval_unsafe" not in inspect.signature(torch.compiler.set_stance).parameters:
            self.skipTest(f"torch {torch.__version__} has no skip_guard_eval_unsafe stance")
        _intercept.set_level("off")
        torch._dynamo.reset()
        model = torch.compile(_Methods(), backend="aot_eager")
        valid, bad = _rows(4)
        self.assertIsInstance(_run(model, valid), list)
        torch.compiler.set_stance("default", skip_guard_eval_unsafe=True)
        try:
            _notes._said.discard("recompile-unchecked")
            with contextlib.redirect_stderr(io.StringIO()) as err:
                _intercept.set_level("on")
            self.assertIn("run unchecked: torch.compiler's stance skips guard evaluation (skip_guard_eval_unsafe)", err.getvalue())
            self.assertIsInstance(_run(model, valid), list)
            stopped, got = self._stopped_by(model, bad)
            self.assertFalse(stopped, repr(got))
            self.assertNotIn("Recompilation", repr(got))
        finally:
            torch.compiler.set_stance("default")
        self.assertTrue(self._stopped_by(model, bad)[0])

    def test_a_stance_that_skips_guard_evaluation_set_after_the_guard_is_named(self):
        # The guard goes on, then the stance is set: an entry compiled while
        # off and not yet compiled again checked would run unchecked; setting
        # the stance says so (each form of set_stance), sets it as asked, and
        # names nothing once every such entry is replaced. unguard() unhooks.
        if "skip_guard_eval_unsafe" not in inspect.signature(torch.compiler.set_stance).parameters:
            self.skipTest(f"torch {torch.__version__} has no skip_guard_eval_unsafe stance")
        from torch._dynamo import decorators as _decorators

        setter = _decorators._set_stance
        note = (r"^devassert: 1 compiled region\(s\) were compiled while the guard was off and may run unchecked under "
                r"this stance: torch.compiler's stance skips guard evaluation \(skip_guard_eval_unsafe\), so dynamo cannot "
                r"compile them again with the guard's checks; call them once before setting the stance, or lift it\n$")

        def set_skipping(form):
            _notes._said.discard("stance-unchecked")
            with contextlib.redirect_stderr(io.StringIO()) as err:
                if form == "function":
                    torch.compiler.set_stance("default", skip_guard_eval_unsafe=True)
                else:
                    stack.enter_context(torch.compiler.set_stance("default", skip_guard_eval_unsafe=True))
            self.assertTrue(torch._dynamo.eval_frame._stance.skip_guard_eval_unsafe)
            return err.getvalue()

        _intercept.set_level("off")
        torch._dynamo.reset()
        model = torch.compile(_Methods(), backend="aot_eager", dynamic=False)  # an entry per shape
        for n in (4, 6):
            self.assertIsInstance(_run(model, _rows(n)[0]), list)
        with contextlib.redirect_stderr(io.StringIO()):
            _intercept.set_level("on")
        self.assertIsNot(_decorators._set_stance, setter)
        self.assertTrue(_decorators._set_stance._dynamo_forbidden)
        self.assertIsInstance(_run(model, _rows(6)[0]), list)  # compiled again, checked: 4 is not yet
        for form in ("function", "context manager"):
            with self.subTest(form=form), contextlib.ExitStack() as stack:
                try:
                    self.assertRegex(set_skipping(form), note)
                    self.assertTrue(self._stopped_by(model, _rows(6)[1])[0])
                    stopped, got = self._stopped_by(model, _rows(4)[1])
                    self.assertFalse(stopped, repr(got))  # as the note says, and no recompile error
                    self.assertNotIn("Recompilation", repr(got))
                    self.assertIsInstance(_run(model, _rows(4)[0]), list)
                finally:
                    stack.close()
                    torch.compiler.set_stance("default")
        self.assertTrue(self._stopped_by(model, _rows(4)[1])[0])  # compiled again, checked
        with contextlib.ExitStack() as stack:
            try:
                self.assertEqual(set_skipping("function"), "")  # every entry is checked now
                for n in (4, 6):
                    self.assertTrue(self._stopped_by(model, _rows(n)[1])[0])
            finally:
                torch.compiler.set_stance("default")
        _intercept.set_level("off")
        self.assertIs(_decorators._set_stance, setter)

    def test_a_region_only_ever_run_with_the_guard_off_is_not_recompiled_at_each_toggle(self):
        _intercept.set_level("off")
        torch._dynamo.reset()
        model = torch.compile(_Methods(), backend="aot_eager")
        self.assertIsInstance(_run(model, _rows(4)[0]), list)
        start = _counts()
        for _ in range(3):
            _intercept.set_level("on")
            _intercept.set_level("off")
            self.assertIsInstance(_run(model, _rows(4)[0]), list)
        self.assertEqual(_counts(), start)
        _intercept.set_level("on")
        self.assertTrue(self._stopped_by(model, _rows(4)[1])[0])

    def test_a_region_compiled_while_off_is_checked_at_every_time_the_guard_goes_on(self):
        # A region first compiled while the guard is off, checked when it
        # goes on; off again, a new shape of it compiles unchecked: checked
        # when the guard goes on once more.
        for backend in ("aot_eager", "inductor"):
            with self.subTest(backend=backend):
                _intercept.set_level("on")
                torch._dynamo.reset()
                _intercept.set_level("off")
                model = torch.compile(_Methods(), backend=backend)
                self.assertIsInstance(_run(model, _rows(4)[0]), list)
                _intercept.set_level("on")
                self.assertTrue(self._stopped_by(model, _rows(4)[1])[0])
                _intercept.set_level("off")
                self.assertIsInstance(_run(model, _rows(6)[0]), list)
                _intercept.set_level("on")
                stopped, got = self._stopped_by(model, _rows(6)[1])
                self.assertTrue(stopped, repr(got))

    def _stopped(self, fn):
        return isinstance(_run(fn, [x45(), t([0, 9], [1, 2])]), devassert.DeviceAssertPrevented)

    def test_a_model_class_compiled_before_the_guard_is_checked_after(self):
        # Dynamo reuses the shared forward's cache entry for a new instance:
        # it is compiled again when the guard goes on, once.
        _intercept.set_level("off")
        torch._dynamo.reset()
        first = torch.compile(_Model(), backend="aot_eager")
        _run(first, [x45(), t([0, 1], [1, 2])])
        _intercept.set_level("on")
        second = torch.compile(_Model(), backend="aot_eager")
        self.assertTrue(self._stopped(second))
        self.assertTrue(self._stopped(first))

    def test_turning_the_guard_off_and_on_recompiles_nothing(self):
        # A region compiled with the guard on serves both states (dynamo's
        # guard on torch.gather accepts the builtin and the wrapper; the
        # checks follow the guard); one compiled before the guard went on
        # compiles once, checked, when the guard goes on.
        for compiled_first in (False, True):
            for backend in ("aot_eager", "inductor"):
                with self.subTest(compiled_before_the_guard=compiled_first, backend=backend):
                    _intercept.set_level("off")
                    torch._dynamo.reset()
                    model = torch.compile(_Model(), backend=backend)
                    valid = [x45(), t([0, 1], [1, 2])]
                    if compiled_first:
                        _run(model, valid)
                    _intercept.set_level("on")
                    want = _run(model, valid)
                    before = _counts()
                    for level in ("off", "on", "off", "on"):
                        _intercept.set_level(level)
                        got = _run(model, valid)
                        for a, b in zip(got, want):
                            self.assertTrue(torch.equal(a, b), level)
                        self.assertEqual(self._stopped(model), level == "on", level)
                    self.assertEqual(_counts(), before)

    def test_with_the_guard_off_a_region_compiled_guarded_is_plain(self):
        # The boundary's and the in-region checks are off with the guard:
        # a bad index meets what plain compiled code does (the op's own
        # error), not a check nor a substituted value.
        def step(x, i):
            return torch.gather(x, 1, i).sum() + F.embedding(i + 5, torch.ones(8, 3)).sum()

        for backend in ("aot_eager", "inductor"):
            for bad, where in ((t([0, 7], [1, 2]), "boundary"), (t([0, 4], [1, 2]), "inside")):
                with self.subTest(backend=backend, where=where):
                    _intercept.set_level("off")
                    plain = _run(_compiled(step, backend, False), [x45(), bad])
                    self.assertIsInstance(plain, Exception)  # IndexError, RuntimeError
                    self.assertNotIsInstance(plain, devassert.DeviceAssertPrevented)
                    _intercept.set_level("on")
                    guarded = _compiled(step, backend, False)
                    self.assertIsInstance(_run(guarded, [x45(), bad]), devassert.DeviceAssertPrevented)
                    start = _counts()
                    _intercept.set_level("off")
                    got = _run(guarded, [x45(), bad])
                    self.assertIs(type(got), type(plain), repr(got))
                    if backend == "aot_eager":  # Inductor's message names its generated file
                        self.assertEqual(str(got).splitlines()[0], str(plain).splitlines()[0])
                    self.assertEqual(_counts(), start, "turning the guard off recompiled")
                    _intercept.set_level("on")
                    self.assertIsInstance(_run(guarded, [x45(), bad]), devassert.DeviceAssertPrevented)
                    self.assertEqual(_counts(), start, "turning the guard on recompiled")


# --- a real transformers model: RoBERTa's positions computed in the region ---------


class Roberta(unittest.TestCase):
    def test_roberta_positions_computed_in_the_region(self):
        try:
            from transformers import RobertaConfig, RobertaForSequenceClassification
        except ImportError as e:  # pragma: no cover - the test venv has it
            self.skipTest(f"transformers: {e}")
        seq = 8
        # RoBERTa's positions start after padding_idx (1): a full row of 8
        # tokens reads position 9; 10 positions hold it, 9 do not.
        def model_of(positions):
            torch.manual_seed(0)
            config = RobertaConfig(vocab_size=40, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                                   intermediate_size=32, max_position_embeddings=positions, type_vocab_size=1,
                                   num_labels=3, attn_implementation="eager")
            return RobertaForSequenceClassification(config).eval()

        ids = torch.tensor([[0, 5, 6, 7, 8, 9, 10, 2], [0, 5, 6, 2, 1, 1, 1, 1]])
        labels = torch.tensor([0, 2])

        def step(model, ids):
            out = model(input_ids=ids, labels=labels)
            return out.loss

        for backend in ("aot_eager",) + (("inductor",) if FULL else ()):
            with self.subTest(backend):
                good, short = model_of(seq + 2), model_of(seq + 1)
                _intercept.set_level("off")
                torch._dynamo.reset()
                plain = torch.compile(good, backend=backend)
                want = step(plain, ids).detach()
                _intercept.set_level("on")
                eager = _run(lambda x, i: step(short, i), [torch.zeros(1), ids])
                self.assertIsInstance(eager, devassert.DeviceAssertPrevented, repr(eager))
                torch._dynamo.reset()
                guarded = torch.compile(good, backend=backend)
                self.assertTrue(torch.equal(step(guarded, ids).detach(), want))
                bad = torch.compile(short, backend=backend)
                got = _run(lambda x, i: step(bad, i), [torch.zeros(1), ids])
                self.assertIsInstance(got, devassert.DeviceAssertPrevented, repr(got))
                self.assertEqual(_facts(got.finding), _facts(eager.finding))
                _intercept.set_level("off")


if __name__ == "__main__":
    unittest.main()

"""Indices computed inside torch.compile's regions (Inductor, CPU): checked in
the compiled graph, with no host sync, and raised after the call.

One program holds a guarded op fed by each kind of computed index: a
`torch.where` that makes -1, an arithmetic on ids past the table, a gather of
gathered indices, labels computed in the region; a module (compiled with
`nn.Module.compile`) takes `torch.arange(T)` positions; a third program
computes advanced indices, an index_select index and an expanded scatter
index. Each case makes one of them bad: the compiled call must raise the finding with the eager rule, op,
bound, count and user line, and say that the op ran on substituted values.
On valid inputs the guarded compiled program must give the unguarded
compiled program's outputs and gradients bit for bit, and the guard must
cause no recompilation.

Run: python -m unittest test_compiled_inside (PYTHONPATH must hold python/).
"""

import inspect
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest
import warnings

import torch
import torch.nn.functional as F
from torch._dynamo.utils import counters

import devassert
from devassert._checks import deferred as _async
from devassert._compiled import inside as _compiled_inside
from devassert._guard import intercept as _intercept
from devassert._checks import violation as _violation
from devassert import _support


def program(ids, keep, table, near, x, perm, pick, logits, raw):
    masked = torch.where(keep, ids, -1)
    a = F.embedding(masked, table)  # line: where
    b = F.embedding(near + 3, table)  # line: shift
    inner = torch.gather(perm, 0, pick)
    g = torch.gather(x, 1, inner.view(-1, 1))  # line: gathered
    labels = raw - 1
    loss = F.cross_entropy(logits, labels)  # line: labels
    return a.sum() + b.sum() + g.sum() + loss


def indexing(x, rows, cols, sel, src):
    a = x[rows * 2, cols + 1]  # line: subscript
    b = torch.index_select(x, 0, sel - 1)  # line: index_select
    c = x.clone()
    c[rows + 2] = 0.0  # line: setitem
    d = torch.zeros(4, 5).scatter_add(0, (sel + 1).view(-1, 1).expand(-1, 5), src)  # line: scatter_add
    return a.sum() + b.sum() + c.sum() + d.sum()


def indexing_args():
    torch.manual_seed(0)
    return dict(x=torch.randn(4, 5), rows=torch.tensor([0, 1]), cols=torch.tensor([1, 2]), sel=torch.tensor([1, 2]), src=torch.randn(2, 5))


def setUpModule():
    # An older torch than the compiled checks support: said, never silent.
    reason = _support.compiled_skip_reason()
    if reason:
        raise unittest.SkipTest(reason)


# (the input changed, its value, rule, op, argument, line mark, count, min, max, bound)
INDEXING = [
    ("rows", torch.tensor([0, 2]), "DA111", "Tensor.__getitem__", "index (dimension 0)", "subscript", 1, 4, 4, {"low": -4, "high": 4}),
    ("cols", torch.tensor([4, -7]), "DA111", "Tensor.__getitem__", "index (dimension 1)", "subscript", 2, -6, 5, {"low": -5, "high": 5}),
    ("sel", torch.tensor([0, 1]), "DA101", "index_select", "index", "index_select", 1, -1, -1, {"low": 0, "high": 4}),
    ("sel", torch.tensor([2, 3]), "DA121", "scatter_add", "index", "scatter_add", 5, 4, 4, {"low": 0, "high": 4}),
]


class Positions(torch.nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.wte = torch.nn.Embedding(10, 4)
        self.wpe = torch.nn.Embedding(8, 4)

    def forward(self, idx):
        pos = torch.arange(0, idx.size(1), dtype=torch.long)
        return (self.wte(idx) + self.wpe(pos)).sum()  # line: positions


def line_of(fn, mark):
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, text in enumerate(lines) if f"# line: {mark}" in text)


def valid():
    torch.manual_seed(0)
    return dict(
        ids=torch.tensor([1, 2, 3]),
        keep=torch.tensor([True, True, True]),
        table=torch.randn(10, 3, requires_grad=True),
        near=torch.tensor([0, 6]),
        x=torch.randn(4, 5, requires_grad=True),
        perm=torch.tensor([4, 3, 2, 1, 0]),
        pick=torch.tensor([0, 1, 2, 3]),
        logits=torch.randn(3, 4, requires_grad=True),
        raw=torch.tensor([1, 2, 4]),
    )


# (case, the input changed, its value, rule, op, line mark, count, min, max, top cause)
CASES = [
    ("torch.where makes -1", "keep", torch.tensor([True, False, False]), "DA101", "embedding", "where", 2, -1, -1, "negative_index"),
    ("ids + 3 past the table", "near", torch.tensor([9, 6]), "DA101", "embedding", "shift", 1, 12, 12, "token_id_ge_vocab"),
    ("a gather of gathered indices", "perm", torch.tensor([7, 3, 2, 1, 9]), "DA121", "gather", "gathered", 1, 7, 7, "index_ge_dim_size"),
    ("labels - 1 gives -1 without ignore_index", "raw", torch.tensor([1, 0, 4]), "DA201", "cross_entropy", "labels", 1, -1, -1, "ignore_label_not_ignored"),
]


def outcome(fn, *args, **kwargs):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(*args, **kwargs)
    except Exception as e:  # noqa: BLE001
        return e


def run_with_grads(fn, args):
    """The output and the gradients of every input that requires them."""
    out = fn(**args)
    out.backward()
    return [out.detach()] + [args[k].grad for k in sorted(args) if args[k].requires_grad]


def recompiles():
    return dict(counters["frames"]), counters["stats"]["unique_graphs"]


class ComputedIndices(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.compiled = staticmethod(torch.compile(program, dynamic=False))
        # The unguarded compiled program first: the guard's wrappers are
        # then not in the graph dynamo guards (turning the guard on compiles
        # once more, as it would in a fresh process).
        cls.plain = run_with_grads(cls.compiled, valid())
        _intercept.set_level("on")
        cls.sites = _compiled_inside.stats["sites"]
        cls.guarded = run_with_grads(cls.compiled, valid())
        cls.sites = _compiled_inside.stats["sites"] - cls.sites

    @classmethod
    def tearDownClass(cls):
        _intercept.set_level("off")

    def test_each_computed_index_is_checked_inside_the_region(self):
        self.assertEqual(self.sites, 4)

    def test_valid_inputs_give_the_unguarded_outputs_and_gradients_bit_for_bit(self):
        self.assertEqual(len(self.guarded), len(self.plain))
        for got, want in zip(self.guarded, self.plain):
            self.assertTrue(torch.equal(got, want), (got, want))

    def test_every_case_raises_the_finding_with_its_rule_op_and_line(self):
        for case, name, value, rule, op, mark, count, low, high, cause in CASES:
            with self.subTest(case):
                got = outcome(self.compiled, **dict(valid(), **{name: value}))
                self.assertIsInstance(got, devassert.DeviceAssertPrevented, f"{got!r}")
                f = got.finding
                self.assertEqual(f["rule"], rule)
                self.assertEqual(f["evidence"]["op"], op)
                self.assertEqual((f["count"], f["value_min"], f["value_max"]), (count, low, high))
                self.assertEqual(f["location"]["file"], __file__)
                self.assertEqual(f["location"]["line"], line_of(program, mark))
                self.assertEqual(f["causes"][0]["id"], cause)
                self.assertTrue(f["evidence"]["compiled_region"])
                self.assertIn(f"[{rule} ", str(got))
                self.assertIn("replaced by 0", str(got))
                # The eager program's finding: the same facts (its positions
                # and sample are known only there).
                e = outcome(program, **dict(valid(), **{name: value})).finding
                for key in ("rule", "bound", "count", "value_min", "value_max", "location"):
                    self.assertEqual(f[key], e[key], key)
                self.assertEqual((f["evidence"]["op"], f["evidence"]["argument"], f["evidence"]["shape"]), (e["evidence"]["op"], e["evidence"]["argument"], e["evidence"]["shape"]))
                self.assertEqual([c["id"] for c in f["causes"]], [c["id"] for c in e["causes"]])
                # Reported once: the next valid call is clean.
                self.assertNotIsInstance(outcome(self.compiled, **valid()), Exception)

    def test_the_bound_is_the_eager_one(self):
        got = outcome(self.compiled, **dict(valid(), perm=torch.tensor([7, 3, 2, 1, 0])))
        self.assertEqual(got.finding["bound"], {"low": 0, "high": 5})
        self.assertEqual(got.finding["evidence"]["shape"], [4, 1])

    def test_the_guard_causes_no_recompilation(self):
        outcome(self.compiled, **valid())
        before = recompiles()
        for _case, name, value, *_ in CASES:
            outcome(self.compiled, **dict(valid(), **{name: value}))
            outcome(self.compiled, **valid())
        self.assertEqual(recompiles(), before)

    def test_inference_under_no_grad_is_checked_too(self):
        with torch.no_grad():
            got = outcome(self.compiled, **dict(valid(), raw=torch.tensor([0, 2, 4])))
            clean = outcome(self.compiled, **valid())
        self.assertIsInstance(got, devassert.DeviceAssertPrevented)
        self.assertEqual(got.finding["rule"], "DA201")
        self.assertTrue(torch.equal(clean, self.plain[0]))

    def test_on_an_accelerator_the_finding_waits_for_the_next_call(self):
        # FAKE_DEVICE: the counter's copy and its event, as on CUDA, on CPU.
        _async.FAKE_DEVICE = True
        try:
            fn = torch.compile(lambda ids, table: F.embedding(ids * 2, table).sum(), dynamic=False)
            table = torch.randn(10, 3)
            first = outcome(fn, torch.tensor([1, 7]), table)
            second = outcome(fn, torch.tensor([1, 2]), table)
        finally:
            _async.FAKE_DEVICE = False
        self.assertNotIsInstance(first, Exception)
        self.assertIsInstance(second, devassert.DeviceAssertPrevented)
        self.assertEqual((second.finding["count"], second.finding["value_min"]), (1, 14))

    def test_at_the_async_level_an_input_index_on_an_accelerator_is_checked_inside(self):
        _async.FAKE_DEVICE = True
        _intercept.set_level("async")
        try:
            fn = torch.compile(lambda ids, table: F.embedding(ids, table).sum(), dynamic=False, backend="aot_eager")
            table = torch.randn(10, 3)
            # No boundary check (it would sync): the op runs on a valid id, the next call raises.
            first = outcome(fn, torch.tensor([0, 10]), table)
            second = outcome(fn, torch.tensor([0, 1]), table)
        finally:
            _intercept.set_level("on")
            _async.FAKE_DEVICE = False
            _compiled_inside._pending.clear()
        self.assertNotIsInstance(first, Exception)
        self.assertIsInstance(second, devassert.DeviceAssertPrevented, f"{second!r}")
        self.assertEqual((second.finding["rule"], second.finding["value_max"]), ("DA101", 10))

    def test_on_an_accelerator_the_next_guarded_op_or_the_exit_raises_it(self):
        _async.FAKE_DEVICE = True
        try:
            fn = torch.compile(lambda ids, table: F.embedding(ids - 1, table).sum(), dynamic=False, backend="aot_eager")
            table = torch.randn(10, 3)
            first = outcome(fn, torch.tensor([0, 3]), table)
            # An eager guarded op on an accelerator (PRECHECK_CPU: a CPU
            # tensor takes that path) polls the async level's queue.
            _violation.PRECHECK_CPU = True
            eager = outcome(torch.gather, table, 0, torch.zeros(1, 3, dtype=torch.long))
        finally:
            _async.FAKE_DEVICE = False
            _violation.PRECHECK_CPU = False
            _compiled_inside._pending.clear()
        self.assertNotIsInstance(first, Exception)
        self.assertIsInstance(eager, devassert.DeviceAssertPrevented)
        self.assertEqual((eager.finding["rule"], eager.finding["value_min"]), ("DA101", -1))
        code = textwrap.dedent(
            """
            import torch, torch.nn.functional as F
            from devassert._checks import deferred as _async; from devassert._guard import intercept as _intercept
            _async.FAKE_DEVICE = True
            _intercept.set_level("on")
            fn = torch.compile(lambda ids, table: F.embedding(ids + 9, table).sum(), dynamic=False, backend="aot_eager")
            fn(torch.tensor([0, 3]), torch.randn(10, 3))
            print("returned")
            """
        )
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=dict(os.environ), timeout=600)
        self.assertIn("returned", out.stdout)
        self.assertIn("DeviceAssertPrevented", out.stderr)
        self.assertIn("[DA101 ", out.stderr)


class AOTAutogradCache(unittest.TestCase):
    def test_a_checked_graph_is_cached_and_a_cached_one_is_checked(self):
        # AOTAutograd caches a guarded graph (its check calls are named by
        # what they trace into); a second process finds it there, traces no
        # check, and still stops a bad index computed in the region.
        code = textwrap.dedent(
            """
            import torch
            from torch._dynamo.utils import counters
            from devassert._guard import intercept as _intercept
            _intercept.set_level("on")
            table = torch.nn.Parameter(torch.randn(10, 3))
            fn = torch.compile(lambda x, i: torch.embedding(table, i + 3).sum() + torch.gather(x, 1, i[None].expand(4, 2)).sum())
            fn(torch.randn(4, 5, requires_grad=True), torch.tensor([1, 2])).backward()
            print(sorted(k for k in counters["aot_autograd"] if k.startswith("autograd_cache")))
            try:
                fn(torch.randn(4, 5, requires_grad=True), torch.tensor([1, 8]))
            except Exception as e:
                print(type(e).__name__, e.finding["rule"], e.finding["value_max"], e.finding["bound"])
            # Two index arguments: which one was bad comes from the counter,
            # not from a trace this process never ran (6 is past both).
            pair = torch.compile(lambda y, i, j: y[i + 0, j + 0].sum())
            pair(torch.randn(4, 6), torch.tensor([0, 1]), torch.tensor([1, 2]))
            try:
                pair(torch.randn(4, 6), torch.tensor([0, 1]), torch.tensor([1, 6]))
            except Exception as e:
                print(e.finding["evidence"]["argument"], e.finding["bound"])
            """
        )
        with tempfile.TemporaryDirectory() as cache:
            env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=cache, TORCHINDUCTOR_FX_GRAPH_CACHE="1", TORCHINDUCTOR_AUTOGRAD_CACHE="1")
            runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=600) for _ in range(2)]
        stopped = ["DeviceAssertPreventedRuntimeError DA101 11 {'low': 0, 'high': 10}", "index (dimension 1) {'low': -6, 'high': 6}"]
        first, second = (r.stdout.splitlines() for r in runs)
        self.assertEqual(first, ["['autograd_cache_miss', 'autograd_cache_saved']", *stopped], runs[0].stderr[-3000:])
        self.assertEqual(second, ["['autograd_cache_hit']", *stopped], runs[1].stderr[-3000:])


class Indexing(unittest.TestCase):
    def test_advanced_indices_index_select_and_an_expanded_scatter_index(self):
        plain = torch.compile(indexing, dynamic=False)(**indexing_args())
        _intercept.set_level("on")
        try:
            fn = torch.compile(indexing, dynamic=False)
            self.assertTrue(torch.equal(fn(**indexing_args()), plain))
            got = [outcome(fn, **dict(indexing_args(), **{name: value})) for name, value, *_ in INDEXING]
        finally:
            _intercept.set_level("off")
        for e, (_n, _v, rule, op, argument, mark, count, low, high, bound) in zip(got, INDEXING):
            with self.subTest(f"{op} {argument}"):
                self.assertIsInstance(e, devassert.DeviceAssertPrevented, f"{e!r}")
                f = e.finding
                self.assertEqual((f["rule"], f["evidence"]["op"], f["evidence"]["argument"], f["bound"]), (rule, op, argument, bound))
                # The count of an expanded index is that of every element, as in eager code.
                self.assertEqual((f["count"], f["value_min"], f["value_max"]), (count, low, high))
                self.assertEqual(f["location"]["line"], line_of(indexing, mark))


class ArangePositions(unittest.TestCase):
    def test_positions_past_the_table_and_a_graph_break(self):
        model = Positions()
        model.compile(dynamic=False)
        _intercept.set_level("on")
        try:
            ok = outcome(model, torch.tensor([[1, 2, 3]]))
            got = outcome(model, torch.randint(0, 10, (1, 12)))
            # fullgraph=False: the index after a graph break is in a second graph.
            broken = torch.compile(broken_positions, dynamic=False)
            after_break = outcome(broken, torch.randn(8, 2), torch.tensor([0, 1, 2, 3, 4]))
        finally:
            _intercept.set_level("off")
        self.assertNotIsInstance(ok, Exception)
        self.assertIsInstance(got, devassert.DeviceAssertPrevented, f"{got!r}")
        f = got.finding
        self.assertEqual((f["rule"], f["evidence"]["op"], f["bound"]), ("DA101", "embedding", {"low": 0, "high": 8}))
        self.assertEqual((f["count"], f["value_min"], f["value_max"]), (4, 8, 11))
        self.assertEqual(f["location"]["line"], line_of(Positions.forward, "positions"))
        self.assertEqual(f["causes"][0]["id"], "seq_len_gt_max_positions")
        self.assertIsInstance(after_break, devassert.DeviceAssertPrevented, f"{after_break!r}")
        self.assertEqual(after_break.finding["location"]["line"], line_of(broken_positions, "after break"))


    def test_dynamic_shapes_record_the_sizes_of_each_call(self):
        table = torch.randn(10, 3)
        fn = torch.compile(dynamic_positions, dynamic=True)
        _intercept.set_level("on")
        try:
            outcome(fn, torch.ones(4, dtype=torch.long), table)
            before = recompiles()
            got = [outcome(fn, torch.ones(n, dtype=torch.long), table) for n in (12, 5, 11)]
            # Labels that are graph inputs, with logits of a dynamic shape: the
            # boundary cannot stand them in, so the labels are checked inside.
            labels = outcome(fn, torch.tensor([1, 0, 7, 2, 1]), table)
            after = recompiles()
        finally:
            _intercept.set_level("off")
        self.assertEqual(after, before)
        self.assertIsInstance(got[0], devassert.DeviceAssertPrevented, f"{got[0]!r}")
        self.assertNotIsInstance(got[1], Exception)
        self.assertIsInstance(got[2], devassert.DeviceAssertPrevented, f"{got[2]!r}")
        self.assertEqual([(g.finding["count"], g.finding["value_max"], g.finding["evidence"]["shape"]) for g in (got[0], got[2])], [(2, 11, [12]), (1, 10, [11])])
        self.assertIsInstance(labels, devassert.DeviceAssertPrevented, f"{labels!r}")
        self.assertEqual((labels.finding["rule"], labels.finding["value_max"], labels.finding["bound"]), ("DA201", 7, {"low": 0, "high": 3}))
        self.assertEqual(labels.finding["location"]["line"], line_of(dynamic_positions, "dynamic labels"))


def dynamic_positions(ids, table):
    logits = torch.ones(ids.size(0), 3) * table.sum()
    loss = F.cross_entropy(logits, ids)  # line: dynamic labels
    return F.embedding(torch.arange(ids.size(0)), table).sum() + loss


def broken_positions(table, steps):
    first = steps * 1
    torch._dynamo.graph_break()
    return F.embedding(first + 4, table).sum()  # line: after break


if __name__ == "__main__":
    unittest.main()

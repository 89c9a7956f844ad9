"""The guard's cases under torch.compile (Inductor, CPU): the same finding
compiled and eager.

The invalid values of test_cases.py (ids past the table and negative ids,
an ignore label 255 that is not ignored, gather and advanced indices past
their dimension, the true count / min / max of many bad ids) and one case for
every other range-checked op are run through one program, compiled once
(`dynamic=False`, small shapes: compiling is the slow part), and eagerly.
Each case makes one argument bad; the compiled call must raise what the eager
call raises (type, torch's message, rule, values, count, argument, line)
before its kernels run, and the guard must cause no recompilation.

Run: python -m unittest test_compiled (PYTHONPATH must hold python/).
"""

import unittest
import warnings

import torch
import torch.nn.functional as F
from torch._dynamo.utils import counters

import devassert
from devassert import _compiled, _intercept


def program(ids, table, many_ids, small_table, logits, labels, x, idx, idx2, rows, cols, sel, flat, add_rows, src, classes, put_rows):
    h = F.embedding(ids, table)
    many = F.embedding(many_ids, small_table)
    loss = F.cross_entropy(logits, labels)
    nll = F.nll_loss(logits.log_softmax(1), labels)
    g = torch.gather(x, 1, idx.view(-1, 1))
    m = x.gather(1, idx2.unsqueeze(1))
    s = x[rows, cols]
    chosen = torch.index_select(x, 0, sel)
    t = torch.take(x, flat)
    a = x.index_add(0, add_rows, src)
    o = F.one_hot(classes, 3)
    y = x.clone()
    y[put_rows] = 0.0
    return y.sum() + h.sum() + many.sum() + loss + nll + g.sum() + m.sum() + s.sum() + chosen.sum() + t.sum() + a.sum() + o.sum()


def valid():
    torch.manual_seed(0)
    return dict(
        ids=torch.tensor([[1, 2]]),
        table=torch.randn(10, 3),
        many_ids=torch.arange(200).unsqueeze(0) % 128,
        small_table=torch.randn(128, 2),
        logits=torch.randn(3, 4),
        labels=torch.tensor([0, 1, 2]),
        x=torch.arange(20.0).reshape(4, 5),
        idx=torch.tensor([0, 1, 2, 3]),
        idx2=torch.tensor([0, 1, 2, 3]),
        rows=torch.tensor([0, 1]),
        cols=torch.tensor([1, 2]),
        sel=torch.tensor([0, 3]),
        flat=torch.tensor([0, 19]),
        add_rows=torch.tensor([0, 3]),
        src=torch.randn(2, 5),
        classes=torch.tensor([0, 2]),
        put_rows=torch.tensor([1, 2]),
    )


# (case, the bad argument, its value, rule, values reported)
CASES = [
    ("ids past the table", "ids", torch.tensor([[1, 12]]), "DA101", [12]),
    # pytorch#183608: compiled code and eager code disagree on a negative id.
    ("a negative id", "ids", torch.tensor([[1, -1]]), "DA101", [-1]),
    ("the true count, min and max", "many_ids", torch.arange(200).unsqueeze(0), "DA101", None),
    ("an ignore label that is not ignored", "labels", torch.tensor([0, 255, 2]), "DA201", [255]),
    ("a negative label", "labels", torch.tensor([0, -5, 2]), "DA201", [-5]),
    ("a gather index through a view", "idx", torch.tensor([0, 9, 1, 2]), "DA121", [9]),
    ("a negative gather index of the method", "idx2", torch.tensor([0, 1, -7, 2]), "DA121", [-7]),
    ("the second of two indices, against its own dimension", "cols", torch.tensor([1, 7]), "DA111", [7]),
    ("an index_select index", "sel", torch.tensor([0, 4]), "DA101", [4]),
    ("a take index", "flat", torch.tensor([0, 20]), "DA112", [20]),
    ("an index_add index", "add_rows", torch.tensor([0, 5]), "DA113", [5]),
    ("a class past num_classes", "classes", torch.tensor([0, 3]), "DA122", [3]),
    ("a __setitem__ index", "put_rows", torch.tensor([1, -6]), "DA111", [-6]),
]


def outcome(fn, args):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(**args)
    except Exception as e:  # noqa: BLE001
        return e


class CompiledAsEager(unittest.TestCase):
    compiled = None

    @classmethod
    def setUpClass(cls):
        # The guard is on before the first call compiles the program.
        _intercept.set_level("on")
        cls.compiled = staticmethod(torch.compile(program, dynamic=False))

    @classmethod
    def tearDownClass(cls):
        _intercept.set_level("off")

    def test_valid_inputs_give_the_eager_result(self):
        torch.testing.assert_close(outcome(self.compiled, valid()), outcome(program, valid()), rtol=1e-5, atol=1e-5)

    def test_every_case_raises_the_eager_finding_before_the_kernels(self):
        for case, name, value, rule, values in CASES:
            with self.subTest(case):
                args = dict(valid(), **{name: value})
                eager = outcome(program, args)
                got = outcome(self.compiled, args)
                self.assertIsInstance(eager, devassert.DeviceAssertPrevented, f"eager: {eager!r}")
                self.assertIsInstance(got, devassert.DeviceAssertPrevented, f"compiled: {got!r}")
                self.assertIs(type(got), type(eager))
                self.assertEqual(str(got).splitlines()[0], str(eager).splitlines()[0])
                f, e = got.finding, eager.finding
                self.assertEqual(f["rule"], rule)
                for key in ("rule", "values", "count", "value_min", "value_max", "bound", "locations"):
                    self.assertEqual(f.get(key), e.get(key), key)
                self.assertEqual(f["evidence"]["argument"], e["evidence"]["argument"])
                self.assertEqual((f["location"]["file"], f["location"]["line"]), (e["location"]["file"], e["location"]["line"]))
                self.assertEqual([c["id"] for c in f["causes"]], [c["id"] for c in e["causes"]])
                if values is not None:
                    self.assertEqual(f["values"], values)

    def test_the_count_min_and_max_are_those_of_every_bad_id(self):
        got = outcome(self.compiled, dict(valid(), many_ids=torch.arange(200).unsqueeze(0)))
        f = got.finding
        self.assertEqual((f["count"], f["value_min"], f["value_max"]), (72, 128, 199))

    def test_the_ignore_label_cause_survives_compilation(self):
        got = outcome(self.compiled, dict(valid(), labels=torch.tensor([0, 255, 2])))
        self.assertEqual(got.finding["causes"][0]["id"], "ignore_label_not_ignored")
        self.assertIsInstance(got, IndexError)

    def test_the_guard_causes_no_recompilation(self):
        outcome(self.compiled, valid())
        frames, graphs = dict(counters["frames"]), counters["stats"]["unique_graphs"]
        for case, name, value, *_ in CASES:
            outcome(self.compiled, dict(valid(), **{name: value}))
            outcome(self.compiled, valid())
        self.assertEqual(dict(counters["frames"]), frames)
        self.assertEqual(counters["stats"]["unique_graphs"], graphs)
        # (Turning the guard off recompiles once: dynamo guards the identity
        # of torch.gather & co, which the guard's wrappers replace.)

    def test_every_guarded_op_of_the_program_is_checked_at_the_boundary(self):
        outcome(self.compiled, valid())
        # 12 calls of guarded ops, each with an index that is a graph input.
        self.assertGreaterEqual(_compiled.stats["checked_nodes"], 12)

    def test_without_the_guard_the_compiled_kernel_asserts_on_its_temporaries(self):
        _intercept.set_level("off")
        try:
            got = outcome(self.compiled, dict(valid(), ids=torch.tensor([[1, -1]])))
        finally:
            _intercept.set_level("on")
        self.assertNotIsInstance(got, devassert.DeviceAssertPrevented)
        self.assertRegex(str(got), r"index out of bounds: 0 <= tmp\d+ < 10")


class ComputedIndices(unittest.TestCase):
    def test_an_index_computed_inside_the_region_is_left_to_inductor(self):
        def shifted(ids, table):
            return F.embedding(ids + 1, table)

        _intercept.set_level("on")
        try:
            fn = torch.compile(shifted, dynamic=False, backend="aot_eager")
            got = outcome(fn, dict(ids=torch.tensor([1, 9]), table=torch.randn(10, 2)))
        finally:
            _intercept.set_level("off")
        # Not a boundary finding: the index is not a graph input.
        self.assertNotIsInstance(got, devassert.DeviceAssertPrevented)
        self.assertIsInstance(got, IndexError)


if __name__ == "__main__":
    unittest.main()

"""The guard's cases under torch.compile (Inductor, CPU): the same finding
compiled and eager.

Every case of test_cases.py whose op can appear in a compiled region, and one
case for every other guarded op and form (function, method, keyword
arguments, in-place variant), runs compiled and eagerly. The cases share few
programs, each compiled once (`dynamic=False`, small shapes: compiling is the
slow part); each case makes one argument bad (same shape, so nothing
recompiles), and the compiled call must raise what the eager call raises
(type, torch's message, rule, values, count, argument, line, causes) before
its kernels run, with no recompilation; valid inputs give the eager result.

Where the finding comes from, compiled:
- at the region's boundary (`_compiled.py`), for an op whose checked argument
  is a graph input or a constant of the graph (`torch.tensor([...])`,
  `np.int64(255)`): READS, WRITES, the Tiny model of test_async.py, the deep
  library stack, the dataset sample (a subprocess);
- from the eager guard, for an op dynamo does not compile: ops with a
  data-dependent output shape graph-break (bincount, repeat_interleave, an
  index after a boolean mask), so does ctc_loss (BREAKS, asserted to
  break), and a constant list
  index past its dimension, which dynamo's tracing rejects before any graph
  exists (the frame then runs eagerly).

Cases of test_cases.py not run compiled, and why:
- shape errors (a gather index of the wrong rank, multi_margin_loss on an
  empty input, index_select on an empty dimension, a mask after an Ellipsis)
  carry no finding: torch's error stands. Dynamo raises the first two while
  tracing, wrapped (TorchRuntimeError), before any guard code runs; Inductor
  fails to lower the third (InductorError); the mask breaks the graph and
  keeps torch's type and message (the last two asserted here: no finding);
- an op writing its own index (`ind.index_add_(0, ind, ...)`, `gather(...,
  out=ind)`): torch's overlap error, not a finding; compiled code
  functionalizes the write (no error at all) or fails while tracing;
- a finding inside a DataLoader worker: the op is in the dataset's
  __getitem__, which runs in the worker, not in a compiled region;
- the CUDA graph capture cases need a device; the NestedTensor fast path and
  the pickling / warnings / transparency cases test no finding.

Run: python -m unittest test_compiled (PYTHONPATH must hold python/).
"""

import json
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest
import warnings
from unittest import mock

import numpy as np
import torch
import torch.nn.functional as F
from torch._dynamo.utils import counters

import devassert
from devassert._checks import deferred as _async
from devassert._checks import index as _check_index
from devassert._compiled import boundary as _compiled
from devassert._guard import intercept as _intercept
from devassert import _support


def setUpModule():
    # An older torch than the compiled checks support: said, never silent.
    reason = _support.compiled_skip_reason()
    if reason:
        raise unittest.SkipTest(reason)


HERE = os.path.dirname(os.path.abspath(__file__))
PYTHONPATH = os.path.abspath(os.path.join(HERE, "..", "..", "..", "..", "python"))

# Compiled and eager RNG draw the same values (bernoulli, multinomial).
torch._inductor.config.fallback_random = True


def reads(ids, table, many_ids, small_table, logits, labels, labels255, ignore, x, idx, idx2, gkw, rows, cols, sel, flat, add_rows, src, classes, put_rows, np_cols, y6, last):
    h = F.embedding(ids, table)
    many = F.embedding(many_ids, small_table)
    loss = F.cross_entropy(logits, labels)
    nll = F.nll_loss(logits.log_softmax(1), labels)
    # An ignore label as a graph input and as a numpy constant (valid programs of test_cases.py).
    ign = F.cross_entropy(logits, labels255, ignore_index=ignore, reduction="sum", label_smoothing=0.1)
    ign_np = F.nll_loss(logits.log_softmax(1), labels255, ignore_index=np.int64(255))
    g = torch.gather(x, 1, idx.view(-1, 1))
    m = x.gather(1, idx2.unsqueeze(1))
    k = torch.gather(input=x, dim=1, index=gkw)
    s = x[rows, cols]
    chosen = torch.index_select(x, 0, sel)
    t = torch.take(x, flat)
    a = x.index_add(0, add_rows, src)
    o = F.one_hot(classes, 3)
    y = x.clone()
    y[put_rows] = 0.0
    n = x[:, np_cols]  # a numpy index: dynamo makes it a tensor input
    b = y6[torch.tensor(True), last]  # a 0-d bool key consumes no dimension
    lst = y6[[[0, 1], [1, 0]]]  # a short list of sequences is a tuple of items
    total = h.sum() + many.sum() + loss + nll + ign + ign_np + g.sum() + m.sum() + k.sum() + s.sum() + chosen.sum()
    return total + t.sum() + a.sum() + o.sum() + y.sum() + n.sum() + b.sum() + lst.sum()


def reads_valid():
    torch.manual_seed(0)
    return dict(
        ids=torch.tensor([[1, 2]]),
        table=torch.randn(10, 3),
        many_ids=torch.arange(200).unsqueeze(0) % 128,
        small_table=torch.randn(128, 2),
        logits=torch.randn(3, 4),
        labels=torch.tensor([0, 1, 2]),
        labels255=torch.tensor([0, 255, 2]),
        ignore=torch.tensor(255),
        x=torch.arange(20.0).reshape(4, 5),
        idx=torch.tensor([0, 1, 2, 3]),
        idx2=torch.tensor([0, 1, 2, 3]),
        gkw=torch.tensor([[0], [4], [1], [2]]),
        rows=torch.tensor([0, 1]),
        cols=torch.tensor([1, 2]),
        sel=torch.tensor([0, 3, 1, 2, 0]),
        flat=torch.tensor([0, 19]),
        add_rows=torch.tensor([0, 3]),
        src=torch.randn(2, 5),
        classes=torch.tensor([0, 2]),
        put_rows=torch.tensor([1, 2]),
        np_cols=np.array([0, 4]),
        y6=torch.arange(12.0).reshape(6, 2),
        last=torch.tensor([5]),
    )


def writes(x, acc, src, rows2, i_sc, i_scv, i_sckw, i_sa, i_sa_, i_sr, i_sr_, i_put, i_put_, i_ip, i_ipr, i_ipc, i_cp, i_cp_, i_fill, i_fill_, i_red, i_red_, i_add_, i_acc, scores, mm_target, probs, eb_ids, eb_w, eb_offsets, bce_p, bce_t, bern_p, rate, coins):
    y = x.clone()
    out = torch.scatter(x, 1, i_sc, src).sum() + x.scatter(1, i_scv, 2.0).sum()
    y.scatter_(dim=1, index=i_sckw, src=src)
    out = out + torch.scatter_add(x, 1, i_sa, src).sum()
    y.scatter_add_(1, i_sa_, src)
    out = out + x.scatter_reduce(1, i_sr, src, reduce="amax").sum()
    y.scatter_reduce_(1, i_sr_, src, "sum", include_self=False)
    out = out + torch.put(x, i_put, src[0, :2]).sum()
    y.put_(i_put_, src[0, :2], accumulate=True)
    out = out + torch.index_put(x, (i_ip,), torch.tensor(1.0)).sum()
    y.index_put_((i_ipr, i_ipc), torch.tensor(-1.0))
    out = out + x.index_copy(0, i_cp, rows2).sum()
    y.index_copy_(0, i_cp_, rows2)
    out = out + torch.index_fill(x, 1, i_fill, -1.0).sum()
    y.index_fill_(1, i_fill_, -1.0)
    out = out + x.index_reduce(0, i_red, rows2, "prod").sum()
    y.index_reduce_(0, i_red_, rows2, "amax", include_self=False)
    y.index_add_(0, i_add_, rows2, alpha=2)
    acc.index_add_(0, i_acc, rows2)  # a graph input written in place: unchanged when a case fails
    # Checks of values, not ranges.
    out = out + F.multi_margin_loss(scores, mm_target)
    out = out + torch.multinomial(probs, 1).sum()
    out = out + F.embedding_bag(eb_ids, eb_w, eb_offsets).sum()
    out = out + F.binary_cross_entropy(bce_p, bce_t)
    out = out + torch.bernoulli(bern_p).sum() + torch.poisson(rate).sum()
    # A float p, or none (0.5): the tensor's own values are not probabilities (valid programs of test_cases.py).
    out = out + torch.bernoulli(coins, 0.0).sum() + (coins.clone().bernoulli_() * 0).sum()
    return out + y.sum()


def writes_valid():
    torch.manual_seed(0)
    ind = torch.tensor([[0, 1], [1, 2], [2, 3], [3, 4]])
    return dict(
        x=torch.arange(20.0).reshape(4, 5),
        acc=torch.zeros(4, 5),
        src=torch.randn(4, 2),
        rows2=torch.randn(2, 5),
        **{name: ind.clone() for name in ("i_sc", "i_scv", "i_sckw", "i_sa", "i_sa_", "i_sr", "i_sr_")},
        **{name: torch.tensor([0, 19]) for name in ("i_put", "i_put_")},
        **{name: torch.tensor([1, 3]) for name in ("i_ip", "i_ipr", "i_ipc", "i_cp", "i_cp_", "i_red", "i_red_", "i_add_", "i_acc")},
        **{name: torch.tensor([0, -5]) for name in ("i_fill", "i_fill_")},  # index_fill wraps negatives
        scores=torch.randn(3, 4),
        mm_target=torch.tensor([0, 1, 3]),
        probs=torch.tensor([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]]),
        eb_ids=torch.tensor([1, 2, 3, 4]),
        eb_w=torch.randn(10, 2),
        eb_offsets=torch.tensor([0, 2]),
        bce_p=torch.tensor([0.2, 0.9]),
        bce_t=torch.tensor([0.0, 1.0]),
        bern_p=torch.tensor([0.0, 1.0]),
        rate=torch.tensor([0.0, 0.0]),
        coins=torch.tensor([3.0, -2.0, 7.5]),
    )


def breaks(counts, x, reps, cube, mask, after_mask, log_probs, targets):
    c = torch.bincount(counts)
    r = x.repeat_interleave(reps, dim=0)
    m = cube[mask, after_mask]
    ctc = F.ctc_loss(log_probs, targets, torch.tensor([5]), torch.tensor([2]))
    return c.sum() + r.sum() + m.sum() + ctc


def breaks_valid():
    return dict(
        counts=torch.tensor([0, 3, 1]),
        x=torch.ones(3, 2),
        reps=torch.tensor([1, 2, 0]),
        cube=torch.arange(24).reshape(2, 3, 4),
        mask=torch.tensor([[True, False, True], [False, False, True]]),
        after_mask=torch.tensor([3, 3, 3]),
        log_probs=torch.randn(5, 1, 4, generator=torch.Generator().manual_seed(0)).log_softmax(2),
        targets=torch.tensor([[1, 2]]),
    )


def idx(*v):
    return torch.tensor(v)


W = [[0, 1], [1, 2], [2, 3], [3, 4]]

# program: (function, valid inputs, cases); a case: (what, bad argument, its value, rule, values reported)
PROGRAMS = {
    "reads": (
        reads,
        reads_valid,
        [
            ("ids past the table", "ids", idx([1, 12]), "DA101", [12]),
            # pytorch#183608: compiled code and eager code disagree on a negative id.
            ("a negative id", "ids", idx([1, -1]), "DA101", [-1]),
            ("the true count, min and max", "many_ids", torch.arange(200).unsqueeze(0), "DA101", None),
            ("an ignore label that is not ignored", "labels", idx(0, 255, 2), "DA201", [255]),
            ("a negative label", "labels", idx(0, -5, 2), "DA201", [-5]),
            ("a label past an ignore_index given as a tensor", "labels255", idx(0, 256, 2), "DA201", [256]),
            ("a gather index through a view", "idx", idx(0, 9, 1, 2), "DA121", [9]),
            ("a negative gather index of the method", "idx2", idx(0, 1, -7, 2), "DA121", [-7]),
            ("a gather index given by keyword", "gkw", idx([0], [5], [1], [2]), "DA121", [5]),
            ("the second of two indices, against its own dimension", "cols", idx(1, 7), "DA111", [7]),
            ("index_select values, their counts and the true count", "sel", idx(1, 12, 12, -11, 3), "DA101", [-11, 12]),
            ("a take index", "flat", idx(0, 20), "DA112", [20]),
            ("an index_add index", "add_rows", idx(0, 5), "DA113", [5]),
            ("a class past num_classes", "classes", idx(0, 3), "DA122", [3]),
            ("a __setitem__ index", "put_rows", idx(1, -6), "DA111", [-6]),
            ("a numpy integer index", "np_cols", np.array([0, 5]), "DA111", [5]),
            ("an index after a 0-d bool key", "last", idx(6), "DA111", [6]),
        ],
    ),
    "writes": (
        writes,
        writes_valid,
        [
            ("a scatter index", "i_sc", idx([0, 1], [1, 5], [2, 3], [3, 4]), "DA121", [5]),
            ("a scatter index, value form", "i_scv", idx([0, 1], [1, 2], [-1, 3], [3, 4]), "DA121", [-1]),
            ("an in-place scatter index by keyword", "i_sckw", idx([0, 1], [1, 2], [2, 3], [3, 9]), "DA121", [9]),
            ("a scatter_add index", "i_sa", idx([0, 5], *W[1:]), "DA121", [5]),
            ("an in-place scatter_add index", "i_sa_", idx(*W[:3], [3, 6]), "DA121", [6]),
            ("a scatter_reduce index", "i_sr", idx([0, -2], *W[1:]), "DA121", [-2]),
            ("an in-place scatter_reduce index", "i_sr_", idx(*W[:2], [2, 7], W[3]), "DA121", [7]),
            ("a put index", "i_put", idx(0, 20), "DA112", [20]),
            ("an in-place put index", "i_put_", idx(-21, 0), "DA112", [-21]),
            ("an index_put index", "i_ip", idx(1, 4), "DA111", [4]),
            ("the second index of an in-place index_put", "i_ipc", idx(1, 5), "DA111", [5]),
            ("an index_copy index", "i_cp", idx(1, 4), "DA114", [4]),
            ("an in-place index_copy index", "i_cp_", idx(-1, 3), "DA114", [-1]),
            ("an index_fill index", "i_fill", idx(0, -6), "DA115", [-6]),
            ("an in-place index_fill index", "i_fill_", idx(5, 0), "DA115", [5]),
            ("an index_reduce index", "i_red", idx(1, 4), "DA113", [4]),
            ("an in-place index_reduce index", "i_red_", idx(-1, 3), "DA113", [-1]),
            ("an in-place index_add index", "i_add_", idx(1, 8), "DA113", [8]),
            ("an index_add index into a graph input", "i_acc", idx(4, 3), "DA113", [4]),
            ("a multi_margin_loss target", "mm_target", idx(0, 4, 3), "DA206", [4]),
            ("NaN probabilities", "probs", torch.tensor([[0.5, float("nan"), 0.0], [1.0, 0.0, 0.0]]), "DA301", ["nan"]),
            ("embedding_bag offsets that decrease", "eb_offsets", idx(3, 2), "DA103", None),
            ("embedding_bag ids past the table", "eb_ids", idx(1, 2, 10, 4), "DA102", [10]),
            ("a binary_cross_entropy input outside [0, 1]", "bce_p", torch.tensor([0.2, 1.5]), "DA203", None),
            ("a binary_cross_entropy target outside [0, 1]", "bce_t", torch.tensor([0.0, 2.0]), "DA204", None),
            ("a bernoulli probability outside [0, 1]", "bern_p", torch.tensor([0.0, 1.5]), "DA303", [1.5]),
            ("a negative poisson rate", "rate", torch.tensor([0.0, -1.0]), "DA304", [-1.0]),
        ],
    ),
    "breaks": (
        breaks,
        breaks_valid,
        [
            ("a negative bincount value", "counts", idx(0, -1, 2), "DA123", [-1]),
            ("a negative repeat count", "reps", idx(1, -2, 0), "DA501", [-2]),
            ("an index after a 2-D mask, against its own dimension", "after_mask", idx(4, 0, 0), "DA111", [4]),
            ("a ctc target past the classes", "targets", idx([1, 4]), "DA205", [4]),
        ],
    ),
}

BOUNDARY = ("reads", "writes")  # checked at the boundary; "breaks": by the eager guard


def outcome(fn, args):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(**args)
    except Exception as e:  # noqa: BLE001
        return e


def bad(valid, name, value):
    return dict(valid(), **{name: value})


class Compiled(unittest.TestCase):
    compiled = {}

    @classmethod
    def setUpClass(cls):
        # The guard is on before the first call compiles the programs.
        _intercept.set_level("on")
        cls.compiled = {name: torch.compile(fn, dynamic=False) for name, (fn, *_) in PROGRAMS.items()}

    @classmethod
    def tearDownClass(cls):
        _intercept.set_level("off")

    def assert_same_finding(self, got, eager, rule=None, values=None):
        self.assertIsInstance(eager, devassert.DeviceAssertPrevented, f"eager: {eager!r}")
        self.assertIsInstance(got, devassert.DeviceAssertPrevented, f"compiled: {got!r}")
        self.assertIs(type(got), type(eager))
        self.assertEqual(str(got).splitlines()[0], str(eager).splitlines()[0])
        f, e = got.finding, eager.finding
        if rule is not None:
            self.assertEqual(f["rule"], rule)
        for key in ("rule", "values", "value_counts", "count", "value_min", "value_max", "bound", "locations", "samples"):
            self.assertEqual(f.get(key), e.get(key), key)
        self.assertEqual(f["evidence"]["argument"], e["evidence"]["argument"])
        self.assertEqual((f["location"]["file"], f["location"]["line"]), (e["location"]["file"], e["location"]["line"]))
        self.assertEqual([c["id"] for c in f["causes"]], [c["id"] for c in e["causes"]])
        self.assertEqual(f["fixes"], e["fixes"])
        if values is not None:
            self.assertEqual(f["values"], values)

    def test_valid_inputs_give_the_eager_result(self):
        for name, (fn, valid, _) in PROGRAMS.items():
            with self.subTest(name):
                eager_args, args = valid(), valid()
                eager, got = outcome(fn, eager_args), outcome(self.compiled[name], args)
                self.assertNotIsInstance(eager, Exception)
                torch.testing.assert_close(got, eager, rtol=1e-5, atol=1e-5)
                for arg, value in eager_args.items():  # inputs written in place too
                    torch.testing.assert_close(args[arg], value, rtol=1e-5, atol=1e-5, msg=arg)

    def test_every_case_raises_the_eager_finding_before_the_kernels(self):
        for name, (fn, valid, cases) in PROGRAMS.items():
            for case, arg, value, rule, values in cases:
                with self.subTest(f"{name}: {case}"):
                    args = bad(valid, arg, value)
                    eager = outcome(fn, args)
                    args = bad(valid, arg, value)
                    got = outcome(self.compiled[name], args)
                    self.assert_same_finding(got, eager, rule, values)
                    if name == "writes":
                        # No kernel ran: the graph input written in place is as it was.
                        self.assertTrue(torch.equal(args["acc"], valid()["acc"]))

    def test_the_count_min_and_max_are_those_of_every_bad_id(self):
        got = outcome(self.compiled["reads"], bad(reads_valid, "many_ids", torch.arange(200).unsqueeze(0)))
        f = got.finding
        self.assertEqual((f["count"], f["value_min"], f["value_max"]), (72, 128, 199))
        got = outcome(self.compiled["reads"], bad(reads_valid, "sel", idx(1, 12, 12, -11, 3)))
        self.assertEqual((got.finding["values"], got.finding["value_counts"], got.finding["count"]), ([-11, 12], [1, 2], 3))

    def test_the_ignore_label_cause_survives_compilation(self):
        got = outcome(self.compiled["reads"], bad(reads_valid, "labels", idx(0, 255, 2)))
        self.assertEqual(got.finding["causes"][0]["id"], "ignore_label_not_ignored")
        self.assertIsInstance(got, IndexError)

    def test_the_guard_causes_no_recompilation(self):
        for name, (_, valid, cases) in PROGRAMS.items():
            outcome(self.compiled[name], valid())
        frames, graphs = dict(counters["frames"]), counters["stats"]["unique_graphs"]
        for name, (_, valid, cases) in PROGRAMS.items():
            for case, arg, value, *_ in cases:
                outcome(self.compiled[name], bad(valid, arg, value))
                outcome(self.compiled[name], valid())
        self.assertEqual(dict(counters["frames"]), frames)
        self.assertEqual(counters["stats"]["unique_graphs"], graphs)
        # (Turning the guard off recompiles once, then toggling nothing:
        # test_compiled_forms.OnAndOff.)

    def test_boundary_programs_are_one_graph_with_every_guarded_op_checked(self):
        # Guarded calls whose checked argument is a graph input or constant:
        # reads: 2 embedding, 2 cross_entropy, 2 nll_loss, 3 gather, 4
        # getitem (the constant list key is not one), index_select, take,
        # index_add, one_hot, setitem; writes: every guarded call (27).
        expected = {"reads": 17, "writes": 27}
        for name, nodes in expected.items():
            with self.subTest(name):
                fn, valid, _ = PROGRAMS[name]
                graphs, checked = _compiled.stats["graphs"], _compiled.stats["checked_nodes"]
                breaks = sum(counters["graph_break"].values())
                outcome(torch.compile(fn, dynamic=False, backend="eager"), valid())
                self.assertEqual(_compiled.stats["graphs"] - graphs, 1)
                self.assertEqual(sum(counters["graph_break"].values()), breaks)
                self.assertEqual(_compiled.stats["checked_nodes"] - checked, nodes)

    def test_ops_dynamo_does_not_compile_break_the_graph(self):
        fn, valid, cases = PROGRAMS["breaks"]
        breaks = sum(counters["graph_break"].values())
        outcome(torch.compile(fn, dynamic=False, backend="eager"), valid())
        # Each case's op: the finding there is the eager guard's.
        self.assertGreaterEqual(sum(counters["graph_break"].values()) - breaks, len(cases))

    def test_a_constant_index_is_checked_compiled_too(self):
        def constant_gather(x):
            return torch.gather(x, 1, torch.tensor([[0, 3], [0, 0]]))  # a constant of the graph

        def constant_list(x):
            return x[[0, 1], [1, 5]]  # rejected while dynamo traces: the frame runs eagerly

        for fn, rule in ((constant_gather, "DA121"), (constant_list, "DA111")):
            with self.subTest(fn.__name__):
                x = torch.zeros(2, 2) if rule == "DA121" else torch.arange(6).reshape(2, 3)
                eager = outcome(fn, {"x": x})
                got = outcome(torch.compile(fn, dynamic=False), {"x": x})
                self.assert_same_finding(got, eager, rule)

    def test_a_clean_constant_index_is_checked_once_an_input_every_call(self):
        def constant_and_input(x, i):
            return torch.gather(x, 1, torch.tensor([[0, 1], [1, 0]])) + torch.gather(x, 1, i)

        fn = torch.compile(constant_and_input, dynamic=False, backend="eager")
        args = {"x": torch.zeros(2, 2), "i": idx([1, 0], [0, 1])}
        outcome(fn, args)  # compiled here
        with mock.patch.object(_check_index, "outside", wraps=_check_index.outside) as tested:
            for _ in range(3):
                self.assertNotIsInstance(outcome(fn, args), Exception)
        # (On an accelerator each test is a host sync.)
        self.assertEqual(tested.call_count, 3)

    def test_shape_errors_stay_torchs_errors_compiled(self):
        x4 = torch.arange(5 * 6 * 3 * 4).reshape(5, 6, 3, 4)

        def mask_after_ellipsis(x, i):
            return x[..., i, np.ones((3, 4), dtype=bool)]

        def empty_dim(x, i):
            return torch.index_select(x, 0, i)

        for fn, x in ((mask_after_ellipsis, x4), (empty_dim, torch.empty(0, 3))):
            with self.subTest(fn.__name__):
                eager = outcome(fn, {"x": x, "i": idx(0)})
                got = outcome(torch.compile(fn, dynamic=False), {"x": x, "i": idx(0)})
                self.assertIsInstance(eager, Exception)
                self.assertNotIsInstance(eager, devassert.DeviceAssertPrevented)
                self.assertIsInstance(got, Exception)
                self.assertNotIsInstance(got, devassert.DeviceAssertPrevented)
                if fn is mask_after_ellipsis:  # the frame breaks on the mask: torch's own error
                    self.assertIs(type(got), type(eager))
                    self.assertEqual(str(got), str(eager))

    def test_the_tiny_model_of_test_async_names_the_planted_line(self):
        import test_async

        model = test_async.Tiny()
        compiled = torch.compile(model, dynamic=False)
        ids, last, _ = test_async.batch()
        torch.testing.assert_close(compiled(ids, last), model(ids, last))
        for level in ("on", "async"):  # async on CPU tensors is on
            with self.subTest(level):
                _intercept.set_level(level)
                try:
                    ids, last, _ = test_async.batch(bad_id=test_async.VOCAB + 3)
                    eager, got = outcome(model, {"ids": ids, "last": last}), outcome(compiled, {"ids": ids, "last": last})
                finally:
                    _intercept.set_level("on")
                self.assert_same_finding(got, eager, "DA101", [test_async.VOCAB + 3])
                self.assertEqual(got.finding["location"]["line"], test_async.line_of("# PLANTED-EMBEDDING", test_async.__file__))
                self.assertEqual(got.finding["locations"][0]["position"], [2, 5])

    def test_a_deep_library_stack_still_names_the_users_line(self):
        with tempfile.TemporaryDirectory() as tmp:
            lib = os.path.join(tmp, "site-packages", "deeplib_compiled")
            os.makedirs(lib)
            body = ["import torch", "def f0(ids, table):", "    return torch.nn.functional.embedding(ids, table)"]
            for i in range(1, 14):
                body += [f"def f{i}(ids, table):", f"    return f{i - 1}(ids, table)"]
            with open(os.path.join(lib, "__init__.py"), "w") as fh:
                fh.write("\n".join(body) + "\n")
            sys.path.insert(0, os.path.join(tmp, "site-packages"))
            try:
                import deeplib_compiled

                def user(ids, table):
                    return deeplib_compiled.f13(ids, table)  # USER-LINE

                args = {"ids": idx(7), "table": torch.randn(4, 2)}
                eager, got = outcome(user, args), outcome(torch.compile(user, dynamic=False), args)
            finally:
                sys.path.remove(os.path.join(tmp, "site-packages"))
                sys.modules.pop("deeplib_compiled", None)
        self.assert_same_finding(got, eager, "DA101", [7])
        self.assertEqual(got.finding["location"]["function"], "user")
        self.assertTrue(got.finding["evidence"]["inner_frame"]["file"].endswith(os.path.join("deeplib_compiled", "__init__.py")))


class DatasetSamples(unittest.TestCase):
    def test_the_dataset_indices_of_a_bad_batch_with_0_and_2_workers(self):
        # One process per loader, as in test_cases.py.
        code = """
            import json, sys, torch, devassert
            from torch.utils.data import DataLoader, Dataset

            class Tokens(Dataset):
                def __len__(self):
                    return 40
                def __getitem__(self, i):
                    bad = i in (13, 27)
                    return {"input_ids": torch.tensor([1, 2, 60 if bad else 3]), "label": torch.tensor(i % 2)}

            def found(fn, ids):
                try:
                    fn(ids)
                except IndexError as e:
                    return [e.finding["samples"], e.finding["samples_certain"], e.finding["evidence"].get("worker"), e.finding["location"]["line"]]

            if __name__ == "__main__":
                devassert.guard()
                emb = torch.nn.Embedding(50, 4)
                compiled = torch.compile(emb, dynamic=False)
                g = torch.Generator().manual_seed(7)
                for batch in DataLoader(Tokens(), batch_size=8, shuffle=True, generator=g, num_workers=int(sys.argv[1])):
                    ids = batch["input_ids"].clone()  # as .to(device) would
                    got = found(compiled, ids)
                    if got:
                        print(json.dumps([got, found(emb, ids)]))
                        break
        """
        with tempfile.TemporaryDirectory() as tmp:
            script = os.path.join(tmp, "train.py")
            with open(script, "w") as fh:
                fh.write(textwrap.dedent(code))
            for workers in (0, 2):
                r = subprocess.run([sys.executable, script, str(workers)], capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=PYTHONPATH), timeout=300)
                self.assertEqual(r.returncode, 0, r.stderr)
                compiled, eager = json.loads(r.stdout.splitlines()[-1])
                self.assertEqual(compiled, eager, workers)  # samples, certain, worker, line
                samples, certain, worker, _ = compiled
                self.assertEqual(worker in (0, 1), bool(workers), worker)
                self.assertTrue(certain, workers)
                self.assertTrue(samples, workers)
                for s in samples:
                    self.assertIn(s["dataset_index"], (13, 27), samples)


class Capture(unittest.TestCase):
    def test_inside_a_cuda_graph_capture_the_boundary_leaves_device_tensors(self):
        # A check of a device tensor syncs, which would break the capture.
        seen = []

        def check(points, inputs, host_only=False):
            seen.append(host_only)

        run = _compiled.guarded(lambda *a: "ran", ["a point"], lambda: 1)
        with mock.patch.object(_compiled, "check", check):
            for capturing in (False, True):
                with mock.patch.object(_async, "capturing", return_value=capturing):
                    self.assertEqual(run(torch.zeros(1)), "ran")
        self.assertEqual(seen, [False, True])


class ComputedIndices(unittest.TestCase):
    def test_an_index_computed_inside_the_region_is_checked_in_the_graph(self):
        def shifted(ids, table):
            return F.embedding(ids + 1, table)

        _intercept.set_level("on")
        try:
            fn = torch.compile(shifted, dynamic=False, backend="aot_eager")
            got = outcome(fn, dict(ids=idx(1, 9), table=torch.randn(10, 2)))
        finally:
            _intercept.set_level("off")
        # Not a boundary finding (the index is not a graph input): the
        # in-graph check's (test_compiled_inside.py has the cases).
        self.assertIsInstance(got, devassert.DeviceAssertPrevented)
        self.assertEqual((got.finding["rule"], got.finding["count"], got.finding["value_max"]), ("DA101", 1, 10))

    def test_without_the_guard_the_compiled_kernel_asserts_on_its_temporaries(self):
        def lookup(ids, table):
            return F.embedding(ids, table)

        # Past the end: torch 2.9's Inductor reads -1 as the last row, silently.
        got = outcome(torch.compile(lookup, dynamic=False), dict(ids=idx([1, 10]), table=torch.randn(10, 3)))
        self.assertNotIsInstance(got, devassert.DeviceAssertPrevented)
        self.assertRegex(str(got), r"index out of bounds: 0 <= tmp\d+ < 10")


if __name__ == "__main__":
    unittest.main()

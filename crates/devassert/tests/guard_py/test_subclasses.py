"""The guard on tensor subclasses: wrapper subclasses (the DTensor / FSDP2 /
torchao pattern: ``_make_wrapper_subclass`` + ``__torch_dispatch__``), jagged
nested tensors and DTensor, replicated and sharded over two gloo processes.
Valid input gives what plain torch gives; a bad index raises plain torch's
exception type with the guard's finding, read through the subclass's own
plain tensor (the global place and the rank that holds it, for a sharded
DTensor); values that cannot be read leave torch's own error unchanged.

Run: python -m unittest test_subclasses (PYTHONPATH must hold python/).
"""

import os
import sys
import tempfile
import textwrap
import unittest

import torch
import torch.nn.functional as F
from torch.utils._pytree import tree_map

import devassert
from devassert._checks import deferred as _async
from devassert._checks import violation as _violation
from devassert._guard import intercept as _intercept

import two_ranks

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHONPATH = os.path.abspath(os.path.join(HERE, "..", "..", "..", "..", "python"))



class Wrapper(torch.Tensor):
    """A wrapper subclass as DTensor and torchao write them: no storage of its
    own, every op unwrapped in __torch_dispatch__. `traceable`: it declares its
    inner tensor (__tensor_flatten__), as torch.compile-able subclasses do."""

    @staticmethod
    def __new__(cls, elem):
        r = torch.Tensor._make_wrapper_subclass(cls, elem.shape, dtype=elem.dtype, device=elem.device, requires_grad=elem.requires_grad)
        r.elem = elem
        return r

    __torch_function__ = torch._C._disabled_torch_function_impl

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        out = func(*tree_map(_unwrap, args), **tree_map(_unwrap, kwargs or {}))
        return tree_map(lambda x: cls(x) if isinstance(x, torch.Tensor) else x, out)


class Traceable(Wrapper):
    def __tensor_flatten__(self):
        return ["elem"], None

    @staticmethod
    def __tensor_unflatten__(inner, meta, outer_size, outer_stride):
        return Traceable(inner["elem"])


def _unwrap(x):
    return x.elem if isinstance(x, Wrapper) else x


def _outcome(fn):
    try:
        out = fn()
    except Exception as e:  # noqa: BLE001
        return e
    return _unwrap(out)


def _cases(cls):
    torch.manual_seed(0)
    w = torch.randn(10, 3)
    logits = torch.randn(3, 10)
    good, bad = torch.tensor([1, 9, 3]), torch.tensor([1, 12, 3])
    return {
        "embedding": (lambda ids: F.embedding(cls(ids), cls(w)), good, bad),
        "getitem": (lambda ids: cls(w)[cls(ids)], good, bad),
        "cross_entropy": (lambda ids: F.cross_entropy(cls(logits), cls(ids)), good, bad),
        "gather": (lambda ids: torch.gather(cls(w), 0, cls(ids.view(1, 3))), good, bad),
    }


class WrapperSubclassTest(unittest.TestCase):
    def tearDown(self):
        _intercept.set_level("off")

    def _compare(self, cls, name, fn, ids):
        """The outcome at "on", after checking that the accelerator path and
        the async path (forced on CPU tensors) give the same."""
        plain = _outcome(lambda: fn(ids))
        outcomes = []
        for level, precheck, fake in (("async", True, True), ("on", True, False), ("on", False, False)):
            _violation.PRECHECK_CPU, _async.FAKE_DEVICE = precheck, fake
            _async.reset()
            _intercept.set_level(level)
            try:
                guarded = _outcome(lambda: fn(ids))
                if _async.armed:
                    _async.poll(wait=True)
            finally:
                _violation.PRECHECK_CPU, _async.FAKE_DEVICE = False, False
                _intercept.set_level("off")
            where = f"{cls.__name__} {name} {level} precheck={precheck}"
            if isinstance(plain, Exception):
                self.assertIsInstance(guarded, type(plain), f"{where}: {guarded!r}")
                self.assertTrue(str(guarded).startswith(str(plain)), f"{where}: {guarded}")
            else:
                self.assertNotIsInstance(guarded, Exception, f"{where}: {guarded!r}")
                self.assertTrue(torch.equal(plain, guarded), where)
            outcomes.append(guarded)
        return outcomes[-1]

    def test_valid_input_is_unchanged_and_bad_ids_raise_torchs_type(self):
        for cls in (Wrapper, Traceable):
            for name, (fn, good, bad) in _cases(cls).items():
                with self.subTest(cls=cls.__name__, op=name):
                    self._compare(cls, name, fn, good)
                    got = self._compare(cls, name, fn, bad)
                    if cls is Traceable:
                        # Read through its declared inner tensor: a finding.
                        self.assertIsInstance(got, devassert.DeviceAssertPrevented, f"{name}: {got!r}")
                        self.assertEqual(got.finding["evidence"]["tensor"]["subclass"], "Traceable")
                        self.assertIn(12, got.finding["values"])
                    else:
                        # Its values cannot be read: torch's own error, unchanged.
                        self.assertNotIsInstance(got, devassert.DeviceAssertPrevented, f"{name}: {got!r}")

    def test_a_plain_index_into_an_unreadable_wrapper_is_still_checked(self):
        w = Wrapper(torch.randn(10, 3))
        _intercept.set_level("on")
        with self.assertRaises(IndexError) as ctx:
            F.embedding(torch.tensor([1, 12]), w)
        self.assertIsInstance(ctx.exception, devassert.DeviceAssertPrevented)
        self.assertEqual(ctx.exception.finding["values"], [12])


class Redispatching(torch.Tensor):
    """Calls the op again one __torch_function__ level down, as
    torch.overrides.redispatch_function (torch 2.15+) lets a subclass do."""

    depth = 0
    calls = []

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        cls.calls.append(func.__name__)
        cls.depth += 1
        try:
            if cls.depth > 20:
                raise AssertionError(f"{func.__name__} dispatched to the subclass again and again")
            return torch.overrides.redispatch_function(func, types, args, kwargs or {})
        finally:
            cls.depth -= 1


@unittest.skipUnless(hasattr(torch.overrides, "redispatch_function"), "torch.overrides.redispatch_function is torch 2.15+")
class RedispatchTest(unittest.TestCase):
    """The op of a redispatched call consumes the skip itself, as in plain
    torch (the guard's own subclass test used to consume it: endless
    recursion in PyTorch's test_overrides under the plugin)."""

    def tearDown(self):
        devassert.unguard()

    def test_a_redispatched_call_runs_once_as_plain_torch(self):
        def ops():
            w = torch.arange(15.0).reshape(5, 3).as_subclass(Redispatching)
            i = torch.tensor([0, 4]).as_subclass(Redispatching)
            t = torch.tensor([0, 1, 2, 0, 1]).as_subclass(Redispatching)
            x = w.clone()
            x[i] = torch.zeros(3)
            return [w[i], F.embedding(i, w), torch.gather(w, 0, torch.zeros(2, 3, dtype=torch.long)), F.cross_entropy(w, t), F.one_hot(i, 5), x]

        plain = ops()
        devassert.guard()
        for a, b in zip(ops(), plain):
            self.assertTrue(torch.equal(a.as_subclass(torch.Tensor), b.as_subclass(torch.Tensor)))


    def test_a_bad_index_in_a_redispatched_call_is_stopped_with_the_finding(self):
        # The redispatched call is checked: values read with every
        # __torch_function__ off (a wrapper through its inner tensor); the
        # subclass sees the same calls as in plain torch, valid results are
        # identical, and a bad index gives torch's error type with the finding.
        for make, cls in ((lambda t: t.as_subclass(Redispatching), Redispatching), (RedispatchingWrapper, RedispatchingWrapper)):
            for name, (fn, good, bad) in _cases(make).items():
                for level in ("on", "strict"):
                    with self.subTest(cls=cls.__name__, op=name, level=level):
                        plain = [self._logged(cls, fn, ids) for ids in (good, bad)]
                        _intercept.set_level(level)
                        try:
                            guarded = [self._logged(cls, fn, ids) for ids in (good, bad)]
                        finally:
                            _intercept.set_level("off")
                        (plain_good, plain_calls), (plain_bad, plain_bad_calls) = plain
                        (guarded_good, calls), (guarded_bad, bad_calls) = guarded
                        self.assertEqual(calls, plain_calls)
                        self.assertEqual(bad_calls, plain_bad_calls)
                        with torch._C.DisableTorchFunction():
                            self.assertTrue(torch.equal(plain_good, guarded_good))
                        self.assertIsInstance(guarded_bad, devassert.DeviceAssertPrevented, repr(guarded_bad))
                        self.assertIsInstance(guarded_bad, type(plain_bad))
                        self.assertTrue(str(guarded_bad).startswith(str(plain_bad)), str(guarded_bad))
                        self.assertIn(12, guarded_bad.finding["values"])

    def _logged(self, cls, fn, ids):
        """(the result or exception, the funcs the subclass was handed)."""
        cls.calls = []
        got = _outcome(lambda: fn(ids))
        return got, cls.calls

    def test_a_mode_that_redispatches_sees_the_same_calls(self):
        class Logging(torch.overrides.TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                calls.append(func.__name__)
                with self:
                    return torch.overrides.redispatch_function(func, types, args, kwargs or {})

        def run(last):
            x = torch.arange(15.0).reshape(5, 3)
            i = torch.tensor([0, last])
            with Logging():
                return F.embedding(i, x).sum() + x[i].sum() + torch.gather(x, 0, i.view(2, 1)).sum()

        calls = []
        plain = run(4)
        plain_calls, calls = calls, []
        with self.assertRaises(IndexError) as bad:
            run(5)
        plain_bad_calls, calls = calls, []
        _intercept.set_level("on")
        self.assertTrue(torch.equal(run(4), plain))
        self.assertEqual(calls, plain_calls)
        calls = []
        with self.assertRaises(IndexError) as ctx:
            run(5)
        self.assertEqual(calls, plain_bad_calls)
        self.assertIsInstance(ctx.exception, devassert.DeviceAssertPrevented)
        self.assertTrue(str(ctx.exception).startswith(str(bad.exception)))
        self.assertEqual(ctx.exception.finding["values"], [5])


class RedispatchingWrapper(Traceable):
    """A traceable wrapper subclass whose __torch_function__ redispatches."""

    calls = []

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        cls.calls.append(func.__name__)
        return torch.overrides.redispatch_function(func, types, args, kwargs or {})

    @staticmethod
    def __tensor_unflatten__(inner, meta, outer_size, outer_stride):
        return RedispatchingWrapper(inner["elem"])


class NestedTensorTest(unittest.TestCase):
    def tearDown(self):
        _intercept.set_level("off")

    def test_jagged_ids_give_the_row_and_position(self):
        w = torch.randn(10, 3)

        def ids(last):
            return torch.nested.nested_tensor([torch.tensor([1, 2]), torch.tensor([3, last, 5])], layout=torch.jagged)

        plain_good = F.embedding(ids(4), w)
        with self.assertRaises(IndexError) as plain:
            F.embedding(ids(14), w)
        _intercept.set_level("on")
        guarded_good = F.embedding(ids(4), w)
        self.assertTrue(torch.equal(plain_good.values(), guarded_good.values()))
        with self.assertRaises(IndexError) as ctx:
            F.embedding(ids(14), w)
        self.assertIsInstance(ctx.exception, devassert.DeviceAssertPrevented)
        self.assertTrue(str(ctx.exception).startswith(str(plain.exception)))
        f = ctx.exception.finding
        self.assertEqual(f["values"], [14])
        # Packed place 3 is row 1, position 1 of the jagged batch.
        self.assertEqual(f["locations"][0]["position"], [1, 1])
        self.assertEqual(f["locations"][0]["local_position"], [3])
        self.assertEqual(f["evidence"]["tensor"]["subclass"], "NestedTensor")

    def test_an_op_nested_tensors_lack_raises_what_torch_raises(self):
        x = torch.nested.nested_tensor([torch.randn(2, 3), torch.randn(4, 3)], layout=torch.jagged)
        with self.assertRaises(NotImplementedError) as plain:
            x[torch.tensor([0, 5])]
        _intercept.set_level("on")
        with self.assertRaises(NotImplementedError) as guarded:
            x[torch.tensor([0, 5])]
        self.assertEqual(str(plain.exception), str(guarded.exception))
        self.assertNotIsInstance(guarded.exception, devassert.DeviceAssertPrevented)


_DTENSOR = r"""
import json, os, sys
import torch, torch.distributed as dist
import torch.nn.functional as F
import torch.multiprocessing as mp


def work(rank, out):
    # A file store: a port chosen free by the parent can be taken by the
    # time the ranks start (other tests open gloo sockets meanwhile).
    dist.init_process_group("gloo", init_method="file://" + os.path.join(out, "store"), rank=rank, world_size=2)
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor import DTensor, Replicate, Shard, distribute_tensor
    import devassert
    mesh = init_device_mesh("cpu", (2,))
    torch.manual_seed(0)
    table = torch.randn(10, 4)
    ids = torch.tensor([[1, 2, 3, 4], [5, 6, 7, 8]])
    bad = ids.clone()
    bad[1, 2] = 13
    cases = {
        # Tensor parallel: a row-sharded table, replicated ids (plain DTensor
        # masks ids outside each shard: 13 would embed to zeros, no error).
        "row_sharded_table": lambda i: F.embedding(distribute_tensor(i, mesh, [Replicate()]), distribute_tensor(table, mesh, [Shard(0)])).full_tensor(),
        # Sequence-sharded ids: rank r holds row r; the bad id is on rank 1
        # (only it raises: no collective follows).
        "sharded_ids": lambda i: F.embedding(DTensor.from_local(i[rank : rank + 1], mesh, [Shard(0)]), distribute_tensor(table, mesh, [Replicate()])).to_local(),
        "replicated_getitem": lambda i: distribute_tensor(table, mesh, [Replicate()])[distribute_tensor(i.flatten(), mesh, [Replicate()])].full_tensor(),
        "replicated_cross_entropy": lambda i: F.cross_entropy(distribute_tensor(table.view(5, 8)[:2], mesh, [Replicate()]), distribute_tensor(i[:, 2], mesh, [Replicate()])).full_tensor(),
    }
    results = {}
    for level in ("off", "on"):
        devassert.guard(level) if level == "on" else devassert.unguard()
        for name, fn in cases.items():
            good = fn(ids)
            try:
                fn(bad)
                got = None
            except Exception as e:
                got = {"type": type(e).__name__, "bases": [c.__name__ for c in type(e).__mro__], "finding": getattr(e, "finding", None)}
            results[f"{level} {name}"] = {"good": good.flatten().tolist(), "bad": got}
    with open(os.path.join(out, f"rank{rank}.json"), "w") as f:
        json.dump(results, f)
    # No rank closes its connections while the other still uses them.
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    mp.spawn(work, args=(sys.argv[1],), nprocs=2)
"""


@unittest.skipUnless(torch.distributed.is_available() and two_ranks.public_dtensor(), f"torch {torch.__version__} has no public DTensor API (2.5+)")
class DTensorTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        script = os.path.join(cls.tmp.name, "dtensor.py")
        with open(script, "w") as f:
            f.write(textwrap.dedent(_DTENSOR))
        cls.ranks = two_ranks.run([sys.executable, script, cls.tmp.name], cls.tmp.name)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_valid_input_gives_the_plain_result(self):
        for rank, res in enumerate(self.ranks):
            for key in [k for k in res if k.startswith("off ")]:
                on = "on " + key[4:]
                self.assertEqual(res[key]["good"], res[on]["good"], f"rank {rank} {key}")

    def test_bad_ids_raise_plain_torchs_type_with_the_finding(self):
        for rank, res in enumerate(self.ranks):
            for name in ("replicated_getitem", "replicated_cross_entropy"):
                plain, guarded = res[f"off {name}"]["bad"], res[f"on {name}"]["bad"]
                self.assertIsNotNone(plain, name)
                self.assertIn(plain["type"], guarded["bases"], name)
                self.assertIn("DeviceAssertPrevented", guarded["bases"], name)
                f = guarded["finding"]
                self.assertEqual(f["evidence"]["tensor"]["subclass"], "DTensor")
                self.assertEqual(f["evidence"]["rank"], rank)

    def test_a_row_sharded_table_that_masks_bad_ids_is_stopped_on_every_rank(self):
        for rank, res in enumerate(self.ranks):
            self.assertIsNone(res["off row_sharded_table"]["bad"], "plain DTensor embeds 13 to zeros")
            got = res["on row_sharded_table"]["bad"]
            self.assertIn("IndexError", got["bases"])
            f = got["finding"]
            self.assertEqual(f["values"], [13])
            self.assertEqual(f["bound"]["high"], 10)  # the table's global rows
            self.assertEqual(f["locations"][0]["position"], [1, 2])
            self.assertEqual(f["evidence"]["rank"], rank)

    def test_a_sharded_index_gives_the_global_place_and_the_rank_that_holds_it(self):
        self.assertIsNone(self.ranks[0]["on sharded_ids"]["bad"], "rank 0's shard is valid")
        got = self.ranks[1]["on sharded_ids"]["bad"]
        self.assertEqual(got["type"], "DeviceAssertPreventedIndexError")
        self.assertIn(self.ranks[1]["off sharded_ids"]["bad"]["type"], got["bases"])
        loc = got["finding"]["locations"][0]
        self.assertEqual(loc["position"], [1, 2])
        self.assertEqual(loc["local_position"], [0, 2])
        self.assertEqual(loc["index"], 6)
        self.assertEqual(loc["rank"], 1)
        self.assertEqual(got["finding"]["evidence"]["tensor"]["global_shape"], [2, 4])


if __name__ == "__main__":
    unittest.main()

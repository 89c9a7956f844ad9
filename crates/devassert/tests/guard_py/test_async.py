"""The sync-free guard (level "async"), CUDA graph capture and torch.compile.

There is no GPU here: the async machinery runs on CPU tensors behind
`_async.FAKE_DEVICE` (a plain copy stands for the pinned copy, the "event" is
done at once) with `_violation.PRECHECK_CPU` (CPU tensors take the accelerator
path). The host-sync primitives are patched to fail while a guarded op runs,
so any sync the guard makes is seen.

Run: python -m unittest test_async (PYTHONPATH must hold python/).
"""

import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest
from unittest import mock

import devassert
import torch
import torch.nn.functional as F
from devassert._checks import deferred as _async
from devassert._guard import intercept as _intercept
from devassert._checks import notes as _notes
from devassert._checks import violation as _violation
from devassert._guard.level import env_level as _env_level

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHONPATH = os.path.abspath(os.path.join(HERE, "..", "..", "..", "..", "python"))

VOCAB, CLASSES, D = 50, 7, 16


class SyncCalled(Exception):
    pass


SYNC_METHODS = ("item", "tolist", "__bool__", "__int__", "__float__", "__index__", "nonzero", "cpu")


@contextlib.contextmanager
def syncs_fail_inside_guarded_ops():
    """Patch the host-sync primitives to raise SyncCalled while a guarded op
    runs; yields the list of (primitive, while_reporting) calls seen."""
    calls = []
    depth = [0]

    def failing(name):
        def fail(*args, **kwargs):
            if depth[0]:
                reporting = bool(getattr(_async._busy, "on", False))
                calls.append((name, reporting))
                # Describing a violation may sync: only the happy path must not.
                if not reporting:
                    raise SyncCalled(name)
            return originals[name](*args, **kwargs)

        return fail

    originals = {name: getattr(torch.Tensor, name) for name in SYNC_METHODS}
    originals["nonzero_fn"] = torch.nonzero
    originals["synchronize"] = torch.cuda.synchronize

    def counted(fn):
        def call(*args, **kwargs):
            depth[0] += 1
            try:
                return fn(*args, **kwargs)
            finally:
                depth[0] -= 1

        # This harness frame is not the user's: the launch line is found past it.
        _async._kinds[call.__code__] = 0
        return call

    wrapped = [(owner, attr, getattr(owner, attr)) for owner, attr, *_ in _intercept._installed if attr != "compile"]
    try:
        for name in SYNC_METHODS:
            setattr(torch.Tensor, name, failing(name))
        torch.nonzero = failing("nonzero_fn")
        torch.cuda.synchronize = failing("synchronize")
        for owner, attr, fn in wrapped:
            setattr(owner, attr, counted(fn))
        yield calls
    finally:
        for owner, attr, fn in wrapped:
            setattr(owner, attr, fn)
        for name in SYNC_METHODS:
            setattr(torch.Tensor, name, originals[name])
        torch.nonzero = originals["nonzero_fn"]
        torch.cuda.synchronize = originals["synchronize"]


@contextlib.contextmanager
def fake_device(level):
    """The async machinery on CPU tensors, at `level`."""
    _violation.PRECHECK_CPU = True
    _async.FAKE_DEVICE = True
    _async.reset()
    _intercept.set_level(level)
    try:
        yield
    finally:
        _intercept.set_level("off")
        _violation.PRECHECK_CPU = False
        _async.FAKE_DEVICE = False
        _async.reset()


class Tiny(torch.nn.Module):
    """Token and position embeddings, a gather of the last real token, a head."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.tok = torch.nn.Embedding(VOCAB, D)
        self.pos = torch.nn.Embedding(8, D)
        self.head = torch.nn.Linear(D, CLASSES)

    def forward(self, ids, last):
        x = self.tok(ids)  # PLANTED-EMBEDDING
        x = x + self.pos(torch.arange(ids.size(1)))
        x = torch.gather(x, 1, last.view(-1, 1, 1).expand(-1, 1, D)).squeeze(1)
        rows = torch.arange(ids.size(0))
        return self.head(x)[rows]


def batch(bad_id=None):
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(0, VOCAB, (4, 8), generator=g)
    if bad_id is not None:
        ids[2, 5] = bad_id
    last = torch.tensor([7, 3, 5, 6])
    labels = torch.tensor([1, 6, -100, 0])
    return ids, last, labels


def train(steps, bad_id=None, bad_step=0):
    """Losses and final weights of a few AdamW steps."""
    model = Tiny()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    losses = []
    for step in range(steps):
        ids, last, labels = batch(bad_id if step == bad_step else None)
        loss = F.cross_entropy(model(ids, last), labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.detach().clone())
    return losses, [p.detach().clone() for p in model.parameters()]


def line_of(marker, path=__file__):
    with open(path) as fh:
        for n, text in enumerate(fh, 1):
            if marker in text and "line_of" not in text:
                return n
    raise AssertionError(marker)


class AsyncHasNoHostSync(unittest.TestCase):
    def test_a_valid_training_step_makes_no_sync_and_matches_plain(self):
        plain = train(3)
        with fake_device("async"), syncs_fail_inside_guarded_ops() as calls:
            guarded = train(3)
            self.assertTrue(_async.armed, "the guarded ops did not take the async path")
            _async.poll(wait=True)
        self.assertEqual(calls, [])
        for a, b in zip(plain[0] + plain[1], guarded[0] + guarded[1]):
            self.assertTrue(torch.equal(a, b))

    def test_a_planted_bad_id_is_raised_at_the_next_guarded_op_with_the_launch_line(self):
        with fake_device("async"), syncs_fail_inside_guarded_ops() as calls:
            with self.assertRaises(devassert.DeviceAssertPrevented) as ctx:
                train(2, bad_id=VOCAB + 3)
        # Syncs only while building the report (the exact re-check), none before.
        self.assertEqual([c for c in calls if not c[1]], [])
        exc = ctx.exception
        self.assertIsInstance(exc, IndexError)  # torch's own type, from the repeat on CPU copies
        f = exc.finding
        self.assertEqual(f["rule"], "DA101")
        self.assertEqual(f["location"]["line"], line_of("# PLANTED-EMBEDDING"))
        self.assertEqual(os.path.basename(f["location"]["file"]), "test_async.py")
        self.assertNotEqual(f["noticed_at"], None)
        self.assertTrue(f["evidence"]["async"])
        self.assertEqual((f["count"], f["value_min"], f["value_max"]), (1, VOCAB + 3, VOCAB + 3))
        self.assertIn(VOCAB + 3, f["values"])
        self.assertEqual(f["locations"][0]["position"], [2, 5])
        self.assertEqual(f["bound"], {"low": 0, "high": VOCAB})
        text = str(exc)
        self.assertIn(f"test_async.py:{line_of('# PLANTED-EMBEDDING')}", text)
        self.assertIn(f"{VOCAB + 3}", text)
        self.assertIn("replaced by 0", text)
        self.assertIn("not to be trusted", text)

    def test_without_patched_syncs_the_report_is_the_exact_one(self):
        with fake_device("async"):
            x = torch.arange(10.0)
            idx = torch.tensor([1, 12, 12, -11, 3])
            y = torch.index_select(x, 0, idx)  # LAUNCH-INDEX-SELECT
            self.assertEqual(y.tolist(), [1.0, 0.0, 0.0, 0.0, 3.0])  # ran on substituted indices
            with self.assertRaises(IndexError) as ctx:
                torch.gather(x, 0, torch.tensor([0]))
        exc = ctx.exception
        self.assertIsInstance(exc, devassert.DeviceAssertPrevented)
        self.assertIn("index out of range in self", str(exc))  # torch's own CPU message
        f = exc.finding
        self.assertEqual(f["location"]["line"], line_of("# LAUNCH-INDEX-SELECT"))
        self.assertEqual((f["values"], f["value_counts"], f["count"]), ([-11, 12], [1, 2], 3))

    def test_an_index_changed_in_place_after_the_launch_still_gives_the_count(self):
        with fake_device("async"):
            x = torch.arange(10.0)
            idx = torch.tensor([1, 12, 12, 3])
            torch.index_select(x, 0, idx)  # LAUNCH-THEN-CHANGED
            idx.zero_()  # the values the device saw are gone
            with self.assertRaises(devassert.DeviceAssertPrevented) as ctx:
                torch.gather(x, 0, torch.tensor([0]))
        f = ctx.exception.finding
        self.assertEqual(f["location"]["line"], line_of("# LAUNCH-THEN-CHANGED"))
        self.assertEqual((f["count"], f["values"], f["locations"]), (2, [], []))
        self.assertIn("2 value(s) outside [0, 10)", str(ctx.exception))
        self.assertIn("changed in place after the launch", str(ctx.exception))

    def test_a_bad_index_in_the_last_op_is_raised_at_exit(self):
        code = textwrap.dedent(
            """
            import torch, devassert
            from devassert._checks import deferred as _async, violation as _violation
            _async.FAKE_DEVICE = True
            _violation.PRECHECK_CPU = True
            devassert.guard("async")
            t = torch.zeros(5)
            t[torch.tensor([1, 9])] = 1.0  # LAST-OP
            print("finished")
            """
        )
        with tempfile.TemporaryDirectory() as reports:
            r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=120, env=dict(os.environ, PYTHONPATH=PYTHONPATH, DEVASSERT_REPORT_DIR=reports))
            self.assertIn("finished", r.stdout)
            self.assertIn("DeviceAssertPrevented", r.stderr)
            self.assertIn("<string>:8", r.stderr)
            names = sorted(os.listdir(reports))
            guard = [n for n in names if n.startswith("guard-")]
            self.assertEqual(len(guard), 1, names)
            with open(os.path.join(reports, guard[0])) as fh:
                finding = json.loads(fh.readline())
            self.assertEqual(finding["location"]["line"], 8)
            self.assertEqual(finding["values"], [9])
            with open(os.path.join(reports, guard[0].replace("guard-", "exit-").replace(".jsonl", ".json"))) as fh:
                self.assertEqual(json.load(fh)["uncaught"], [finding["evidence"]["raise_id"]])

    def test_on_cpu_tensors_async_is_on(self):
        _intercept.set_level("async")
        try:
            with self.assertRaises(IndexError) as ctx:
                F.embedding(torch.tensor([3, 11]), torch.zeros(10, 2))
            self.assertIsInstance(ctx.exception, devassert.DeviceAssertPrevented)
            self.assertFalse(_async.armed)
        finally:
            _intercept.set_level("off")

    def test_the_level_is_accepted_everywhere(self):
        self.assertIn("async", devassert.LEVELS)
        with mock.patch.dict(os.environ, {"DEVASSERT_GUARD": "async"}):
            self.assertEqual(_env_level(), "async")
            with devassert.guard() as g:
                self.assertIn("async", repr(g))
        self.assertEqual(_intercept.current_level(), "off")


class CaptureNeverSyncs(unittest.TestCase):
    def step(self, bad_label=None):
        model = Tiny()
        ids, last, labels = batch()
        if bad_label is not None:
            labels[1] = bad_label
        logits = model(ids, last)
        loss = F.cross_entropy(logits, labels)  # CAPTURED-LOSS
        probs = torch.sigmoid(logits)
        loss = loss + F.binary_cross_entropy(probs, torch.full_like(probs, 0.5))  # not checkable sync-free
        loss.backward()
        return loss.detach()

    def test_inside_a_capture_no_level_syncs(self):
        plain = self.step()
        for level in ("on", "strict", "async"):
            _notes._said.discard("capture")
            err = io.StringIO()
            with fake_device(level), mock.patch.object(torch.cuda, "is_current_stream_capturing", return_value=True), syncs_fail_inside_guarded_ops() as calls, contextlib.redirect_stderr(err):
                got = self.step()
                got2 = self.step()
            self.assertEqual(calls, [], level)
            self.assertTrue(torch.equal(got, plain) and torch.equal(got2, plain), level)
            self.assertEqual(err.getvalue().count("while a CUDA graph is being captured"), 1, level)
            self.assertIn("binary_cross_entropy", err.getvalue())

    def test_a_bad_label_in_a_capture_is_raised_after_it(self):
        with fake_device("on"):
            with mock.patch.object(torch.cuda, "is_current_stream_capturing", return_value=True), contextlib.redirect_stderr(io.StringIO()):
                self.step(bad_label=CLASSES)  # no raise while capturing
                self.step()
            with self.assertRaises(devassert.DeviceAssertPrevented) as ctx:
                torch.gather(torch.zeros(3), 0, torch.tensor([0]))
            f = ctx.exception.finding
            self.assertEqual(f["rule"], "DA201")
            self.assertEqual(f["location"]["line"], line_of("# CAPTURED-LOSS"))
            self.assertEqual(f["values"], [CLASSES])
            self.assertIn("inside a CUDA graph", str(ctx.exception))
            # Reported once; a later op goes on.
            torch.gather(torch.zeros(3), 0, torch.tensor([0]))


class CompiledRegions(unittest.TestCase):
    def test_torch_compile_gets_a_one_time_note(self):
        _notes._said.discard("compile")
        err = io.StringIO()
        with devassert.guard("on"), contextlib.redirect_stderr(err):
            emb = torch.nn.Embedding(10, 3)
            fn = torch.compile(lambda ids: emb(ids).sum(), backend="eager")
            torch.compile(emb)
            self.assertEqual(float(fn(torch.tensor([1, 2]))), float(emb(torch.tensor([1, 2])).sum()))
        text = err.getvalue()
        self.assertEqual(text.count("torch.compile is in use"), 1, text)
        self.assertIn("devassert run --eager", text)
        self.assertIn("TORCHDYNAMO_DISABLE=1", text)

    def test_no_note_when_dynamo_is_disabled(self):
        _notes._said.discard("compile")
        err = io.StringIO()
        with mock.patch.dict(os.environ, {"TORCHDYNAMO_DISABLE": "1"}), devassert.guard("on"), contextlib.redirect_stderr(err):
            torch.compile(torch.nn.Linear(2, 2))
        self.assertEqual(err.getvalue(), "")


if __name__ == "__main__":
    unittest.main()

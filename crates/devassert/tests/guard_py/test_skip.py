"""``guard(on_bad_batch="skip")`` in real training loops on CPU: a skipped
step leaves parameters and optimizer state bit-identical to the same loop
that left that step's update out (AdamW, gradient accumulation, two
optimizers, a closure, GradScaler); the quarantine file names the sample and
`devassert.quarantine.exclude` drops it on resume; max_skips turns a
systematic error back into an exception; evaluation still raises; the async
level's later report is kept too; DDP over 2 gloo ranks under torchrun where
only rank 1 meets the bad sample; a transformers `Trainer` and a
`lightning.Trainer` through their callbacks.

Run: python -m unittest test_skip (PYTHONPATH must hold python/).
"""

import contextlib
import gc
import io
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
import weakref

import torch
from torch.utils.data import DataLoader, TensorDataset

import devassert
import two_ranks
from devassert import quarantine
from devassert._checks import deferred as _async
from devassert._checks import violation as _violation
from devassert._guard import intercept as _intercept
from devassert._policy import state as _state

HERE = os.path.dirname(os.path.abspath(__file__))
VOCAB, N, BATCH, BAD_INDEX = 10, 12, 2, 5  # sample 5: step 2, row 1


def net():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Embedding(VOCAB, 4), torch.nn.Flatten(), torch.nn.Linear(12, 3))


def dataset(bad=(BAD_INDEX,)):
    g = torch.Generator().manual_seed(1)
    x = torch.randint(0, VOCAB, (N, 3), generator=g)
    for i in bad:
        x[i, 1] = VOCAB + 4
    return TensorDataset(x)


def snapshot(model, opt):
    params = [p.detach().clone() for p in model.parameters()]
    state = [{k: v.clone() if torch.is_tensor(v) else v for k, v in opt.state[p].items()} for p in model.parameters()]
    return params, state


def train(data, *, leave_out=(), accumulate=1):
    """Plain AdamW over `data` in order; the steps in `leave_out` take no update."""
    model = net()
    opt = torch.optim.AdamW(model.parameters(), lr=0.05)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.9)
    step = 0
    for i, (x,) in enumerate(DataLoader(data, batch_size=BATCH)):
        model(x).square().mean().backward()
        if (i + 1) % accumulate:
            continue
        if step not in leave_out:
            opt.step()
        sched.step()
        opt.zero_grad()
        step += 1
    return model, opt, sched


class Skip(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="devassert-skip-")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.path = os.path.join(self.tmp, "quarantine.jsonl")
        self.stderr = io.StringIO()
        self.redirect = contextlib.redirect_stderr(self.stderr)
        self.redirect.__enter__()

    def tearDown(self):
        self.redirect.__exit__(None, None, None)
        devassert.guard("off", on_bad_batch="raise")
        _intercept.set_level("off")

    def skip(self, max_skips=10):
        devassert.guard("on", on_bad_batch="skip", quarantine=self.path, max_skips=max_skips)
        _state.reset()

    def assertSame(self, a, b):
        (pa, sa), (pb, sb) = a, b
        for x, y in zip(pa, pb):
            self.assertTrue(torch.equal(x, y), "parameters differ")
        for x, y in zip(sa, sb):
            self.assertEqual(sorted(x), sorted(y))
            for k in x:
                self.assertTrue(torch.equal(torch.as_tensor(x[k]), torch.as_tensor(y[k])), f"optimizer state {k} differs")

    def records(self):
        return quarantine.read(self.path)

    def test_adamw_skipped_step_is_bit_identical_to_leaving_it_out(self):
        ref_model, ref_opt, _ = train(dataset(bad=()), leave_out={2})
        self.skip()
        model, opt, sched = train(dataset())
        self.assertSame(snapshot(model, opt), snapshot(ref_model, ref_opt))
        # Adam's per-parameter step counts the updates that happened; the LR
        # scheduler stepped at every step, the skipped one included.
        self.assertEqual(int(opt.state[next(model.parameters())]["step"]), N // BATCH - 1)
        self.assertEqual(sched.last_epoch, N // BATCH)
        self.assertEqual((_state.skipped_steps, _state.steps), (1, N // BATCH))
        self.assertIn("skipped the update of step 2 (AdamW): this rank met a bad batch", self.stderr.getvalue())

    def test_quarantine_names_the_sample_and_exclude_drops_it_on_resume(self):
        self.skip()
        train(dataset())
        [r] = self.records()
        self.assertEqual((r["dataset_index"], r["row"], r["certain"], r["step"]), (BAD_INDEX, 1, True, 2))
        # A TensorDataset does not say its split, and no callback named it.
        self.assertEqual((r["op"], r["argument"], r["rule"], r["split"], r["values"]), ("embedding", "input", "DA101", "unknown", [VOCAB + 4]))
        self.assertEqual(r["bound"], {"low": 0, "high": VOCAB})
        self.assertIn("holds 1 value(s) outside [0, 10)", r["message"])
        self.assertEqual(quarantine.indices(self.path), [BAD_INDEX])
        self.assertEqual(_state.samples, [BAD_INDEX])
        # Resumed without the sample: nothing is skipped, and a second bad
        # sample found then is named by its index in the original dataset.
        data = dataset(bad=(BAD_INDEX, 9))
        kept = quarantine.exclude(data, self.path)
        self.assertEqual(len(kept), N - 1)
        self.assertEqual(kept.indices[:6], [0, 1, 2, 3, 4, 6])
        _state.reset()
        train(kept)
        self.assertEqual(_state.skipped_steps, 1)
        self.assertEqual(quarantine.indices(self.path), [BAD_INDEX, 9])
        self.assertEqual(len(quarantine.exclude(data, self.path)), N - 2)

    def test_the_split_is_the_datasets_own(self):
        import datasets

        rows = datasets.Dataset.from_dict({"x": dataset()[:][0].tolist()}, split="validation").with_format("torch")
        self.skip()
        model = net()
        opt = torch.optim.AdamW(model.parameters(), lr=0.05)
        for batch in DataLoader(quarantine.exclude(rows, os.path.join(self.tmp, "none.jsonl")), batch_size=BATCH):
            model(batch["x"]).square().mean().backward()
            opt.step()
            opt.zero_grad()
        [r] = self.records()
        self.assertEqual((r["dataset_index"], r["split"]), (BAD_INDEX, "validation"))
        self.assertEqual(_state.findings, [])

    def test_exclude_a_sampler_and_a_datasets_dataset(self):
        with open(self.path, "w") as fh:
            fh.write('{"dataset_index": 3}\n{"dataset_index": null}\nnot json\n{"dataset_index": 1}\n{"dataset_index": true}\n{"dataset_index": 3')
        self.assertEqual(quarantine.indices(self.path), [1, 3])
        sampler = quarantine.exclude(torch.utils.data.SequentialSampler(range(6)), self.path)
        self.assertEqual((list(sampler), len(sampler)), ([0, 2, 4, 5], 4))
        import datasets

        ds = quarantine.exclude(datasets.Dataset.from_dict({"x": list(range(6))}), self.path)
        self.assertEqual(ds["x"], [0, 2, 4, 5])
        self.assertEqual(quarantine.indices(os.path.join(self.tmp, "missing.jsonl")), [])
        with self.assertRaises(TypeError):
            quarantine.exclude(iter(range(3)), self.path)

    def test_gradient_accumulation_skips_the_whole_accumulated_step(self):
        # Batches 4 and 5 (sample 5 is in batch 2) make step 1 of 3.
        ref_model, ref_opt, _ = train(dataset(bad=()), leave_out={1}, accumulate=2)
        self.skip()
        model, opt, _ = train(dataset(), accumulate=2)
        self.assertSame(snapshot(model, opt), snapshot(ref_model, ref_opt))
        self.assertEqual((_state.skipped_steps, _state.steps), (1, 3))

    def test_two_optimizers_each_skip_the_step_once(self):
        def run(data, leave_out=()):
            model = net()
            a = torch.optim.AdamW(model[0].parameters(), lr=0.05)
            b = torch.optim.SGD(model[2].parameters(), lr=0.05, momentum=0.9)
            for step, (x,) in enumerate(DataLoader(data, batch_size=BATCH)):
                model(x).square().mean().backward()
                for opt in (a, b):
                    if step not in leave_out:
                        opt.step()
                    opt.zero_grad()
            return [snapshot(model, a), snapshot(model, b)]

        ref = run(dataset(bad=()), leave_out={2})
        self.skip()
        got = run(dataset())
        for g, r in zip(got, ref):
            self.assertSame(g, r)
        self.assertEqual(_state.skipped_steps, 2)  # one per optimizer

    def test_an_optimizer_made_after_a_skip_does_not_skip_for_it(self):
        self.skip()
        train(dataset())
        ref_model, ref_opt, _ = train(dataset(bad=()))
        self.assertEqual(_state.skipped_steps, 1)
        devassert.guard("off", on_bad_batch="raise")
        plain_model, plain_opt, _ = train(dataset(bad=()))
        self.assertSame(snapshot(ref_model, ref_opt), snapshot(plain_model, plain_opt))

    def test_a_closure_runs_before_the_step_is_decided(self):
        def run(data, leave_out=()):
            model = net()
            opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
            for step, (x,) in enumerate(DataLoader(data, batch_size=BATCH)):

                def closure():
                    opt.zero_grad()
                    loss = model(x).square().mean()
                    loss.backward()
                    return loss

                if step in leave_out:
                    closure()
                else:
                    opt.step(closure)
            return snapshot(model, opt)

        ref = run(dataset(bad=()), leave_out={2})
        self.skip()
        self.assertSame(run(dataset()), ref)
        self.assertEqual(_state.skipped_steps, 1)

    def test_grad_scaler_keeps_its_scale_and_growth_tracker(self):
        if not hasattr(torch.amp, "GradScaler"):
            self.skipTest(f"torch {torch.__version__} has no device-generic GradScaler (torch.amp.GradScaler, 2.3+) to run on CPU")

        def run(data, leave_out=()):
            model = net()
            opt = torch.optim.AdamW(model.parameters(), lr=0.05)
            scaler = torch.amp.GradScaler("cpu", init_scale=2.0**8, growth_interval=2)
            scales = []
            for step, (x,) in enumerate(DataLoader(data, batch_size=BATCH)):
                scaler.scale(model(x).square().mean()).backward()
                if step not in leave_out:
                    scaler.unscale_(opt)
                    scaler.step(opt)
                    scaler.update()
                opt.zero_grad()
                scales.append((scaler.get_scale(), int(scaler._get_growth_tracker())))
            return snapshot(model, opt), scales

        (ref, ref_scales) = run(dataset(bad=()), leave_out={2})
        self.skip()
        got, scales = run(dataset())
        self.assertSame(got, ref)
        self.assertEqual(scales, ref_scales)
        self.assertEqual(_state.skipped_steps, 1)

    def test_max_skips_turns_a_systematic_error_into_an_exception(self):
        self.skip(max_skips=2)
        with self.assertRaises(devassert.DeviceAssertPrevented) as raised:
            train(dataset(bad=(0, 2, 4, 6)))
        text = str(raised.exception)
        self.assertIn("3 optimizer steps skipped, more than max_skips=2", text)
        self.assertIn("embedding: argument `input`", text)
        self.assertEqual(quarantine.indices(self.path), [0, 2, 4])

    def test_a_batch_mostly_bad_raises_at_its_step(self):
        self.skip()
        with self.assertRaises(devassert.DeviceAssertPrevented) as raised:
            train(dataset(bad=(4, 5)))
        self.assertIn("2 of the 2 samples of this batch hold bad values", str(raised.exception))
        self.assertEqual(quarantine.indices(self.path), [4, 5])
        self.assertEqual(_state.skipped_steps, 1)

    def test_max_skips_zero_raises_at_the_first_step(self):
        self.skip(max_skips=0)
        with self.assertRaises(devassert.DeviceAssertPrevented):
            train(dataset())

    def test_evaluation_still_raises(self):
        self.skip()
        model = net()
        x = dataset()[BAD_INDEX][0][None]
        with torch.no_grad(), self.assertRaises(IndexError):
            model(x)
        self.assertEqual(_state.marks, 0)

    def test_a_dataloader_worker_still_raises(self):
        # The worker takes no optimizer step: nothing there could skip its batch.
        self.skip()

        def collate(rows):
            return torch.nn.functional.one_hot(torch.stack([r[0] for r in rows])[:, 1], VOCAB)

        loader = DataLoader(dataset(), batch_size=BATCH, num_workers=1, collate_fn=collate, multiprocessing_context="fork")
        with self.assertRaises(devassert.DeviceAssertPrevented):
            list(loader)
        self.assertEqual(_state.marks, 0)

    def test_raise_stays_the_default_and_a_nested_level_keeps_the_policy(self):
        devassert.guard("on")
        self.assertEqual(_state.current(), "raise")
        with self.assertRaises(devassert.DeviceAssertPrevented):
            train(dataset())
        self.skip()
        with devassert.guard("strict"):
            self.assertEqual(_state.current(), "skip")
        self.assertEqual(_state.current(), "skip")
        with devassert.guard("on", on_bad_batch="raise"):
            self.assertEqual(_state.current(), "raise")
        self.assertEqual(_state.current(), "skip")
        with self.assertRaises(ValueError):
            devassert.guard(on_bad_batch="ignore")
        with self.assertRaises(ValueError):
            devassert.guard(on_bad_batch="skip", max_skips=-1)

    def test_off_puts_the_cpu_fast_path_and_the_hooks_back(self):
        self.skip()
        self.assertTrue(_violation.PRECHECK_CPU)
        devassert.unguard()
        self.assertFalse(_violation.PRECHECK_CPU)
        self.assertFalse(_state.skipping)
        self.assertIsNone(_async.sink)
        model, opt, _ = train(dataset(bad=()))  # no hook left: plain steps

    def test_async_findings_are_kept_at_the_step(self):
        ref_model, ref_opt, _ = train(dataset(bad=()), leave_out={2})
        _async.FAKE_DEVICE = True
        try:
            devassert.guard("async", on_bad_batch="skip", quarantine=self.path, max_skips=10)
            _state.reset()
            model, opt, _ = train(dataset())
        finally:
            _async.FAKE_DEVICE = False
            _async.reset()
        self.assertSame(snapshot(model, opt), snapshot(ref_model, ref_opt))
        [r] = self.records()
        self.assertEqual((r["dataset_index"], r["op"]), (BAD_INDEX, "embedding"))
        self.assertIn("async: embedding was launched", r["message"])

    def test_a_skipped_bad_batch_keeps_no_frame_of_the_loop_alive(self):
        # What the guard keeps of a bad batch must not hold the loop's frames:
        # they hold the model (with a DDP model, its process group, which the
        # interpreter's exit would then tear down: gloo aborts there).
        for level in ("on", "async"):
            _async.FAKE_DEVICE = level == "async"
            gc.disable()
            try:
                devassert.guard(level, on_bad_batch="skip", quarantine=self.path, max_skips=10)
                _state.reset()
                model, opt, sched = train(dataset())
                alive = weakref.ref(model)
                del model, opt, sched
                self.assertIsNone(alive(), f"{level}: the model outlived the loop (only the garbage collector would free it)")
            finally:
                gc.enable()
                _async.FAKE_DEVICE = False
                _async.reset()
        self.assertEqual(len(self.records()), 2)

    def test_environment_and_summary_at_exit(self):
        code = "import torch, test_skip as t; t.train(t.dataset())"
        env = dict(os.environ, DEVASSERT_ON_BAD_BATCH="skip", DEVASSERT_QUARANTINE=self.path, DEVASSERT_MAX_SKIPS="3", RANK="0")
        program = f"import devassert; devassert.guard(); {code}; print(devassert.quarantine.indices({self.path!r}))"
        out = subprocess.run([sys.executable, "-c", program], cwd=HERE, env=env, capture_output=True, text=True, timeout=300)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertEqual(out.stdout, f"[{BAD_INDEX}]\n")
        self.assertIn(
            f"devassert: skipped 1 of 6 optimizer steps on rank 0 (on_bad_batch=skip, max_skips=3); samples quarantined here: dataset indices {BAD_INDEX} (in {self.path})",
            out.stderr,
        )
        self.assertEqual(quarantine.indices(self.path), [BAD_INDEX])


class Compiled(unittest.TestCase):
    """A bad index in a torch.compile region (Inductor, CPU) under skip: the
    compiled op runs on values made valid and the step is skipped, as in
    eager code; an index that reaches the region as one of its inputs is made
    valid at the boundary (the sample is named), one computed inside the
    region is made valid there (the sample is not known)."""

    def setUp(self):
        from devassert import _support

        if not _support.compiled():
            self.skipTest(_support.compiled_skip_reason())
        self.tmp = tempfile.mkdtemp(prefix="devassert-skip-compiled-")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.path = os.path.join(self.tmp, "quarantine.jsonl")

    def tearDown(self):
        devassert.guard("off", on_bad_batch="raise")

    def train(self, shift, data, leave_out=(), compiled=True):
        class Net(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.net = net()

            def forward(self, x):
                # shift None: the region's input is the index; else an index computed in the region.
                return self.net(x if shift is None else x + shift)

        model = Net()
        opt = torch.optim.AdamW(model.parameters(), lr=0.05)
        run = torch.compile(model, dynamic=False) if compiled else model
        for step, (x,) in enumerate(DataLoader(data, batch_size=BATCH)):
            run(x).square().mean().backward()
            if step not in leave_out:
                opt.step()
            opt.zero_grad()
        return [p.detach().clone() for p in model.parameters()]

    def check(self, shift, sample):
        ref = self.train(shift, dataset(bad=()), leave_out={2}, compiled=False)
        devassert.guard("on", on_bad_batch="skip", quarantine=self.path)
        _state.reset()
        with contextlib.redirect_stderr(io.StringIO()) as err:
            got = self.train(shift, dataset())
        for a, b in zip(got, ref):
            self.assertTrue(torch.equal(a, b), "parameters differ from the reference")
        self.assertEqual((_state.skipped_steps, _state.steps), (1, N // BATCH))
        self.assertIn("skipped the update of step 2 (AdamW): this rank met a bad batch", err.getvalue())
        [r] = quarantine.read(self.path)
        self.assertEqual((r["dataset_index"], r["op"], r["step"]), (sample, "embedding", 2))
        return r

    def test_an_input_index_is_made_valid_at_the_boundary(self):
        self.check(None, BAD_INDEX)

    def test_an_index_computed_in_the_region_is_made_valid_there(self):
        # x + 0: the embedding's index is a value of the graph, not its input.
        r = self.check(0, None)
        self.assertIn("inside a compiled region", r["message"])


class DDP(unittest.TestCase):
    def test_every_rank_skips_the_step_only_rank_1_met(self):
        out = tempfile.mkdtemp(prefix="devassert-ddp-")
        self.addCleanup(shutil.rmtree, out, True)
        cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2", "skip_ddp.py", out]
        # A rank that aborts prints its Python stack.
        env = dict(os.environ, PYTHONFAULTHANDLER="1")
        run = subprocess.run(cmd, cwd=HERE, capture_output=True, text=True, timeout=600, env=env)
        self.assertEqual(run.returncode, 0, two_ranks.failure(run))
        ranks = [torch.load(os.path.join(out, f"rank{r}.pt")) for r in (0, 1)]
        for r in ranks:
            for a, b in zip(r["skipped"]["params"], r["reference"]["params"]):
                self.assertTrue(torch.equal(a, b))
            for a, b in zip(r["skipped"]["state"], r["reference"]["state"]):
                self.assertTrue(all(torch.equal(a[k], b[k]) for k in a))
        for a, b in zip(ranks[0]["skipped"]["params"], ranks[1]["skipped"]["params"]):
            self.assertTrue(torch.equal(a, b))
        self.assertIn("skipped the update of step 2 (AdamW): rank 1 met a bad batch", run.stderr)
        self.assertIn("skipped the update of step 2 (AdamW): this rank met a bad batch", run.stderr)
        [r] = quarantine.read(os.path.join(out, "quarantine.jsonl"))
        self.assertEqual((r["rank"], r["step"], r["values"]), (1, 2, [15]))


class FSDP(unittest.TestCase):
    """FSDP2 (`fully_shard`) and classic FSDP (flat parameters) under torchrun,
    2 gloo ranks on CPU, only rank 1 meeting the bad sample (skip_fsdp.py)."""

    @classmethod
    def setUpClass(cls):
        cls.out = tempfile.mkdtemp(prefix="devassert-fsdp-")
        cls.addClassCleanup(shutil.rmtree, cls.out, True)
        cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2", "skip_fsdp.py", cls.out]
        env = dict(os.environ, PYTHONFAULTHANDLER="1")
        cls.done = subprocess.run(cmd, cwd=HERE, capture_output=True, text=True, timeout=600, env=env)
        cls.ranks = [torch.load(os.path.join(cls.out, f"rank{r}.pt")) for r in (0, 1)] if cls.done.returncode == 0 else None

    def check(self, name):
        self.assertEqual(self.done.returncode, 0, two_ranks.failure(self.done))
        runs = [r[name] for r in self.ranks]
        if "error" in runs[0]:
            self.skipTest(f"{name} does not run on CPU with gloo in torch {torch.__version__}: {runs[0]['error']}")
        for r in runs:
            # Parameters gathered full, and this rank's optimizer state shard.
            for a, b in zip(r["skipped"]["params"], r["reference"]["params"]):
                self.assertTrue(torch.equal(a, b), f"{name}: parameters differ from the reference")
            for a, b in zip(r["skipped"]["state"], r["reference"]["state"]):
                self.assertEqual(sorted(a), sorted(b))
                self.assertTrue(all(torch.equal(a[k], b[k]) for k in a), f"{name}: optimizer state differs")
            self.assertFalse(all(torch.equal(a, b) for a, b in zip(r["every"]["params"], r["reference"]["params"])), "the left-out step changed nothing")
        for a, b in zip(runs[0]["skipped"]["params"], runs[1]["skipped"]["params"]):
            self.assertTrue(torch.equal(a, b), f"{name}: the ranks diverged")
        [record] = quarantine.read(os.path.join(self.out, f"{name}.jsonl"))
        self.assertEqual((record["dataset_index"], record["row"], record["rank"], record["step"], record["values"]), (5, 0, 1, 1, [15]))
        self.assertIn("skipped the update of step 1 (AdamW): rank 1 met a bad batch", self.done.stderr)
        self.assertIn("skipped the update of step 1 (AdamW): this rank met a bad batch", self.done.stderr)

    @unittest.skipUnless(two_ranks.public_dtensor(fsdp=True), "this torch has no public fully_shard (FSDP2, torch 2.6+)")
    def test_fsdp2_every_rank_skips_the_step_only_rank_1_met(self):
        self.check("fsdp2")

    def test_classic_fsdp_every_rank_skips_the_step_only_rank_1_met(self):
        self.check("fsdp1")


class DeepSpeedShapedEngine(unittest.TestCase):
    """An engine whose optimizer wrapper updates its own dynamic loss scaler
    before it calls the torch optimizer once per parameter group (DeepSpeed's
    ZeRO 1/2; zero_shape.py, loaded under DeepSpeed's module name by
    skip_engine.py in a process of its own)."""

    @classmethod
    def setUpClass(cls):
        cls.out = tempfile.mkdtemp(prefix="devassert-engine-")
        cls.addClassCleanup(shutil.rmtree, cls.out, True)
        cls.done = subprocess.run([sys.executable, "skip_engine.py", cls.out], cwd=HERE, capture_output=True, text=True, timeout=600)

    def setUp(self):
        self.assertEqual(self.done.returncode, 0, two_ranks.failure(self.done))
        self.got = torch.load(os.path.join(self.out, "engine.pt"))

    def same(self, run):
        ref = self.got["reference"]
        params = all(torch.equal(a, b) for a, b in zip(run["params"], ref["params"]))
        state = all(torch.equal(a[k], b[k]) for a, b in zip(run["state"], ref["state"]) for k in a)
        return params, state, run["scaler"] == ref["scaler"]

    def test_a_skipped_step_leaves_the_loss_scaler_and_every_group_as_the_reference(self):
        self.assertTrue(self.got["wrapped"], "the wrapper's class was not wrapped when its module loaded")
        self.assertEqual(self.same(self.got["skipped"]), (True, True, True))
        # The step read as an overflow: the engine counted it as skipped and
        # left its LR scheduler, as DeepSpeed's does.
        self.assertEqual(self.got["skipped"]["counts"], (6, 1, 5))
        self.assertIn("skipped the update of step 2 (DeepSpeedZeroOptimizer): this rank met a bad batch", self.done.stderr)
        records = quarantine.read(os.path.join(self.out, "quarantine.jsonl"))
        self.assertEqual((records[0]["dataset_index"], records[0]["step"]), (BAD_INDEX, 2))

    def test_the_torch_optimizers_hook_alone_would_let_the_scaler_count_the_step(self):
        params, state, scaler = self.same(self.got["hook_only"])
        self.assertFalse(scaler)
        self.assertFalse(params and state)  # the second group's update went through


class Tiny(torch.nn.Module):
    """A model the Trainer takes (a dict with the loss), built here: no download."""

    def __init__(self):
        super().__init__()
        self.net = net()

    def forward(self, input_ids, labels=None):
        logits = self.net(input_ids)
        return {"loss": logits.square().mean(), "logits": logits}


class Rows(torch.utils.data.Dataset):
    """dataset() as dicts, for the Trainer's collator."""

    def __init__(self, data):
        self.data = data

    def __len__(self):
        return len(self.data)

    def __getitem__(self, i):
        return {"input_ids": self.data[i][0]}


class HFTrainer(unittest.TestCase):
    def setUp(self):
        import transformers as tf

        self.tf = tf
        self.tmp = tempfile.mkdtemp(prefix="devassert-skip-trainer-")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.path = os.path.join(self.tmp, "quarantine.jsonl")

    def tearDown(self):
        devassert.guard("off", on_bad_batch="raise")

    def train(self, data, callbacks=()):
        tf = self.tf

        class InOrder(tf.Trainer):
            def _get_train_sampler(self, *args, **kwargs):
                return torch.utils.data.SequentialSampler(self.train_dataset)

        args = tf.TrainingArguments(
            output_dir=self.tmp, num_train_epochs=1, per_device_train_batch_size=BATCH, learning_rate=0.05, lr_scheduler_type="constant",
            report_to=[], use_cpu=True, save_strategy="no", logging_strategy="no", disable_tqdm=True, remove_unused_columns=False,
        )  # fmt: skip
        model = Tiny()
        trainer = InOrder(model=model, args=args, train_dataset=Rows(data), callbacks=list(callbacks))
        trainer.train()
        return trainer, model

    def test_trainer_skips_the_bad_batchs_update(self):
        from devassert.integrations.transformers import DevassertCallback

        clean = dataset(bad=())
        reference = torch.utils.data.Subset(clean, [i for i in range(N) if i // BATCH != BAD_INDEX // BATCH])
        _, ref_model = self.train(reference)
        cb = DevassertCallback(warn_only=True, on_bad_batch="skip", quarantine=self.path, max_skips=3)
        with self.assertLogs("transformers.trainer", level="WARNING") as logs, contextlib.redirect_stderr(io.StringIO()):
            trainer, model = self.train(dataset(), [cb])
        for a, b in zip(model.parameters(), ref_model.parameters()):
            self.assertTrue(torch.equal(a, b))
        # The Trainer counts the skipped step; accelerate read it as skipped
        # (as an AMP overflow), so the Trainer did not step its scheduler.
        self.assertEqual(trainer.state.global_step, N // BATCH)
        self.assertEqual(trainer.lr_scheduler.last_epoch, N // BATCH - 1)
        self.assertIn("skipped 1 of 6 optimizer steps", "\n".join(logs.output))
        self.assertEqual(quarantine.indices(self.path), [BAD_INDEX])
        self.assertEqual([r["split"] for r in quarantine.read(self.path)], ["train"])  # the callback named the Trainer's datasets
        self.assertEqual(_intercept.current_level(), "off")
        self.assertFalse(_state.skipping)


class Accelerate(unittest.TestCase):
    """A real accelerate loop on CPU: a skipped step reads as skipped
    (``accelerator.optimizer_step_was_skipped``), so its AcceleratedScheduler
    does not step, as after an AMP overflow."""

    def tearDown(self):
        devassert.guard("off", on_bad_batch="raise")

    def test_the_skipped_step_reads_as_skipped_and_the_scheduler_waits(self):
        from accelerate import Accelerator

        def reference():
            model = net()
            opt = torch.optim.AdamW(model.parameters(), lr=0.05)
            sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.9)
            for step, (x,) in enumerate(DataLoader(dataset(bad=()), batch_size=BATCH)):
                model(x).square().mean().backward()
                if step != 2:
                    opt.step()
                    sched.step()
                opt.zero_grad()
            return model, sched

        from accelerate.optimizer import AcceleratedOptimizer

        plain = vars(AcceleratedOptimizer)["step_was_skipped"]
        ref_model, ref_sched = reference()
        accelerator = Accelerator(cpu=True)
        model = net()
        opt = torch.optim.AdamW(model.parameters(), lr=0.05)
        sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.9)
        model, opt, sched, loader = accelerator.prepare(model, opt, sched, DataLoader(dataset(), batch_size=BATCH))
        # The guard turned on after the scheduler wrapped the optimizer's
        # step (as a Trainer callback does).
        devassert.guard("on", on_bad_batch="skip", max_skips=3)
        _state.reset()
        skipped = []
        with contextlib.redirect_stderr(io.StringIO()):
            for (x,) in loader:
                accelerator.backward(model(x).square().mean())
                opt.step()
                skipped.append(accelerator.optimizer_step_was_skipped)
                sched.step()
                opt.zero_grad()
        self.assertEqual(skipped, [False, False, True, False, False, False])
        self.assertEqual(sched.scheduler.last_epoch, ref_sched.last_epoch)
        self.assertEqual(sched.get_last_lr(), ref_sched.get_last_lr())
        for a, b in zip(accelerator.unwrap_model(model).parameters(), ref_model.parameters()):
            self.assertTrue(torch.equal(a, b))
        self.assertEqual(_state.samples, [BAD_INDEX])
        devassert.guard("off", on_bad_batch="raise")
        self.assertIs(vars(AcceleratedOptimizer)["step_was_skipped"], plain)


class LightningFit(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="devassert-skip-lightning-")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.path = os.path.join(self.tmp, "quarantine.jsonl")

    def tearDown(self):
        devassert.guard("off", on_bad_batch="raise")

    def fit(self, data, callbacks=()):
        import lightning as L

        class Module(L.LightningModule):
            def __init__(self):
                super().__init__()
                self.net = net()

            def training_step(self, batch, i):
                return self.net(batch[0]).square().mean()

            def configure_optimizers(self):
                return torch.optim.AdamW(self.parameters(), lr=0.05)

        module = Module()
        trainer = L.Trainer(max_epochs=1, callbacks=list(callbacks), accelerator="cpu", logger=False, enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False, default_root_dir=self.tmp)
        trainer.fit(module, DataLoader(data, batch_size=BATCH))
        return trainer, module

    def test_lightning_automatic_optimization_skips_the_bad_batchs_update(self):
        from devassert.integrations.lightning import DevassertCallback

        clean = dataset(bad=())
        _, ref = self.fit(torch.utils.data.Subset(clean, [i for i in range(N) if i // BATCH != BAD_INDEX // BATCH]))
        cb = DevassertCallback(warn_only=True, on_bad_batch="skip", quarantine=self.path)
        with self.assertLogs("lightning.pytorch", level="WARNING") as logs, contextlib.redirect_stderr(io.StringIO()):
            trainer, module = self.fit(dataset(), [cb])
        for a, b in zip(module.parameters(), ref.parameters()):
            self.assertTrue(torch.equal(a, b))
        self.assertEqual(trainer.global_step, N // BATCH)
        self.assertIn("skipped 1 of 6 optimizer steps", "\n".join(logs.output))
        self.assertEqual(quarantine.indices(self.path), [BAD_INDEX])
        self.assertEqual([r["split"] for r in quarantine.read(self.path)], ["train"])


if __name__ == "__main__":
    unittest.main()

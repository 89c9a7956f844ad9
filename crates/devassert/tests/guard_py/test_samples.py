"""What the guard says about a bad value: found in bounded memory and time
(a huge view costs what its storage costs), and mapped to the right dataset
samples, or honestly to none, with loaders that prefetch.

Run: python -m unittest test_samples (PYTHONPATH must hold python/).
"""

import collections
import gc
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest
import warnings

import torch
from torch.utils.data import DataLoader, Dataset, IterableDataset, get_worker_info

from devassert._guard import intercept as _intercept
from devassert._checks import samples as _samples
from devassert._checks import violation as _violation

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHONPATH = os.path.abspath(os.path.join(HERE, "..", "..", "..", "..", "python"))


def run_file(code, env=None, timeout=300):
    """Run `code` as a script file (DataLoader workers re-import __main__)."""
    with tempfile.TemporaryDirectory() as tmp:
        script = os.path.join(tmp, "train.py")
        with open(script, "w") as fh:
            fh.write(textwrap.dedent(code))
        full = dict(os.environ, PYTHONPATH=PYTHONPATH, **(env or {}))
        return subprocess.run([sys.executable, script], capture_output=True, text=True, env=full, cwd=tmp, timeout=timeout)


class BoundedDiagnostics(unittest.TestCase):
    def test_a_2_31_element_expanded_index_raises_like_torch_in_small_memory(self):
        # Materialising the view (rows, positions, copies for the repeat) would
        # take 16 GiB: a MemoryError, not the IndexError torch raises.
        code = """
            import json, sys, time, torch
            from devassert._guard import intercept as _intercept; from devassert._checks import violation as _violation
            mode = sys.argv[1] if len(sys.argv) > 1 else MODE
            x = torch.arange(5.0)
            idx = torch.tensor([7]).expand(2**31)
            if mode != "plain":
                _violation.PRECHECK_CPU = mode == "precheck"
                _intercept.set_level("on")

            def peak_mib():
                with open("/proc/self/status") as fh:
                    return next(int(line.split()[1]) for line in fh if line.startswith("VmHWM")) // 1024

            # CPU time, not wall time: the same work on a loaded machine (CI,
            # a shared box) takes the same CPU seconds but far more wall ones.
            before, start = peak_mib(), time.process_time()
            try:
                x[idx]
                kind = None
            except Exception as e:
                kind = [c.__name__ for c in type(e).__mro__]
                finding = getattr(e, "finding", None)
            took = time.process_time() - start
            print(json.dumps({"kind": kind, "s": took, "mib": peak_mib() - before, "finding": finding}))
        """
        got = {}
        for mode in ("plain", "cpu", "precheck"):
            r = run_file(code.replace("MODE", repr(mode)))
            self.assertEqual(r.returncode, 0, r.stderr)
            got[mode] = json.loads(r.stdout)
        self.assertEqual(got["plain"]["kind"][0], "IndexError", got["plain"])
        for mode in ("cpu", "precheck"):
            g = got[mode]
            self.assertIn("IndexError", g["kind"], (mode, g))
            self.assertTrue(g["kind"][0].startswith("DeviceAssertPrevented"), (mode, g))
            # torch itself: ~10 ms, ~25 MiB; the guard adds one import of
            # torch's meta registrations (~0.4 s) and small tensors.
            self.assertLess(g["mib"], got["plain"]["mib"] + 128, got)
            self.assertLess(g["s"], got["plain"]["s"] + 3.0, got)
            f = g["finding"]
            self.assertEqual(f["count"], 2**31)
            self.assertEqual(f["values"], [7])
            self.assertEqual([p["position"] for p in f["locations"]], [[i] for i in range(_violation.MAX_POSITIONS)])
        print("\n2^31 expanded index:", {m: (round(g["s"], 3), g["mib"]) for m, g in got.items()}, file=sys.stderr)


class FirstPlaces(unittest.TestCase):
    """The first places of bad values, unfolded from the collapsed mask, are
    exactly the first `nonzero` places of the materialised argument."""

    def check(self, idx, size):
        for precheck in (False, True):
            _violation.PRECHECK_CPU = precheck
            _intercept.set_level("on")
            try:
                torch.arange(float(size))[idx]
            except IndexError as e:
                got = [p["position"] for p in e.finding["locations"]]
                count = e.finding["count"]
            else:
                self.fail("no IndexError")
            finally:
                _violation.PRECHECK_CPU = False
                _intercept.set_level("off")
            dense = idx.contiguous()
            bad = (dense >= size) | (dense < -size)
            self.assertEqual(got, bad.nonzero()[: _violation.MAX_POSITIONS].tolist(), (idx.shape, idx.stride()))
            self.assertEqual(count, int(bad.sum()))

    def test_expanded_dims_anywhere(self):
        row = torch.tensor([1, 9, 2, 9, 0])
        self.check(row.expand(3, 5), 5)
        self.check(row.view(5, 1).expand(5, 4), 5)
        self.check(row.view(1, 5, 1).expand(2, 5, 3), 5)
        self.check(torch.tensor([[0, 1], [7, 2]]).view(2, 1, 2).expand(2, 6, 2), 5)
        self.check(torch.tensor(9).expand(2, 3), 5)

    def test_a_mostly_bad_index_larger_than_a_search_chunk(self):
        idx = torch.full((3, 1 << 19), 2)
        idx[2, 5:] = 11
        idx[1, -1] = -12
        self.check(idx, 5)


# --- dataset samples under loaders that prefetch ------------------------------------

N, BATCH, FAILS = 32, 4, 2  # the program fails on batch 2 (samples 8..11)
# Row 1 of batches 1, 2 and 3 holds the same bad id and every other row is
# the same: those batches hold equal tensors, so content alone is ambiguous.
SHARED_BAD = (5, 9, 13)
ONLY_BAD = (9,)


def item(i, bad):
    return {"ids": torch.tensor([1, 2, 60 if i in bad else 3]), "label": torch.tensor(1)}


class Items(Dataset):
    def __init__(self, bad):
        self.bad = bad

    def __len__(self):
        return N

    def __getitem__(self, i):
        return item(i, self.bad)


class Stream(IterableDataset):
    """The same items, split between workers; no sampler indices."""

    def __init__(self, bad):
        self.bad = bad

    def __iter__(self):
        info = get_worker_info()
        step, first = (info.num_workers, info.id) if info else (1, 0)
        return (item(i, self.bad) for i in range(first, N, step))


class Prefetcher:
    """Hands out a batch only once the next `ahead` are fetched, moved by
    `move` (timm's PrefetchLoader and CUDA-stream prefetchers copy with
    non_blocking=True; Lightning's fetcher keeps the object)."""

    def __init__(self, loader, ahead=1, move=None):
        self.loader, self.ahead, self.move = loader, ahead, move

    def __iter__(self):
        waiting = collections.deque()
        for batch in self.loader:
            waiting.append(self.move(batch) if self.move else batch)
            if len(waiting) > self.ahead:
                yield waiting.popleft()
        yield from waiting


def copied(batch):
    return {k: v.to("cpu", copy=True, non_blocking=True) for k, v in batch.items()}


def accelerate_shard(loader):
    from accelerate import Accelerator

    return Accelerator(cpu=True).prepare_data_loader(loader)


# name: (make the loader from (dataset, workers), whether the batch the op
# gets is an object the DataLoader returned (then the match is proven))
SHAPES = {
    "plain": (lambda ds, w: DataLoader(ds, BATCH, num_workers=w), True),
    "plain, copied in the loop": (lambda ds, w: Prefetcher(DataLoader(ds, BATCH, num_workers=w), 0, copied), False),
    "timm-style prefetcher": (lambda ds, w: Prefetcher(DataLoader(ds, BATCH, num_workers=w), 1, copied), False),
    "cuda-stream prefetcher, pinned, 2 ahead": (lambda ds, w: Prefetcher(DataLoader(ds, BATCH, num_workers=w, pin_memory=True), 2, copied), False),
    "pin_memory": (lambda ds, w: DataLoader(ds, BATCH, num_workers=w, pin_memory=True), True),
    "accelerate DataLoaderShard": (lambda ds, w: accelerate_shard(DataLoader(ds, BATCH, num_workers=w)), True),
    "lightning-style fetcher": (lambda ds, w: Prefetcher(DataLoader(ds, BATCH, num_workers=w), 1), True),
    "persistent_workers, 2nd epoch": (lambda ds, w: DataLoader(ds, BATCH, num_workers=w, persistent_workers=w > 0), True),
}


def first_finding(loader, epochs=1):
    """Run `loader` as a training loop that catches a failure on batch FAILS
    of its last epoch; the finding of the guard's exception."""
    emb = torch.nn.Embedding(50, 4)
    finding = None
    for epoch in range(epochs):
        for k, batch in enumerate(loader):
            if epoch == epochs - 1 and k == FAILS:
                try:
                    emb(batch["ids"])
                    raise AssertionError("no IndexError")
                except IndexError as e:
                    finding = e.finding
            # The program goes on to the end of the epoch (persistent workers
            # left mid-epoch take seconds to shut down).
    assert finding is not None, "the loop never reached the bad batch"
    return finding


class SamplesUnderPrefetching(unittest.TestCase):
    def findings(self, make, dataset, workers, epochs=1):
        """The finding on the CPU path and on the forced accelerator path."""
        out = {}
        for precheck in (False, True):
            _samples._recent.clear()
            _violation.PRECHECK_CPU = precheck
            _intercept.set_level("on")
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # pin_memory without an accelerator
                    out["precheck" if precheck else "cpu"] = first_finding(make(dataset, workers), epochs)
            finally:
                _violation.PRECHECK_CPU = False
                _intercept.set_level("off")
                gc.collect()  # shut the workers down here, not in a later fork
        return out

    def test_right_or_not_certain_with_every_loader_shape(self):
        for workers in (0, 2):
            for name, (make, proven) in SHAPES.items():
                epochs = 2 if name.startswith("persistent") else 1
                for bad in (SHARED_BAD, ONLY_BAD):
                    for mode, f in self.findings(make, Items(bad), workers, epochs).items():
                        where = (name, workers, bad, mode)
                        indices = [s["dataset_index"] for s in f.get("samples", [])]
                        self.assertIn(9, indices, where)
                        if f["samples_certain"]:
                            self.assertEqual(f["samples"], [{"dataset_index": 9, "row": 1}], where)
                            self.assertEqual(f["evidence"].get("worker"), 0 if workers else None, where)
                        else:
                            self.assertIn("may hold this tensor", f["evidence"]["samples_note"], where)
                        # Proven by identity, or by content no other batch shares.
                        self.assertEqual(f["samples_certain"], proven or bad == ONLY_BAD, where)
                        if not f["samples_certain"]:
                            # Every fetched batch holding the row is named.
                            fetched = [i for i in SHARED_BAD if i // BATCH <= FAILS + (0 if name.startswith("plain") else 2)]
                            self.assertTrue(set(indices) <= set(fetched), where)

    def test_an_iterable_dataset_never_names_samples(self):
        for workers in (0, 2):
            for name in ("plain", "timm-style prefetcher", "plain, copied in the loop"):
                make = SHAPES[name][0]
                # Sample 8 is in batch 2 however the workers split the stream.
                for mode, f in self.findings(make, Stream(SHARED_BAD + (8,)), workers).items():
                    self.assertNotIn("samples", f, (name, workers, mode))
                    self.assertNotIn("samples_certain", f, (name, workers, mode))


class DerivedTensorsUnderPrefetching(unittest.TestCase):
    """A tensor computed from the batch (ids + an offset) is held by no batch:
    its rows are named in the batch the loop is processing, never in the one
    a prefetching loader fetched ahead; with none known, no sample is named."""

    class Offsets(Dataset):
        def __len__(self):
            return N

        def __getitem__(self, i):
            return {"ids": torch.tensor([1, 2, 45 if i == 9 else 3])}

    def finding(self, loader):
        emb = torch.nn.Embedding(50, 4)
        found = None
        _samples._recent.clear()
        _intercept.set_level("on")
        try:
            for k, batch in enumerate(loader):
                if k == FAILS:
                    try:
                        emb(batch["ids"] + 10)  # only sample 9's 45 goes past the table
                    except IndexError as e:
                        found = e.finding
        finally:
            _intercept.set_level("off")
            gc.collect()
        self.assertIsNotNone(found)
        return found

    def test_the_processed_batch_or_none(self):
        for name in ("plain", "accelerate DataLoaderShard", "lightning-style fetcher", "timm-style prefetcher"):
            make, proven = SHAPES[name]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                f = self.finding(make(self.Offsets(), 0))
            self.assertFalse(f["samples_certain"] if "samples" in f else False, name)
            if proven:  # the loop holds a batch the DataLoader returned
                self.assertEqual(f["samples"], [{"dataset_index": 9, "row": 1}], name)
                self.assertIn("computed from the batch being processed", f["evidence"]["samples_note"], name)
            else:  # copies: the batch being processed is not known
                self.assertNotIn("samples", f, name)


class WorkerFindingsInTheParent(unittest.TestCase):
    def test_the_parent_re_raises_the_workers_finding_and_records_it_as_the_end(self):
        # Samples 3 (batch 1, worker 1) and 5 (batch 2, worker 0) fail inside
        # the workers; batches are handed out in order, so sample 3 ends it.
        code = """
            import json, torch, devassert
            from torch.utils.data import DataLoader, Dataset
            table = torch.arange(10.0)

            class Items(Dataset):
                def __len__(self):
                    return 16
                def __getitem__(self, i):
                    return table[torch.tensor([20 + i if i in (3, 5) else i % 10])]

            if __name__ == "__main__":
                devassert.guard()
                try:
                    for batch in DataLoader(Items(), batch_size=2, num_workers=2):
                        pass
                except IndexError as e:
                    print(json.dumps(e.finding))
                    if RAISE:
                        raise
        """
        for uncaught in (0, 1):
            with tempfile.TemporaryDirectory() as reports:
                r = run_file(code.replace("RAISE", str(uncaught)), env={"DEVASSERT_REPORT_DIR": reports})
                self.assertEqual(r.returncode, uncaught, r.stderr)
                carried = json.loads(r.stdout)
                self.assertEqual(carried["samples"], [{"dataset_index": 3}])
                self.assertEqual(carried["evidence"]["worker"], 1)
                written = {}
                records = []
                for name in os.listdir(reports):
                    with open(os.path.join(reports, name)) as fh:
                        if name.startswith("guard-"):
                            for f in map(json.loads, fh):
                                written[f["evidence"]["raise_id"]] = f
                        else:
                            records.append(json.load(fh))
                rid = carried["evidence"]["raise_id"]
                self.assertEqual(written[rid]["samples"], [{"dataset_index": 3}])
                # The parent wrote no finding of its own, but its record says
                # which raise reached its top.
                self.assertEqual([rec["uncaught"] for rec in records], [[rid] if uncaught else []])
                if uncaught:
                    self.assertIn("dataset sample 3", r.stderr)


if __name__ == "__main__":
    unittest.main()

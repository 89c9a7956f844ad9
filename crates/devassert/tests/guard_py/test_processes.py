"""The guard follows the process tree: children started by spawn and
forkserver (``torch.multiprocessing.spawn``, ``start_processes(...,
start_method=...)``) from a guarded parent run guarded at the parent's level
without ``devassert run``, and their findings say where the guard came from;
after ``unguard()`` they run plain. And a ``torchrun --nproc_per_node 2``
gloo job with FSDP2 (``fully_shard``) and a tensor-parallel embedding
(DTensor): valid training gives bit-identical parameters guarded and plain,
and a bad id is stopped on every rank with the id, the rank and the sample.

Run: python -m unittest test_processes (PYTHONPATH must hold python/).
"""

import json
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

import two_ranks

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHONPATH = os.path.abspath(os.path.join(HERE, "..", "..", "..", "..", "python"))



PARENT = r"""
import json, os, sys
import torch
import torch.multiprocessing as mp


def child(rank, out, tag):
    import sys
    level = None
    intercept = sys.modules.get("devassert._guard.intercept")
    try:
        torch.nn.Embedding(10, 2)(torch.tensor([3, 12]))
        got = None
    except Exception as e:
        got = {"type": type(e).__name__, "finding": getattr(e, "finding", None)}
    level = intercept.current_level() if intercept else "not installed"
    with open(os.path.join(out, f"{tag}.json"), "w") as f:
        json.dump({"level": level, "error": got}, f)


if __name__ == "__main__":
    out = sys.argv[1]
    import devassert

    devassert.guard("strict")
    mp.spawn(child, args=(out, "spawn"), nprocs=1)
    mp.start_processes(child, args=(out, "forkserver"), nprocs=1, start_method="forkserver")
    devassert.unguard()
    mp.spawn(child, args=(out, "after_unguard"), nprocs=1)
    with open(os.path.join(out, "parent.json"), "w") as f:
        json.dump({"pid": os.getpid()}, f)
"""


TORCHRUN = r'''
import json, os, sys
import torch, torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

dist.init_process_group("gloo")
rank = dist.get_rank()
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import fully_shard
from torch.distributed.tensor import DTensor, Replicate
from torch.distributed.tensor.parallel import RowwiseParallel, parallelize_module
import devassert

mesh = init_device_mesh("cpu", (2,))
VOCAB, DIM, CLASSES = 64, 8, 4


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, DIM)
        self.head = nn.Linear(DIM, CLASSES)

    def forward(self, ids):
        return self.head(self.emb(ids).mean(1))


def build():
    torch.manual_seed(0)
    net = Net()
    # Tensor parallel: the table's rows split over the ranks, ids replicated.
    parallelize_module(net, mesh, {"emb": RowwiseParallel(input_layouts=Replicate())})
    fully_shard(net.head, mesh=mesh)  # FSDP2
    return net


def data(bad):
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(0, VOCAB, (16, 6), generator=g)
    labels = torch.randint(0, CLASSES, (16,), generator=g)
    if bad:
        ids[11, 2] = VOCAB + 3  # sample 11: in batch 2 (batch_size 4), row 3
    # Every rank of a tensor-parallel group reads the same batches.
    return DataLoader(TensorDataset(ids, labels), batch_size=4)


def train(bad=False):
    net = build()
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    for ids, labels in data(bad):
        loss = F.cross_entropy(net(ids), labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return {n: (p.full_tensor() if isinstance(p, DTensor) else p).detach().clone() for n, p in net.named_parameters()}


out = {"rank": rank}
plain = train()
try:
    train(bad=True)  # plain: the row-sharded table embeds the id to zeros
    out["plain_bad"] = None
except Exception as e:
    out["plain_bad"] = type(e).__name__
devassert.guard()
guarded = train()
out["identical"] = sorted(plain) == sorted(guarded) and all(torch.equal(plain[n], guarded[n]) for n in plain)
try:
    train(bad=True)
    out["error"] = None
except Exception as e:
    out["error"] = {"type": type(e).__name__, "bases": [c.__name__ for c in type(e).__mro__], "finding": getattr(e, "finding", None)}
with open(os.path.join(sys.argv[1], f"rank{rank}.json"), "w") as f:
    json.dump(out, f)
dist.barrier()
dist.destroy_process_group()
'''


@unittest.skipUnless(two_ranks.public_dtensor(fsdp=True), "this torch has no public DTensor / fully_shard API (torch 2.6+)")
class TorchrunFSDP2AndTensorParallel(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        script = os.path.join(cls.tmp.name, "train.py")
        with open(script, "w") as f:
            f.write(TORCHRUN)
        cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2", script, cls.tmp.name]
        cls.ranks = two_ranks.run(cmd, cls.tmp.name, cwd=cls.tmp.name)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_valid_training_is_bit_identical_guarded(self):
        for r in self.ranks:
            self.assertTrue(r["identical"], r["rank"])

    def test_every_rank_names_the_id_its_rank_and_the_sample(self):
        for rank, r in enumerate(self.ranks):
            self.assertIsNone(r["plain_bad"], "plain DTensor masks the id: no error")
            self.assertIn("IndexError", r["error"]["bases"])
            f = r["error"]["finding"]
            self.assertEqual((f["rule"], f["values"], f["bound"]["high"]), ("DA101", [67], 64))
            self.assertEqual(f["evidence"]["rank"], rank)
            self.assertEqual(f["evidence"]["tensor"]["subclass"], "DTensor")
            self.assertEqual(f["locations"][0]["position"], [3, 2])
            self.assertEqual((f["samples"], f["samples_certain"]), ([{"dataset_index": 11, "row": 3}], True))
            self.assertEqual(f["location"]["function"], "forward")


class SpawnedChildren(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        script = os.path.join(cls.tmp.name, "parent.py")
        with open(script, "w") as f:
            f.write(textwrap.dedent(PARENT))
        # The package is not installed: only the parent finds it (its own
        # sys.path), as with a checkout added at run time.
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "DEVASSERT_GUARD")}
        env.update(OMP_NUM_THREADS="1", PYTHONFAULTHANDLER="1")
        code = f"import sys; sys.path.insert(0, {PYTHONPATH!r}); sys.argv = [{script!r}, {cls.tmp.name!r}]; import runpy; runpy.run_path({script!r}, run_name='__main__')"
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=600, cwd=cls.tmp.name)
        assert done.returncode == 0, two_ranks.failure(done)
        cls.results = {}
        for tag in ("spawn", "forkserver", "after_unguard", "parent"):
            with open(os.path.join(cls.tmp.name, f"{tag}.json")) as f:
                cls.results[tag] = json.load(f)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_children_run_at_the_parents_level_and_say_so(self):
        for method in ("spawn", "forkserver"):
            got = self.results[method]
            self.assertEqual(got["level"], "strict", method)
            self.assertEqual(got["error"]["type"], "DeviceAssertPreventedIndexError", method)
            inherited = got["error"]["finding"]["evidence"]["guard_inherited"]
            self.assertEqual(inherited, {"pid": self.results["parent"]["pid"], "start_method": method, "level": "strict"})

    def test_after_unguard_children_run_plain(self):
        got = self.results["after_unguard"]
        self.assertEqual(got["level"], "not installed")
        self.assertEqual(got["error"], {"type": "IndexError", "finding": None})


if __name__ == "__main__":
    unittest.main()

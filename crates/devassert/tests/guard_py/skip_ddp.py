"""Run by test_skip under `torchrun --standalone --nproc_per_node 2` on CPU
(gloo): DDP over a small model, rank 1 meets a bad sample at step 2. Each
rank trains once guarded with on_bad_batch="skip", once unguarded leaving
step 2's update out (the reference), and saves both to OUT/rank<r>.pt."""

import faulthandler
import os
import sys

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

import devassert

VOCAB, STEPS, BAD_STEP = 12, 5, 2


def model():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Embedding(VOCAB, 4), torch.nn.Flatten(), torch.nn.Linear(12, 3))


def batches(rank, bad):
    g = torch.Generator().manual_seed(100 + rank)
    out = [torch.randint(0, VOCAB, (2, 3), generator=g) for _ in range(STEPS)]
    if bad and rank == 1:
        out[BAD_STEP][0, 2] = VOCAB + 3
    return out


def train(rank, bad, leave_out=None):
    net = DDP(model())
    opt = torch.optim.AdamW(net.parameters(), lr=0.05)
    for step, x in enumerate(batches(rank, bad)):
        net(x).square().mean().backward()
        if step != leave_out:
            opt.step()
        opt.zero_grad()
    return {"params": [p.detach().clone() for p in net.parameters()], "state": [{k: v.clone() for k, v in opt.state[p].items()} for p in net.parameters()]}


def main(out):
    # A rank that hangs (a collective or teardown deadlock) prints every
    # thread's stack and exits, well before the test's own timeout.
    faulthandler.dump_traceback_later(300, exit=True)
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    reference = train(rank, bad=False, leave_out=BAD_STEP)
    devassert.guard(on_bad_batch="skip", quarantine=os.path.join(out, "quarantine.jsonl"))
    skipped = train(rank, bad=True)
    devassert.unguard()
    torch.save({"reference": reference, "skipped": skipped}, os.path.join(out, f"rank{rank}.pt"))
    dist.destroy_process_group()


if __name__ == "__main__":
    main(sys.argv[1])

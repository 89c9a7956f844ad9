"""Run by test_skip under `torchrun --standalone --nproc_per_node 2` on CPU
(gloo): FSDP2 (`fully_shard`) and classic FSDP (`FullyShardedDataParallel`,
flat parameters) over a small model; each rank reads its half of one dataset
through a DistributedSampler, and only rank 1 meets the bad sample (dataset
index 5: rank 1's batch 1, row 0). Each wrapping trains once guarded with
on_bad_batch="skip" and once unguarded leaving step 1's update out (the
reference), and once unguarded with every update on clean data (which must
differ from the reference). OUT/rank<r>.pt holds, per wrapping, the full
parameters (gathered) and this rank's optimizer state shard of each run, or
the error that kept the wrapping from running on this torch."""

import faulthandler
import os
import sys

import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

import devassert

VOCAB, N, BATCH, BAD_INDEX, BAD_STEP = 12, 12, 2, 5, 1


def model():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Embedding(VOCAB, 4), torch.nn.Flatten(), torch.nn.Linear(12, 3))


def data(bad):
    g = torch.Generator().manual_seed(7)
    x = torch.randint(0, VOCAB, (N, 3), generator=g)
    if bad:
        x[BAD_INDEX, 2] = VOCAB + 3
    ds = TensorDataset(x)
    return DataLoader(ds, batch_size=BATCH, sampler=DistributedSampler(ds, shuffle=False))


def fsdp2(net):
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import fully_shard

    mesh = init_device_mesh("cpu", (dist.get_world_size(),))
    fully_shard(net[0], mesh=mesh)
    fully_shard(net, mesh=mesh)
    return net


def fsdp2_full(net):
    return [p.full_tensor().detach().clone() for p in net.parameters()]


def fsdp1(net):
    from torch.distributed.fsdp import FullyShardedDataParallel as FSDP

    return FSDP(net, device_id=torch.device("cpu"), use_orig_params=False)


def fsdp1_full(net):
    from torch.distributed.fsdp import FullyShardedDataParallel as FSDP

    with FSDP.summon_full_params(net):
        return [p.detach().clone() for p in net.parameters()]


def local(t):
    return t.to_local() if hasattr(t, "to_local") else t


def train(wrap, full, bad, leave_out=None):
    net = wrap(model())
    opt = torch.optim.AdamW(net.parameters(), lr=0.05)
    for step, (x,) in enumerate(data(bad)):
        net(x).square().mean().backward()
        if step != leave_out:
            opt.step()
        opt.zero_grad()
    state = [{k: local(v).clone() for k, v in opt.state[p].items()} for p in opt.param_groups[0]["params"]]
    return {"params": full(net), "state": state}


def main(out):
    # A rank that hangs (a collective or teardown deadlock) prints every
    # thread's stack and exits, well before the test's own timeout.
    faulthandler.dump_traceback_later(300, exit=True)
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    saved = {}
    for name, wrap, full in (("fsdp2", fsdp2, fsdp2_full), ("fsdp1", fsdp1, fsdp1_full)):
        try:
            reference = train(wrap, full, bad=False, leave_out=BAD_STEP)
        except Exception as e:  # noqa: BLE001 - this torch cannot run the wrapping on CPU: say why
            saved[name] = {"error": f"{type(e).__name__}: {e}"}
            continue
        every = train(wrap, full, bad=False)
        devassert.guard(on_bad_batch="skip", quarantine=os.path.join(out, f"{name}.jsonl"))
        skipped = train(wrap, full, bad=True)
        devassert.unguard()
        saved[name] = {"reference": reference, "skipped": skipped, "every": every}
    torch.save(saved, os.path.join(out, f"rank{rank}.pt"))
    dist.destroy_process_group()


if __name__ == "__main__":
    main(sys.argv[1])

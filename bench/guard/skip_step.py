"""What `on_bad_batch="skip"` costs on a valid training step, on CPU, beside
plain PyTorch and the guard under "raise", in the same process.

The step: a nanoGPT-sized model (token and position embeddings, 2
transformer layers, d=64, cross-entropy over the vocabulary) with AdamW.
Variants alternate block by block so load changes on a shared machine hit all
alike; medians are reported. Under "skip" each guarded op is checked before
it runs on CPU (one min/max), where "raise" lets the CPU kernel check first,
and each optimizer step runs the policy's pre-hook.

With --collective, also the decision's collective alone: one all_reduce(MAX)
of two int64 between 2 gloo processes on this machine (what every optimizer
step adds when torch.distributed runs).

    python bench/guard/skip_step.py [--reps 7] [--steps 20] [--threads 1] [--collective]
"""

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import devassert  # noqa: E402

VOCAB, D, T, B = 512, 64, 64, 8


class GPT(nn.Module):
    def __init__(self):
        super().__init__()
        self.wte = nn.Embedding(VOCAB, D)
        self.wpe = nn.Embedding(T, D)
        layer = nn.TransformerEncoderLayer(D, 4, 4 * D, dropout=0.0, batch_first=True)
        self.blocks = nn.TransformerEncoder(layer, 2)
        self.head = nn.Linear(D, VOCAB)

    def forward(self, ids, targets):
        pos = torch.arange(ids.size(1))
        x = self.blocks(self.wte(ids) + self.wpe(pos))
        return F.cross_entropy(self.head(x).flatten(0, 1), targets.flatten())


def steps(model, opt, batches):
    t0 = time.perf_counter()
    for ids, targets in batches:
        model(ids, targets).backward()
        opt.step()
        opt.zero_grad()
    return (time.perf_counter() - t0) / len(batches)


VARIANTS = {
    "plain": lambda: devassert.guard("off", on_bad_batch="raise"),
    "guard on (raise)": lambda: devassert.guard("on", on_bad_batch="raise"),
    "guard on, skip": lambda: devassert.guard("on", on_bad_batch="skip", max_skips=10),
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--collective", action="store_true")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    model = GPT()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    batches = [(torch.randint(0, VOCAB, (B, T)), torch.randint(0, VOCAB, (B, T))) for _ in range(a.steps)]
    times = {name: [] for name in VARIANTS}
    for name, on in VARIANTS.items():  # warm-up
        on()
        steps(model, opt, batches[:3])
    for _ in range(a.reps):
        for name, on in VARIANTS.items():
            on()
            times[name].append(steps(model, opt, batches))
    devassert.guard("off", on_bad_batch="raise")
    plain = statistics.median(times["plain"])
    print(f"training step, nanoGPT-sized (B={B}, T={T}, d={D}, 2 layers), AdamW, CPU, {a.threads} thread(s), median of {a.reps} x {a.steps} steps")
    for name, ts in times.items():
        m = statistics.median(ts)
        print(f"  {name:<18} {m * 1e3:8.2f} ms/step  {m / plain:5.3f}x plain")
    if a.collective:
        collective(a.reps)


def _rank(rank, port, reps, out):
    import torch.distributed as dist

    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=2)
    flag = torch.zeros(2, dtype=torch.int64)
    for _ in range(20):
        dist.all_reduce(flag, op=dist.ReduceOp.MAX)
    ts = []
    for _ in range(reps):
        dist.barrier()
        t0 = time.perf_counter()
        for _ in range(200):
            dist.all_reduce(flag, op=dist.ReduceOp.MAX)
        ts.append((time.perf_counter() - t0) / 200)
    if rank == 0:
        out.put(statistics.median(ts))
    dist.destroy_process_group()


def collective(reps):
    import socket

    import torch.multiprocessing as mp

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ctx = mp.get_context("spawn")
    out = ctx.Queue()
    procs = [ctx.Process(target=_rank, args=(r, port, reps, out)) for r in (0, 1)]
    for p in procs:
        p.start()
    median = out.get(timeout=300)
    for p in procs:
        p.join()
    print(f"  the step's decision: all_reduce(MAX) of 2 int64, 2 gloo ranks on this machine: {median * 1e6:.0f} us per step")


if __name__ == "__main__":
    main()

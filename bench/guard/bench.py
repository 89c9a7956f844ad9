"""What the guard costs on CPU, as ratios to plain PyTorch in the same process.

1. Per call: an op that passes the guard's first test (`x[3]`: an int key) and
   guarded ops on valid input (`gather`, `F.embedding`, `F.cross_entropy`),
   with the guard's wrappers, on its accelerator path forced on CPU (one
   amin/amax and a sync, as on a GPU), on the async path forced on CPU (the
   check computed on the device, the op run on safe values, no sync: on CPU a
   plain copy stands for the pinned copy and the event is done at once, so
   this is the host-side launch cost a GPU pays), and, for comparison, the two
   other interceptions the guard could use, each passing every call straight
   through (their floor: no check at all): a TorchFunctionMode that declines
   every op it does not guard (the interception devassert used to use), and
   Python kernels registered with torch.library at the dispatcher
   (ADInplaceOrView: the one key between autograd and the backend that every
   non-inference tensor carries; a kernel redispatches below it).
2. Per training step: a nanoGPT-sized model (2 layers, d=64, the size where
   per-call cost shows) and a 4-layer d=256 transformer.
3. With --compiled: the nanoGPT-sized step with the model under
   torch.compile (Inductor), plain, guarded at the boundary only, and guarded
   (the guard checks the compiled region's inputs at its boundary, and the
   positions computed from the ids, RoBERTa-style, feeding `wpe` inside the
   graph), and the
   one-time compile cost: the first call's time of each, and the time the
   guard spent reading and instrumenting graphs.

Variants alternate block by block so that load changes on a shared machine
hit all alike; medians are reported.

    python bench/guard/bench.py [--reps 7] [--steps 10] [--threads 1]
"""

import argparse
import os
import statistics
import sys
import time
import timeit
import types

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch.overrides import TorchFunctionMode  # noqa: E402

from devassert._checks import deferred as _async  # noqa: E402
from devassert._compiled import boundary as _compiled  # noqa: E402
from devassert._compiled import graph as _graph  # noqa: E402
from devassert._compiled import inside as _compiled_inside  # noqa: E402
from devassert._guard import intercept as _intercept  # noqa: E402
from devassert._checks import violation as _violation  # noqa: E402


class DecliningMode(TorchFunctionMode):
    """The alternative design: one global mode that returns at once for ops it
    does not guard. Measured here only."""

    GUARDED = {torch.gather, torch.Tensor.gather, torch.Tensor.__getitem__}

    def __torch_function__(self, func, types, args=(), kwargs=None):
        if func not in self.GUARDED:
            return func(*args, **(kwargs or {}))
        return func(*args, **(kwargs or {}))


class Variant:
    def __init__(self, name, enter, leave):
        self.name, self.enter, self.leave = name, enter, leave


def _level(level, precheck=False):
    def enter():
        _violation.PRECHECK_CPU = precheck
        _async.FAKE_DEVICE = level == "async"
        _intercept.set_level(level)

    def leave():
        _async.poll(wait=True)
        _violation.PRECHECK_CPU = False
        _async.FAKE_DEVICE = False
        _async.reset()
        _intercept.set_level("off")

    return enter, leave


DISPATCHED = ("gather", "embedding", "index.Tensor", "nll_loss_forward")


def _dispatcher():
    """Pass-through Python kernels for the guarded aten ops (measured here only)."""
    holder = []
    after = torch._C._after_ADInplaceOrView_keyset

    def kernel(op):
        def redispatch(keyset, *args, **kwargs):
            return op.redispatch(keyset & after, *args, **kwargs)

        return redispatch

    def enter():
        lib = torch.library.Library("aten", "IMPL")
        for name in DISPATCHED:
            packet, _, overload = name.partition(".")
            op = getattr(getattr(torch.ops.aten, packet), overload or "default")
            lib.impl(name, kernel(op), "ADInplaceOrView", with_keyset=True)
        holder.append(lib)

    def leave():
        holder.pop()._destroy()

    return enter, leave


def _mode():
    holder = []

    def enter():
        holder.append(DecliningMode())
        holder[-1].__enter__()

    def leave():
        holder.pop().__exit__(None, None, None)

    return enter, leave


VARIANTS = [
    Variant("plain", lambda: None, lambda: None),
    Variant("guard", *_level("on")),
    Variant("guard, accelerator path", *_level("on", precheck=True)),
    Variant("async, accelerator path", *_level("async", precheck=True)),
    Variant("declining mode", *_mode()),
    Variant("dispatcher kernels", *_dispatcher()),
]
STEP_VARIANTS = ("plain", "guard", "guard, accelerator path", "async, accelerator path")


def per_call(reps, number):
    x = torch.randn(64, 64)
    idx = torch.randint(0, 64, (64, 8))
    ids = torch.randint(0, 64, (8, 16))
    logits, labels = torch.randn(8, 10), torch.randint(0, 10, (8,))
    stmts = {
        "x[3]": lambda: x[3],
        "gather": lambda: torch.gather(x, 1, idx),
        "embedding": lambda: F.embedding(ids, x),
        "cross_entropy": lambda: F.cross_entropy(logits, labels),
    }
    out = {}
    for label, fn in stmts.items():
        times = {v.name: [] for v in VARIANTS}
        for r in range(reps):
            order = VARIANTS if r % 2 == 0 else VARIANTS[::-1]
            for v in order:
                v.enter()
                try:
                    times[v.name].append(min(timeit.repeat(fn, number=number, repeat=3)) / number * 1e6)
                finally:
                    v.leave()
        out[label] = {k: statistics.median(t) for k, t in times.items()}
    return out


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, d))
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    """A character-level GPT of nanoGPT's shape (token and position tables,
    pre-norm blocks, tied head), small enough that per-call costs show."""

    def __init__(self, vocab, d, layers, heads, block, positions_from_ids=False):
        super().__init__()
        # nanoGPT's positions are `arange(T)`: a constant the compiled
        # boundary checks once. HF's RoBERTa-style models compute them from
        # the ids (a cumsum over the non-padding mask): an index computed in
        # the region, which the guard checks inside the compiled graph.
        self.positions_from_ids = positions_from_ids
        self.wte, self.wpe = nn.Embedding(vocab, d), nn.Embedding(block, d)
        self.blocks = nn.ModuleList(Block(d, heads) for _ in range(layers))
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)
        self.head.weight = self.wte.weight

    def forward(self, idx, targets):
        if self.positions_from_ids:
            pos = idx.ne(-1).long().cumsum(1) - 1
        else:
            pos = torch.arange(idx.size(1))
        x = self.wte(idx) + self.wpe(pos)
        for blk in self.blocks:
            x = blk(x)
        logits = self.head(self.ln(x))
        return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.reshape(-1), ignore_index=-1)


def train(step_fn, opt, x, y, steps):
    """Seconds per training step over `steps` steps of `step_fn(x, y)`."""
    t = time.perf_counter()
    for _ in range(steps):
        loss = step_fn(x, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    return (time.perf_counter() - t) / steps


def per_step(name, model, batch, reps, steps):
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    data = torch.randint(0, model.wte.num_embeddings, (batch[0], batch[1] + 1))
    x, y = data[:, :-1], data[:, 1:]

    variants = [v for v in VARIANTS if v.name in STEP_VARIANTS]
    for v in variants:
        v.enter()
        try:
            train(model, opt, x, y, steps)  # warm up every path
        finally:
            v.leave()
    times = {v.name: [] for v in variants}
    for r in range(reps):
        for v in variants if r % 2 == 0 else variants[::-1]:
            v.enter()
            try:
                times[v.name].append(train(model, opt, x, y, steps))
            finally:
                v.leave()
    return name, {k: statistics.median(t) for k, t in times.items()}


def compiled_step(reps, steps):
    """A compiled nanoGPT-sized training step, plain, guarded at the boundary
    only (the in-graph checks left out: their cost is the difference), and
    guarded. Each variant compiles its own copy of the model (the guard must
    be on when a region is compiled for it to be checked); blocks alternate as
    above."""
    torch.manual_seed(0)
    base = GPT(65, 64, 2, 4, 64, positions_from_ids=True)
    data = torch.randint(0, 65, (12, 65))
    x, y = data[:, :-1], data[:, 1:]
    runs = {}
    instrument = _compiled_inside.instrument
    counts = {}  # variant -> (ops checked at the boundary, ops checked in the graph)
    for name, level in (("plain", "off"), ("boundary", "on"), ("guard", "on")):
        # A forward of its own code object: dynamo caches compiled code per
        # code object, and the second variant must compile, not reuse.
        forward = types.FunctionType(GPT.forward.__code__.replace(), GPT.forward.__globals__, "forward")
        model = type(f"GPT_{name}", (GPT,), {"forward": forward})(65, 64, 2, 4, 64, positions_from_ids=True)
        model.load_state_dict(base.state_dict())
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
        _intercept.set_level(level)
        if name == "boundary":
            _compiled_inside.instrument = lambda gm, *_: None
        try:
            fn = torch.compile(model, dynamic=False)
            before = _graph.analysis_seconds
            nodes, sites = _compiled.stats["checked_nodes"], _compiled_inside.stats["sites"]
            t = time.perf_counter()
            fn(x, y).backward()
            first = time.perf_counter() - t
            runs[name] = (fn, opt, level, first, _graph.analysis_seconds - before)
            counts[name] = (_compiled.stats["checked_nodes"] - nodes, _compiled_inside.stats["sites"] - sites)
        finally:
            _intercept.set_level("off")
            _compiled_inside.instrument = instrument

    # The boundary checks' own time, and the in-graph counters' reads after
    # each call, summed over the guarded blocks.
    spent_checking = [0.0, 0]
    spent_reading = [0.0, 0]
    check = _compiled.check
    after = _compiled_inside.Region.after

    def timed_after(self):
        t = time.perf_counter()
        try:
            return after(self)
        finally:
            spent_reading[0] += time.perf_counter() - t
            spent_reading[1] += 1

    _compiled_inside.Region.after = timed_after

    def timed_check(*args, **kwargs):
        t = time.perf_counter()
        try:
            return check(*args, **kwargs)
        finally:
            spent_checking[0] += time.perf_counter() - t
            spent_checking[1] += 1

    _compiled.check = timed_check
    times = {k: [] for k in runs}
    order = list(runs)
    for r in range(reps + 1):
        for name in order if r % 2 == 0 else order[::-1]:
            fn, opt, level, *_ = runs[name]
            _intercept.set_level(level)
            try:
                # The first round warms each variant (its first steps'
                # one-time costs).
                spent = train(fn, opt, x, y, steps)
            finally:
                _intercept.set_level("off")
            if r:
                times[name].append(spent)
            else:
                # The warm-up round's one-time costs left out.
                spent_checking[:] = [0.0, 0]
                spent_reading[:] = [0.0, 0]
    _compiled.check = check
    _compiled_inside.Region.after = after
    per_call = spent_checking[0] / max(spent_checking[1], 1)
    per_read = spent_reading[0] / max(spent_reading[1], 1)
    return {k: (statistics.median(t), runs[k][3], runs[k][4]) for k, t in times.items()}, per_call, per_read, counts["guard"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--number", type=int, default=20000, help="calls per per-call sample")
    ap.add_argument("--threads", type=int, default=1, help="torch CPU threads (1 keeps a shared machine's noise down)")
    ap.add_argument("--compiled", action="store_true", help="also the compiled (Inductor) step, plain vs guarded, and compile cost")
    ap.add_argument("--only-compiled", action="store_true", help="only the compiled step")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    print(f"torch {torch.__version__}, {args.threads} thread(s), medians of {args.reps} alternating blocks")
    if args.compiled or args.only_compiled:
        t, boundary_s, per_read, (nodes, sites) = compiled_step(args.reps, args.steps)
        p, b, g = t["plain"], t["boundary"], t["guard"]
        print("\ncompiled nanoGPT-sized 2L d=64 step (ms)   plain    guard (ratio)   boundary only (ratio)   goal <= 1.02")
        print(f"  {'':40} {p[0] * 1e3:8.2f} {g[0] * 1e3:8.2f} ({g[0] / p[0]:.3f})   {b[0] * 1e3:8.2f} ({b[0] / p[0]:.3f})")
        print(f"  the boundary checks themselves: {boundary_s * 1e3:.3f} ms per step ({boundary_s / g[0] * 100:.2f}% of the guarded step; {nodes} guarded ops checked)")
        print(
            f"  the in-graph checks ({sites} guarded op(s) with an index computed in the graph): "
            f"guard / boundary only {g[0] / b[0]:.3f}; reading their counter after each call: {per_read * 1e3:.3f} ms"
        )
        print(f"first call, compile included (s): plain {p[1]:.1f}, guarded {g[1]:.1f}; the guard's graph reading: {g[2] * 1e3:.2f} ms")
        if args.only_compiled:
            return
    print("\nper call (µs)                plain    guard  (added)   accel path  (added)   async path  (added)   declining mode  (added)   dispatcher kernels (added)")
    for label, t in per_call(args.reps, args.number).items():
        p = t["plain"]
        cells = [f"{t[v.name]:8.2f} ({t[v.name] - p:+6.2f})" for v in VARIANTS[1:]]
        print(f"  {label:24} {p:8.2f}  " + "   ".join(cells))
    print("\nper training step (ms)       plain    guard (ratio)   accel path (ratio)   async path (ratio)   goal <= 1.05")
    models = [
        ("nanoGPT-sized 2L d=64", GPT(65, 64, 2, 4, 64), (12, 64)),
        ("4-layer d=256", GPT(8000, 256, 4, 4, 128), (8, 128)),
    ]
    for name, model, batch in models:
        _, t = per_step(name, model, batch, args.reps, args.steps)
        p = t["plain"]
        ratios = "   ".join(f"{t[k] * 1e3:8.2f} ({t[k] / p:.3f})" for k in STEP_VARIANTS[1:])
        print(f"  {name:24} {p * 1e3:8.2f}  {ratios}")


if __name__ == "__main__":
    main()

"""The compiled training step, plain against guarded, each in a fresh process.

Compile time depends on what a process compiled before (dynamo's and
Inductor's in-memory caches, the allocator, a warm interpreter), so each
measurement is a process of its own: plain, guard, plain, guard, ... (ABAB),
each compiling the nanoGPT-sized model (`bench.GPT`, its positions computed
from the ids in the region: RoBERTa-style, read by `wpe`, checked inside the
compiled graph) with Inductor, `dynamic=False`. Each process gets a fresh
empty ``TORCHINDUCTOR_CACHE_DIR`` (Inductor's and AOTAutograd's on-disk
caches cold for both; `--cache warm`: one directory per variant, primed by an
unmeasured process first, warm for both alike).

Per process: the first call (forward and backward: dynamo, AOTAutograd,
Inductor's compile, one step) and the median of `--reps` blocks of `--steps`
training steps, after a warm-up block. Reported: each pair's guarded / plain
ratio, and their median and range over the pairs; the load average at each
process's start. The guarded process must hold in-graph checks (it fails
otherwise: the figure would not measure them).

    bench/guard/run.sh --only-compiled [--pairs 5] [--reps 7] [--steps 10] [--cache cold|warm]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
VARIANTS = ("plain", "guard")


def _one(variant, reps, steps, threads):
    """One process's measurement of `variant`, as a JSON line on stdout."""
    load = os.getloadavg()[0]
    import torch

    import bench
    from devassert._compiled import boundary as _boundary
    from devassert._compiled import graph as _graph
    from devassert._compiled import inside as _inside
    from devassert._guard import intercept as _intercept

    torch.set_num_threads(threads)
    torch.manual_seed(0)
    model = bench.GPT(65, 64, 2, 4, 64, positions_from_ids=True)
    data = torch.randint(0, 65, (12, 65))
    x, y = data[:, :-1], data[:, 1:]
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    if variant == "guard":
        _intercept.set_level("on")
    fn = torch.compile(model, dynamic=False)
    t = time.perf_counter()
    fn(x, y).backward()
    first = time.perf_counter() - t
    opt.zero_grad(set_to_none=True)

    # The boundary checks' own time and the in-graph counter's reads.
    spent = {"check": [0.0, 0], "read": [0.0, 0]}

    def timed(name, f):
        def run(*args, **kwargs):
            t = time.perf_counter()
            try:
                return f(*args, **kwargs)
            finally:
                spent[name][0] += time.perf_counter() - t
                spent[name][1] += 1

        return run

    _boundary.check = timed("check", _boundary.check)
    _inside.Region.after = timed("read", _inside.Region.after)
    bench.train(fn, opt, x, y, steps)  # warm-up: the first steps' one-time costs
    for v in spent.values():
        v[:] = [0.0, 0]
    blocks = [bench.train(fn, opt, x, y, steps) for _ in range(reps)]
    print(json.dumps({
        "variant": variant,
        "load": load,
        "first": first,
        "step": statistics.median(blocks),
        "blocks": blocks,
        "analysis": _graph.analysis_seconds,
        "boundary_nodes": _boundary.stats["checked_nodes"],
        "sites": _inside.stats["sites"],
        "check_ms": spent["check"][0] / max(spent["check"][1], 1) * 1e3,
        "read_ms": spent["read"][0] / max(spent["read"][1], 1) * 1e3,
        "torch": torch.__version__,
    }))


def _spawn(variant, args, cache):
    env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=cache)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [os.path.join(HERE, "..", "..", "python"), env.get("PYTHONPATH")]))
    cmd = [sys.executable, os.path.abspath(__file__), "--one", variant, "--reps", str(args.reps), "--steps", str(args.steps),
           "--threads", str(args.threads)]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=HERE)
    if done.returncode != 0:
        sys.exit(f"bench/guard/compiled.py: the {variant} process failed ({done.returncode}):\n{done.stderr[-4000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _spread(values):
    return f"{statistics.median(values):.3f} (range {min(values):.3f}-{max(values):.3f})"


def compare(args):
    """ABAB... fresh processes; prints each pair and the ratios' medians and ranges."""
    print(f"compiled nanoGPT-sized 2L d=64 step, Inductor, {args.threads} thread(s): {args.pairs} pairs of fresh processes "
          f"(plain, guard, plain, guard, ...), each the median of {args.reps} blocks of {args.steps} steps; "
          f"Inductor's cache {'cold (a fresh directory per process)' if args.cache == 'cold' else 'warm (one directory per variant, primed)'}")
    with tempfile.TemporaryDirectory(prefix="devassert-bench-") as root:
        primed = {}
        if args.cache == "warm":
            for v in VARIANTS:
                primed[v] = os.path.join(root, v)
                _spawn(v, args, primed[v])
        rows = []
        for i in range(args.pairs):
            pair = {}
            for v in VARIANTS:
                cache = primed.get(v) or tempfile.mkdtemp(prefix=f"{v}-{i}-", dir=root)
                pair[v] = _spawn(v, args, cache)
            rows.append(pair)
            p, g = pair["plain"], pair["guard"]
            print(f"  pair {i + 1}: step ms plain {p['step'] * 1e3:7.2f} guard {g['step'] * 1e3:7.2f} ({g['step'] / p['step']:.3f})   "
                  f"first call s plain {p['first']:6.2f} guard {g['first']:6.2f} ({g['first'] / p['first']:.3f})   "
                  f"load {p['load']:.1f} / {g['load']:.1f}", flush=True)
    guard = [r["guard"] for r in rows]
    if not all(g["sites"] > 0 for g in guard):
        sys.exit("bench/guard/compiled.py: the guarded model holds no in-graph check: the figure would not measure them")
    step = [r["guard"]["step"] / r["plain"]["step"] for r in rows]
    first = [r["guard"]["first"] / r["plain"]["first"] for r in rows]
    loads = [r[v]["load"] for r in rows for v in VARIANTS]
    print(f"torch {guard[0]['torch']}; load average (1 min) at the processes' start {min(loads):.1f}-{max(loads):.1f}, "
          f"{os.cpu_count()} CPUs")
    print(f"  compiled step, guard / plain:        {_spread(step)}   goal <= 1.02")
    print(f"  first call (compile), guard / plain: {_spread(first)}   goal <= 1.1")
    plain_ms = [r["plain"]["step"] * 1e3 for r in rows]
    plain_s = [r["plain"]["first"] for r in rows]
    print(f"  plain: step {statistics.median(plain_ms):.2f} ms, first call {statistics.median(plain_s):.1f} s (medians)")
    g = guard[0]
    print(f"  guarded: {g['boundary_nodes']} op(s) checked at the boundary ({statistics.median(x['check_ms'] for x in guard):.3f} ms "
          f"per step), {g['sites']} in the graph (counter read {statistics.median(x['read_ms'] for x in guard):.3f} ms per step); "
          f"the guard's graph reading {statistics.median(x['analysis'] for x in guard) * 1e3:.1f} ms per compile")


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--cache", choices=("cold", "warm"), default="cold")
    ap.add_argument("--one", choices=VARIANTS, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.one:
        _one(args.one, args.reps, args.steps, args.threads)
    else:
        compare(args)


if __name__ == "__main__":
    main()

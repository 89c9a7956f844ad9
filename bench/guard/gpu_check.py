"""The guard on a GPU, in one table (about 3-4 minutes on one GPU):

1. real device-side asserts (embedding, cross_entropy, nll_loss2d with 255,
   gather, advanced index, multinomial with NaN), each in its own process:
   without the guard (the context is poisoned: a later matmul fails), with
   devassert.guard("on") and with devassert.guard("async") (raised at the
   planted line, the context healthy: a later matmul works);
2. a model captured with torch.cuda.graph and one under
   torch.compile(mode="reduce-overhead") run clean under both levels;
3. the training-step time of a GPT-2-small-shaped model (bf16, batch 8,
   seq 1024) and of a small segmentation model: plain, on, async and
   CUDA_LAUNCH_BLOCKING=1, as ratios to plain.

Without CUDA (or with --cpu-smoke) the CUDA-only parts are skipped and the
rest runs on CPU at tiny sizes, to prove the script itself works. A level the
installed guard does not know (guard(level) raises ValueError) is reported as
"unavailable". Exit status: 0 when every check that ran passed.

    bash bench/guard/gpu_check.sh [--cpu-smoke]
"""

import argparse
import concurrent.futures
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PYDIR = os.path.normpath(os.path.join(HERE, "..", "..", "python"))
LEVELS = ("plain", "on", "async")

# (setup, planted expression): `d` is the device, `F` torch.nn.functional.
CASES = {
    "embedding": ("w = torch.randn(100, 8, device=d)", "F.embedding(torch.tensor([[1, 100, 5]], device=d), w)"),
    "cross_entropy": ("x = torch.randn(4, 10, device=d)", "F.cross_entropy(x, torch.tensor([0, 255, 3, 1], device=d))"),
    "nll_loss2d 255": (
        "x = torch.randn(2, 5, 8, 8, device=d); t = torch.randint(0, 5, (2, 8, 8), device=d); t[1, 4, 4] = 255",
        "F.cross_entropy(x, t)",
    ),
    "gather": ("x = torch.randn(4, 5, device=d)", "torch.gather(x, 1, torch.tensor([[0, 7]] * 4, device=d))"),
    "index": ("x = torch.randn(10, 4, device=d)", "x[torch.tensor([1, 12], device=d)]"),
    "multinomial nan": ("p = torch.rand(4, 10, device=d); p[1, 3] = float('nan')", "torch.multinomial(p, 2)"),
}

# One process per (case, level). Prints one RESULT line of JSON.
ASSERT_PROGRAM = """\
import json, sys
import torch
import torch.nn.functional as F
level, d = sys.argv[1], sys.argv[2]
res = {{"level": level}}
devassert = None
if level != "plain":
    import devassert
    try:
        devassert.guard(level)
    except ValueError as e:
        print("RESULT " + json.dumps({{"unavailable": str(e)}}), flush=True)
        sys.exit(0)
{setup}
def sync():
    if d == "cuda":
        torch.cuda.synchronize()
try:
    out = {planted}  # PLANTED
    sync()
    # async reports at a later guarded op: give it two, with a sync between.
    F.embedding(torch.zeros(1, dtype=torch.long, device=d), torch.ones(1, 1, device=d))
    sync()
    F.embedding(torch.zeros(1, dtype=torch.long, device=d), torch.ones(1, 1, device=d))
    res["raised"] = None
except Exception as e:
    res["raised"] = type(e).__name__
    res["prevented"] = devassert is not None and isinstance(e, devassert.DeviceAssertPrevented)
    loc = (getattr(e, "finding", None) or {{}}).get("location") or {{}}
    res["line"] = loc.get("line")
    res["device_assert"] = "device-side assert" in str(e)
    res["message"] = str(e)[:300]
try:
    x = torch.randn(256, 256, device=d)
    y = float((x @ x).sum())
    sync()
    res["healthy"] = y == y
except Exception as e:
    res["healthy"] = False
    res["after"] = str(e)[:200]
print("RESULT " + json.dumps(res), flush=True)
"""

# One process per level: a CUDA-graph capture and a reduce-overhead compile of
# a small model with guarded ops (embedding, cross_entropy), against eager.
CAPTURE_PROGRAM = """\
import json, sys
import torch
import torch.nn as nn
import torch.nn.functional as F
level = sys.argv[1]
if level != "plain":
    import devassert
    try:
        devassert.guard(level)
    except ValueError as e:
        print("RESULT " + json.dumps({"unavailable": str(e)}), flush=True)
        sys.exit(0)
torch.manual_seed(0)
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(1000, 64)
        self.body = nn.Sequential(nn.Linear(64, 256), nn.GELU(), nn.Linear(256, 1000))
    def forward(self, ids, labels):
        logits = self.body(self.emb(ids))
        return F.cross_entropy(logits.view(-1, 1000), labels.view(-1))
model = M().cuda().eval()
ids = torch.randint(0, 1000, (8, 128), device="cuda")
labels = torch.randint(0, 1000, (8, 128), device="cuda")
res = {}
with torch.no_grad():
    want = model(ids, labels)
    torch.cuda.synchronize()
    try:
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(3):
                model(ids, labels)
        torch.cuda.current_stream().wait_stream(s)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            got = model(ids, labels)
        g.replay()
        torch.cuda.synchronize()
        res["graph"] = "clean" if torch.equal(got, want) else "WRONG RESULT"
    except Exception as e:
        res["graph"] = "FAILED: " + str(e).splitlines()[0][:160]
    try:
        compiled = torch.compile(model, mode="reduce-overhead")
        for _ in range(4):
            got = compiled(ids, labels)
        torch.cuda.synchronize()
        res["compile"] = "clean" if torch.allclose(got, want, rtol=1e-3, atol=1e-3) else "WRONG RESULT"
    except Exception as e:
        res["compile"] = "FAILED: " + str(e).splitlines()[0][:160]
print("RESULT " + json.dumps(res), flush=True)
"""

# One process per (model, variant): the median step time.
STEP_PROGRAM = """\
import json, math, statistics, sys, time
import torch
import torch.nn as nn
import torch.nn.functional as F
level, model_name, d, size = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
if level not in ("plain", "blocking"):
    import devassert
    try:
        devassert.guard(level)
    except ValueError as e:
        print("RESULT " + json.dumps({"unavailable": str(e)}), flush=True)
        sys.exit(0)
torch.manual_seed(0)
cuda = d == "cuda"
tiny = size == "tiny"
if not cuda:
    torch.set_num_threads(1)

class Block(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.qkv, self.proj = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))
    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(b, t, 3, self.heads, c // self.heads).permute(2, 0, 3, 1, 4)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, c))
        return x + self.mlp(self.ln2(x))

class GPT(nn.Module):
    def __init__(self, vocab, seq, dim, layers, heads):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(vocab, dim), nn.Embedding(seq, dim)
        self.blocks = nn.ModuleList(Block(dim, heads) for _ in range(layers))
        self.ln = nn.LayerNorm(dim)
    def forward(self, ids):
        pos = torch.arange(ids.size(1), device=ids.device)
        x = self.wte(ids) + self.wpe(pos)
        for blk in self.blocks:
            x = blk(x)
        return self.ln(x) @ self.wte.weight.t()

def conv(i, o, s):
    return nn.Sequential(nn.Conv2d(i, o, 3, s, 1, bias=False), nn.BatchNorm2d(o), nn.ReLU(inplace=True))

class Seg(nn.Module):
    def __init__(self, classes, width):
        super().__init__()
        w = width
        self.down = nn.Sequential(conv(3, w, 2), conv(w, w, 1), conv(w, 2 * w, 2), conv(2 * w, 2 * w, 1), conv(2 * w, 4 * w, 2))
        self.head = nn.Conv2d(4 * w, classes, 1)
    def forward(self, x):
        return F.interpolate(self.head(self.down(x)), size=x.shape[-2:], mode="bilinear", align_corners=False)

if model_name == "gpt2":
    vocab, seq, batch = (512, 64, 2) if tiny else (50257, 1024, 8)
    model = GPT(vocab, seq, 64 if tiny else 768, 2 if tiny else 12, 4 if tiny else 12).to(d)
    ids = torch.randint(0, vocab, (batch, seq), device=d)
    labels = ids.roll(-1, 1)
    labels[:, -1] = -100
    def loss_fn():
        logits = model(ids)
        return F.cross_entropy(logits.view(-1, logits.size(-1)).float(), labels.view(-1))
else:
    classes, hw, batch = 21, (32 if tiny else 256), (2 if tiny else 8)
    model = Seg(classes, 8 if tiny else 64).to(d)
    if cuda:
        model = model.to(memory_format=torch.channels_last)
    x = torch.randn(batch, 3, hw, hw, device=d)
    t = torch.randint(0, classes, (batch, hw, hw), device=d)
    t[:, : hw // 8] = 255  # void border, ignored
    def loss_fn():
        return F.cross_entropy(model(x).float(), t, ignore_index=255)
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)

def step():
    with torch.autocast(d, dtype=torch.bfloat16, enabled=cuda):
        loss = loss_fn()
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()

def sync():
    if cuda:
        torch.cuda.synchronize()

warm, steps, reps = (1, 3, 3) if tiny else (5, 10, 3)
for _ in range(warm):
    step()
sync()
times = []
for _ in range(reps):
    t0 = time.perf_counter()
    for _ in range(steps):
        step()
    sync()
    times.append((time.perf_counter() - t0) / steps)
print("RESULT " + json.dumps({"ms": 1000 * statistics.median(times)}), flush=True)
"""


def planted_line(program):
    return next(i for i, line in enumerate(program.splitlines(), 1) if "# PLANTED" in line)


class Runner:
    """Runs the generated programs as files (so the guard reports real
    lines) with the guard's package on PYTHONPATH, under one deadline."""

    def __init__(self, budget_s):
        self.tmp = tempfile.mkdtemp(prefix="devassert-gpu-check-")
        self.deadline = time.monotonic() + budget_s

    def left(self):
        return self.deadline - time.monotonic()

    def write(self, name, text):
        path = os.path.join(self.tmp, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def run(self, path, args, env_extra=None, timeout=120):
        """The RESULT dict of one program, or {"error": ...}."""
        timeout = min(timeout, self.left())
        if timeout < 5:
            return {"error": "skipped: out of time"}
        env = dict(os.environ)
        env["PYTHONPATH"] = PYDIR + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        env.pop("CUDA_LAUNCH_BLOCKING", None)
        env.update(env_extra or {})
        try:
            p = subprocess.run([sys.executable, path, *args], capture_output=True, text=True, env=env, timeout=timeout)
        except subprocess.TimeoutExpired:
            return {"error": f"timed out after {timeout:.0f} s"}
        for line in reversed(p.stdout.splitlines()):
            if line.startswith("RESULT "):
                res = json.loads(line[7:])
                res["stderr"] = p.stderr[-1500:]
                return res
        tail = (p.stderr.strip().splitlines() or ["(no output)"])[-1]
        return {"error": f"exit {p.returncode}: {tail[:200]}", "stderr": p.stderr[-1500:]}


def judge_assert(res, level, line, cuda):
    """(cell text, passed) for one device-assert run."""
    if "unavailable" in res:
        return "unavailable", True
    if "error" in res:
        return res["error"], False
    healthy = res.get("healthy")
    if level == "plain":
        if cuda:
            ok = bool(res.get("raised")) and not healthy
            return ("device assert, context poisoned" if ok else f"no assert? raised={res.get('raised')} healthy={healthy}"), ok
        # CPU: the host check raises, nothing to poison.
        return (f"{res.get('raised')} (CPU)" if res.get("raised") else "no error?"), bool(res.get("raised"))
    if not res.get("raised"):
        at_exit = "DeviceAssertPrevented" in res.get("stderr", "")
        return ("raised only at exit" if at_exit else "NOT STOPPED"), False
    if not res.get("prevented"):
        return f"{res['raised']}: {res.get('message', '')[:60]}", False
    ok = res.get("line") == line and healthy
    where = f"line {res.get('line')}" + ("" if res.get("line") == line else f" (want {line})")
    return f"prevented at {where}, {'healthy' if healthy else 'POISONED'}", ok


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cpu-smoke", action="store_true", help="CPU only, tiny sizes (automatic without CUDA)")
    ap.add_argument("--budget", type=float, default=290, help="seconds for the whole check")
    args = ap.parse_args()
    import torch

    cuda = torch.cuda.is_available() and not args.cpu_smoke
    d = "cuda" if cuda else "cpu"
    where = torch.cuda.get_device_name(0) if cuda else "CPU smoke run (no CUDA: capture and CUDA_LAUNCH_BLOCKING skipped, tiny models)"
    print(f"devassert guard check: {where}; torch {torch.__version__}, CUDA {torch.version.cuda}", flush=True)
    r = Runner(args.budget)
    rows = []  # (section, case, [plain, on, async, blocking], passed)
    ok_all = True

    # 1. Device asserts: every (case, level) in parallel, one process each.
    jobs = {}
    workers = min(8, os.cpu_count() or 2)
    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        for name, (setup, planted) in CASES.items():
            program = ASSERT_PROGRAM.format(setup=setup, planted=planted)
            path = r.write(f"assert_{name.replace(' ', '_')}.py", program)
            for level in LEVELS:
                jobs[(name, level)] = (pool.submit(r.run, path, [level, d]), planted_line(program))
        for name in CASES:
            cells, ok = [], True
            for level in LEVELS:
                fut, line = jobs[(name, level)]
                text, passed = judge_assert(fut.result(), level, line, cuda)
                cells.append(text)
                ok &= passed
            rows.append(("device assert", name, cells + ["-"], ok))
            ok_all &= ok

    # 2. Capture: one process per level, in parallel (compiling is CPU work).
    if cuda:
        path = r.write("capture.py", CAPTURE_PROGRAM)
        with concurrent.futures.ThreadPoolExecutor(len(LEVELS)) as pool:
            futs = {lv: pool.submit(r.run, path, [lv], None, 200) for lv in LEVELS}
            res = {lv: f.result() for lv, f in futs.items()}
        for key, label in (("graph", "torch.cuda.graph"), ("compile", "compile reduce-overhead")):
            cells, ok = [], True
            for lv in LEVELS:
                x = res[lv]
                cell = "unavailable" if "unavailable" in x else x.get(key) or x.get("error", "?")
                cells.append(cell)
                ok &= cell in ("clean", "unavailable")
            rows.append(("capture", label, cells + ["-"], ok))
            ok_all &= ok
    else:
        rows.append(("capture", "graph / compile", ["skipped: needs CUDA"] * 3 + ["-"], True))

    # 3. Step time: one process per variant, one after another.
    path = r.write("step.py", STEP_PROGRAM)
    size = "full" if cuda else "tiny"
    variants = list(LEVELS) + (["blocking"] if cuda else [])
    for model, label in (("gpt2", "GPT-2 small, bf16, 8x1024" if cuda else "GPT tiny, 2x64"), ("seg", "segmentation, 8x256x256" if cuda else "segmentation tiny")):
        ms = {}
        for v in variants:
            env = {"CUDA_LAUNCH_BLOCKING": "1"} if v == "blocking" else None
            res = r.run(path, [v, model, d, size], env, 150)
            ms[v] = res.get("ms") if "ms" in res else ("unavailable" if "unavailable" in res else res.get("error", "?"))
        base = ms.get("plain")
        cells, ok = [], True
        for v in ("plain", "on", "async", "blocking"):
            m = ms.get(v, "n/a (no CUDA)")
            if isinstance(m, float) and isinstance(base, float):
                cells.append(f"{m:.1f} ms ({m / base:.2f}x)")
            else:
                cells.append(str(m))
                ok &= m in ("unavailable", "n/a (no CUDA)")
        rows.append(("step time", label, cells, ok))
        ok_all &= ok

    head = ("section", "case", "plain (no guard)", "guard on", "guard async", "CUDA_LAUNCH_BLOCKING=1", "ok")
    table = [head] + [(s, c, *cells, "yes" if ok else "NO") for s, c, cells, ok in rows]
    widths = [max(len(str(row[i])) for row in table) for i in range(len(head))]
    print()
    for i, row in enumerate(table):
        print("  ".join(str(v).ljust(w) for v, w in zip(row, widths)).rstrip())
        if i == 0:
            print("  ".join("-" * w for w in widths))
    print()
    print(f"took {args.budget - r.left():.0f} s; " + ("ALL OK" if ok_all else "SOME CHECKS FAILED (details above)"))
    if not ok_all:
        for (name, level), (fut, _) in jobs.items():
            res = fut.result()
            if level != "plain" and "unavailable" not in res and not res.get("prevented"):
                print(f"--- {name} / {level}:", textwrap.shorten(json.dumps(res), 600))
    return 0 if ok_all else 1


if __name__ == "__main__":
    sys.exit(main())

"""On a CUDA machine: reproduce real device-side asserts (embedding,
cross_entropy, gather) in subprocesses without and with the guard, check the
guard raises DeviceAssertPrevented at the planted line and the CUDA context
stays usable, then time the training step of bench.py under
CUDA_LAUNCH_BLOCKING=1 and under the guard. Runs in about a minute.

    python bench/guard/gpu_check.py
"""

import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PYDIR = os.path.join(HERE, "..", "..", "python")

CASES = {
    "embedding": "torch.nn.Embedding(100, 8).cuda()(torch.tensor([[1, 100, 5]], device='cuda'))",
    "cross_entropy": "torch.nn.functional.cross_entropy(torch.randn(4, 10, device='cuda'), torch.tensor([0, 255, 3, 1], device='cuda'))",
    "gather": "torch.gather(torch.randn(4, 5, device='cuda'), 1, torch.tensor([[0, 7]] * 4, device='cuda'))",
}

PROGRAM = """
import sys, torch
guarded = sys.argv[1] == "guard"
if guarded:
    import devassert
    devassert.guard()
try:
    out = {op}  # PLANTED
    torch.cuda.synchronize()
    print("no error")
except Exception as e:
    print("raised", type(e).__name__, "prevented" if guarded and isinstance(e, devassert.DeviceAssertPrevented) else "")
    if guarded:
        print("line", e.finding["location"]["line"])
x = torch.randn(256, 256, device="cuda")
print("context ok", float((x @ x).sum()) == float((x @ x).sum()))
"""


def run(code, mode, env_extra=None):
    env = dict(os.environ, PYTHONPATH=PYDIR)
    env.update(env_extra or {})
    return subprocess.run([sys.executable, "-c", code, mode], capture_output=True, text=True, env=env, timeout=120)


def main():
    ok = True
    for name, op in CASES.items():
        code = PROGRAM.format(op=op)
        planted = next(i for i, text in enumerate(code.splitlines(), 1) if "# PLANTED" in text)
        bare = run(code, "bare")
        crashed = "device-side assert" in (bare.stdout + bare.stderr)
        guard = run(code, "guard")
        prevented = "prevented" in guard.stdout and f"line {planted}" in guard.stdout and "context ok True" in guard.stdout
        ok &= crashed and prevented
        print(f"{name:14s} without guard: {'device-side assert' if crashed else 'NO ASSERT?'}; "
              f"with guard: {'prevented at line %d, context usable' % planted if prevented else 'FAILED'}")
        if not prevented:
            print(guard.stdout, guard.stderr[-2000:])
    bench = [sys.executable, os.path.join(HERE, "bench.py"), "--device", "cuda", "--steps", "20", "--reps", "5", "--batch", "16"]
    for label, env in (("CUDA_LAUNCH_BLOCKING=1, no guard", {"CUDA_LAUNCH_BLOCKING": "1"}), ("guard, no blocking", {})):
        out = subprocess.run(bench, capture_output=True, text=True, env=dict(os.environ, **env), timeout=240)
        print(f"--- {label}\n{out.stdout}{out.stderr[-1000:]}")
    print("ALL OK" if ok else "SOME CHECKS FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Write crash logs of about SIZE bytes each, one per log shape, each ending
in the same crash (a device assert burst, a traceback, the fallout), so
that explain's speed can be compared with grep's and ripgrep's per shape:

  progress    mostly training progress (Trainer dicts, tqdm bars with
              carriage returns, INFO lines)
  tracebacks  mostly Python tracebacks a job logged and went on from
              (data loader retries, a callback's handled errors)
  glued       mostly assertion messages printed back to back on one line
              (stdout unbuffered from many threads, no newline between)
  separate    the same assertion messages as glued, each on its own line:
              the peer that glued lines are measured against
  warnings    mostly unrelated warnings (UserWarning / FutureWarning lines
              with their source line)
  huge        one huge line: a tqdm bar redrawn with carriage returns only
              (stderr captured to a file, no newline until the job dies)

usage: make_shapes.py OUT_DIR [SIZE_BYTES] [SHAPE...]   (default 256 MiB, all shapes)
Writes OUT_DIR/explain-SHAPE-SIZE.log; deterministic (seeded).
"""
import os
import random
import sys

ASSERT = ("/pytorch/aten/src/ATen/native/cuda/Indexing.cu:1422: indexSelectLargeIndex: "
          "block: [{b},0,0], thread: [{t},0,0] Assertion `srcIndex < srcSelectDimSize` failed.")
GATHER = ("/pytorch/aten/src/ATen/native/cuda/IndexKernelUtils.cu:16: vectorized_gather_kernel: "
          "block: [{b},0,0], thread: [{t},0,0] Assertion `ind >=0 && ind < ind_dim_size && "
          "\"vectorized gather kernel index out of bounds\"` failed.")

CRASH = r"""Traceback (most recent call last):
  File "/home/ml/gpt2-ft/train.py", line 131, in <module>
    main()
  File "/home/ml/gpt2-ft/train.py", line 118, in main
    print(f"step {step} loss {loss.item():.4f}")
RuntimeError: CUDA error: device-side assert triggered
CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.
For debugging consider passing CUDA_LAUNCH_BLOCKING=1
Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.

RuntimeError: CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling `cublasSgemm( handle, opa, opb, m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc)`
"""


def progress(rng, step):
    kind = rng.random()
    if kind < 0.55:
        return (f"{{'loss': {2.5 * 0.9995 ** (step % 9000) + rng.random() * 0.05:.4f}, "
                f"'grad_norm': {rng.random() * 3:.4f}, 'learning_rate': {5e-5 * (1 - step / 4e7):.3e}, "
                f"'epoch': {step / 40000:.2f}}}\n")
    if kind < 0.85:
        pct = step % 100
        return (f" {pct:3d}%|{'#' * (pct // 10):<10}| {step}/40000000 "
                f"[{step // 3600 % 100:02d}:{step // 60 % 60:02d}<41:{step % 60:02d}, {5 + rng.random():.2f}it/s]\r")
    return (f"2024-05-01 12:{step // 60 % 60:02d}:{step % 60:02d},{rng.randrange(1000):03d} - INFO - "
            f"trainer - step {step}: throughput {rng.randrange(9000, 12000)} tokens/s, mem {rng.randrange(30, 70)} GiB\n")


def handled_traceback(rng, step):
    shard = rng.randrange(4096)
    return (
        f"2024-05-01 12:{step // 60 % 60:02d}:{step % 60:02d},{rng.randrange(1000):03d} - WARNING - loader - "
        f"skipping sample {rng.randrange(10**7)} of shard {shard}\n"
        "Traceback (most recent call last):\n"
        '  File "/home/ml/gpt2-ft/data.py", line 88, in __getitem__\n'
        "    return self.decode(self.rows[i])\n"
        '  File "/home/ml/gpt2-ft/data.py", line 61, in decode\n'
        '    obj = json.loads(line)\n'
        '  File "/usr/lib/python3.11/json/__init__.py", line 346, in loads\n'
        "    return _default_decoder.decode(s)\n"
        '  File "/usr/lib/python3.11/json/decoder.py", line 340, in decode\n'
        '    raise JSONDecodeError("Extra data", s, end)\n'
        f"json.decoder.JSONDecodeError: Extra data: line 1 column {rng.randrange(20, 900)} (char {rng.randrange(20, 900)})\n"
    )


def assertions(rng):
    """One block's burst of thread reports."""
    b = rng.randrange(4096)
    tmpl = ASSERT if rng.random() < 0.7 else GATHER
    start = rng.randrange(0, 96)
    n = rng.randrange(8, 64)
    return [tmpl.format(b=b, t=t) for t in range(start, start + n)]


def glued(rng, _step):
    # One stdout line that many threads wrote into without newlines.
    return "".join(assertions(rng)) + "\n"


def separate(rng, _step):
    # The same reports as glued (same seed), one per line.
    return "\n".join(assertions(rng)) + "\n"


WARNINGS = [
    "/opt/conda/lib/python3.11/site-packages/torch/utils/checkpoint.py:91: UserWarning: None of the inputs have requires_grad=True. Gradients will be None\n  warnings.warn(\n",
    "/opt/conda/lib/python3.11/site-packages/transformers/tokenization_utils_base.py:1601: FutureWarning: `clean_up_tokenization_spaces` was not set. It will be set to `True` by default.\n  warnings.warn(\n",
    "/opt/conda/lib/python3.11/site-packages/torch/optim/lr_scheduler.py:143: UserWarning: Detected call of `lr_scheduler.step()` before `optimizer.step()`.\n  warnings.warn(\"Detected call of `lr_scheduler.step()` before `optimizer.step()`. \"\n",
    "/opt/conda/lib/python3.11/site-packages/torch/nn/modules/conv.py:456: UserWarning: Applied workaround for CuDNN issue, install nvrtc.so (Triggered internally at ../aten/src/ATen/native/cudnn/Conv_v8.cpp:80.)\n  return F.conv2d(input, weight, bias, self.stride,\n",
    "/opt/conda/lib/python3.11/site-packages/accelerate/accelerator.py:482: DeprecationWarning: `dispatch_batches` is deprecated and will be removed in version 1.0 of Accelerate.\n",
]


def warning(rng, step):
    w = WARNINGS[rng.randrange(len(WARNINGS))]
    return f"[step {step}] " + w if rng.random() < 0.3 else w


def huge(_rng, step):
    pct = step % 100
    return f"\r{pct:3d}%|{'#' * (pct // 10):<10}| {step}/40000000 [{step // 3600 % 100:02d}:{step // 60 % 60:02d}<41:{step % 60:02d}, 5.{step % 100:02d}it/s]"


SHAPES = {"progress": progress, "tracebacks": handled_traceback, "glued": glued, "separate": separate, "warnings": warning,
          "huge": huge}


def write(path, size, make):
    rng = random.Random(7)
    written = 0
    step = 0
    with open(path, "w", encoding="utf-8") as f:
        while written < size - 200_000:
            buf = []
            for _ in range(2000):
                step += 1
                buf.append(make(rng, step))
            chunk = "".join(buf)
            f.write(chunk)
            written += len(chunk.encode("utf-8"))
        # The crash: a burst of thread lines, the traceback, the fallout
        # (on a line of its own, after a huge line too).
        if not chunk.endswith("\n"):
            f.write("\n")
        for t in range(32, 160):
            f.write(ASSERT.format(b=7, t=t) + "\n")
        f.write(CRASH)
        for r in range(1, 8):
            f.write(f"[rank{r}]:[E501 12:41:07.118734201 ProcessGroupNCCL.cpp:616] [Rank {r}] Watchdog caught "
                    "collective operation timeout: WorkNCCL(SeqNum=80812, OpType=ALLREDUCE, NumelIn=9801523, "
                    "NumelOut=9801523, Timeout(ms)=600000) ran for 600020 milliseconds before timing out.\n")


def main():
    out = sys.argv[1]
    size = int(sys.argv[2]) if len(sys.argv) > 2 else 256 << 20
    shapes = sys.argv[3:] or list(SHAPES)
    os.makedirs(out, exist_ok=True)
    for s in shapes:
        path = os.path.join(out, f"explain-{s}-{size}.log")
        if not (os.path.exists(path) and os.path.getsize(path) > 0):
            write(path, size, SHAPES[s])
        print(path)


if __name__ == "__main__":
    main()

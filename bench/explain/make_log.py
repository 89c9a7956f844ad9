#!/usr/bin/env python3
"""Write a realistic crash log of about SIZE bytes: a long GPT-2 fine-tune on
8 ranks (HF Trainer progress dicts, tqdm bars with carriage returns, INFO
lines, warnings), then rank 0's device-side assert burst (many thousands of
thread lines, repeated over several steps as a restarted job would print),
a traceback, and the fallout on every rank.

usage: make_log.py OUT [SIZE_BYTES]   (default 1 GiB)
"""
import random
import sys

out = sys.argv[1]
size = int(sys.argv[2]) if len(sys.argv) > 2 else 1 << 30
rng = random.Random(7)

ASSERT = ("[rank0]:/pytorch/aten/src/ATen/native/cuda/Indexing.cu:1422: indexSelectLargeIndex: "
          "block: [{b},0,0], thread: [{t},0,0] Assertion `srcIndex < srcSelectDimSize` failed.\n")
GATHER = ("[rank0]:/pytorch/aten/src/ATen/native/cuda/IndexKernelUtils.cu:16: vectorized_gather_kernel: "
          "block: [{b},0,0], thread: [{t},0,0] Assertion `ind >=0 && ind < ind_dim_size && "
          "\"vectorized gather kernel index out of bounds\"` failed.\n")

def progress(step, rank):
    loss = 2.5 * 0.9995 ** step + rng.random() * 0.05
    kind = rng.random()
    if kind < 0.55:
        return (f"[rank{rank}]:{{'loss': {loss:.4f}, 'grad_norm': {rng.random() * 3:.4f}, "
                f"'learning_rate': {5e-5 * (1 - step / 2e6):.3e}, 'epoch': {step / 40000:.2f}}}\n")
    if kind < 0.85:
        pct = step % 100
        return (f"[rank{rank}]: {pct:3d}%|{'█' * (pct // 10):<10}| {step}/2000000 "
                f"[{step // 3600:02d}:{step // 60 % 60:02d}<41:{step % 60:02d}, {5 + rng.random():.2f}it/s]\r")
    if kind < 0.97:
        return (f"[rank{rank}]:2024-05-01 12:{step // 60 % 60:02d}:{step % 60:02d},{rng.randrange(1000):03d} - INFO - "
                f"trainer - step {step}: throughput {rng.randrange(9000, 12000)} tokens/s, mem {rng.randrange(30, 70)} GiB\n")
    return (f"[rank{rank}]:/opt/conda/lib/python3.11/site-packages/torch/utils/checkpoint.py:91: UserWarning: "
            f"None of the inputs have requires_grad=True. Gradients will be None\n")

CRASH = r"""[rank0]:Traceback (most recent call last):
[rank0]:  File "/home/ml/gpt2-ft/train.py", line 131, in <module>
[rank0]:    main()
[rank0]:  File "/home/ml/gpt2-ft/train.py", line 118, in main
[rank0]:    print(f"step {step} loss {loss.item():.4f}")
[rank0]:RuntimeError: CUDA error: device-side assert triggered
[rank0]:CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.
[rank0]:For debugging consider passing CUDA_LAUNCH_BLOCKING=1
[rank0]:Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.
[rank0]:
[rank0]:RuntimeError: CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling `cublasSgemm( handle, opa, opb, m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc)`
"""

def fallout(rank):
    return (f"[rank{rank}]:[E501 12:41:07.118734201 ProcessGroupNCCL.cpp:616] [Rank {rank}] Watchdog caught collective operation timeout: "
            f"WorkNCCL(SeqNum=80812, OpType=ALLREDUCE, NumelIn=9801523, NumelOut=9801523, Timeout(ms)=600000) ran for 600020 milliseconds before timing out.\n"
            f"[rank{rank}]:terminate called after throwing an instance of 'c10::DistBackendError'\n")

written = 0
step = 0
burst_every = 40_000  # progress lines between bursts of assertion lines
with open(out, "w", encoding="utf-8") as f:
    buf = []
    while written < size - 1_000_000:
        for _ in range(burst_every):
            step += 1
            buf.append(progress(step, step % 8))
        # A burst of repeated thread lines: every thread of a few blocks.
        for b in rng.sample(range(4096), 24):
            tmpl = ASSERT if rng.random() < 0.7 else GATHER
            for t in range(32, 160):
                buf.append(tmpl.format(b=b, t=t))
        chunk = "".join(buf)
        buf.clear()
        f.write(chunk)
        written += len(chunk.encode("utf-8"))
    f.write(CRASH)
    for r in range(1, 8):
        f.write(fallout(r))
print(out, written)

"""Times a small transformer training step on CPU without and with the
devassert guard, in the same process (alternating blocks), and prints the
median of each and the overhead.

    python bench/guard/bench.py [--steps 20] [--reps 5] [--device cpu]
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


class TinyLM(nn.Module):
    def __init__(self, vocab=8000, d=256, layers=4, heads=4, max_len=128):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(max_len, d)
        layer = nn.TransformerEncoderLayer(d, heads, 4 * d, dropout=0.0, batch_first=True)
        self.body = nn.TransformerEncoder(layer, layers)
        self.head = nn.Linear(d, vocab)

    def forward(self, ids):
        pos = torch.arange(ids.size(1), device=ids.device).unsqueeze(0)
        return self.head(self.body(self.tok(ids) + self.pos(pos)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=10, help="training steps per timed block")
    ap.add_argument("--reps", type=int, default=5, help="timed blocks per variant")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--threads", type=int, default=1, help="torch CPU threads (1 keeps a shared machine's noise down)")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    dev = torch.device(args.device)
    model = TinyLM(max_len=args.seq).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    ids = torch.randint(0, 8000, (args.batch, args.seq), device=dev)
    labels = ids.roll(-1, 1)
    labels[:, -1] = -100

    def step():
        logits = model(ids)
        loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), labels.reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if dev.type == "cuda":
            torch.cuda.synchronize()

    def block():
        t = time.perf_counter()
        for _ in range(args.steps):
            step()
        return (time.perf_counter() - t) / args.steps

    for _ in range(3):
        step()  # warm up both paths
    with devassert.guard():
        step()
    # Alternate the two variants block by block so that load changes on a
    # shared machine hit both alike.
    plain, guarded = [], []
    for i in range(args.reps):
        if i % 2:
            with devassert.guard():
                guarded.append(block())
            plain.append(block())
        else:
            plain.append(block())
            with devassert.guard():
                guarded.append(block())
    p, g = statistics.median(plain), statistics.median(guarded)
    print(f"step (batch {args.batch} x {args.seq}, 4-layer d=256 transformer, {args.device}, torch {torch.__version__})")
    print(f"  without guard: median {p * 1000:.1f} ms  ({', '.join(f'{x * 1000:.1f}' for x in plain)})")
    print(f"  with guard:    median {g * 1000:.1f} ms  ({', '.join(f'{x * 1000:.1f}' for x in guarded)})")
    print(f"  overhead: {100 * (g / p - 1):+.1f} % on the medians, {100 * (min(guarded) / min(plain) - 1):+.1f} % on the best blocks  (goal <= 5 %)")


if __name__ == "__main__":
    main()

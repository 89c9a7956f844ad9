"""Times `devassert.preflight(model, data=ds)` on a 1M-row tokenized
`datasets.Dataset` against numpy's max() over the same column, in one
process, best of --runs each, the Arrow files in the page cache.

The dataset is what `ds.map(tokenizer)` writes and `load_from_disk` maps:
an Arrow stream of list<int32> `input_ids` (ids drawn at random below
50257, rows of 64..192 tokens, 128 on average: 0.5 GB of ids) plus
`attention_mask`, in bench/out/preflight-<rows>/. The model is a
GPT-2 with 50257 rows and 256 positions, so preflight checks every id
against the embedding and every row's length against the positions.

Peers, over the same `input_ids` values:
- numpy max, contiguous: `a.max()` on one array holding every id, copied
  out of the Arrow chunks beforehand (not timed): numpy's best case;
- numpy max, per chunk: `max(chunk.values.to_numpy().max())` over the
  memory-mapped chunks of the loaded Dataset, zero-copy, pages already
  mapped: what a script over the Dataset writes;
- numpy max, fresh map: the same over the record batches of a new
  `pa.memory_map` of each file, as the scanner (a new process) maps them.

Wall times on a loaded machine include waiting for a core; CPU times
(this process and the scanner, its child) are the work each did.

Also measured (the in-memory path): the same column in an in-memory
Dataset, preflight (a numpy min/max screen, clean: no file written) beside
writing the column to a temporary Arrow file and scanning it.
"""

import argparse
import os
import resource
import sys
import tempfile
import time

import numpy as np
import pyarrow as pa

import datasets
import devassert
from devassert._preflight import columns as _preflight_columns
from devassert._preflight import scanner as _scanner

VOCAB = 50257


def build(path, rows):
    if os.path.isdir(path):
        return datasets.load_from_disk(path)
    rng = np.random.default_rng(0)
    lengths = rng.integers(64, 193, size=rows)
    offsets = np.zeros(rows + 1, dtype=np.int32)
    np.cumsum(lengths, out=offsets[1:])
    ids = rng.integers(0, VOCAB, size=int(offsets[-1]), dtype=np.int32)
    table = pa.table({
        "input_ids": pa.ListArray.from_arrays(pa.array(offsets), pa.array(ids)),
        "attention_mask": pa.ListArray.from_arrays(pa.array(offsets), pa.array(np.ones(len(ids), dtype=np.int8))),
    })
    datasets.Dataset(table).save_to_disk(path)
    return datasets.load_from_disk(path)


def cpu_now():
    """CPU seconds used so far by this process and its waited-for children
    (the scanner): the work done, whatever else the machine runs."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


class Timing:
    def __init__(self):
        self.wall = self.cpu = 1e9

    def ratio(self, peer):
        return f"wall {self.wall / peer.wall:.2f}x, cpu {self.cpu / peer.cpu:.2f}x"

    def __str__(self):
        return f"wall {self.wall * 1000:7.1f} ms   cpu {self.cpu * 1000:7.1f} ms"


def best(fn, runs, into=None):
    """Best wall time and best CPU time of `runs` calls."""
    t_ = into or Timing()
    out = None
    for _ in range(runs):
        c, t = cpu_now(), time.perf_counter()
        out = fn()
        t_.wall = min(t_.wall, time.perf_counter() - t)
        t_.cpu = min(t_.cpu, cpu_now() - c)
    return t_, out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--rows", type=int, default=1_000_000)
    args = ap.parse_args()
    import torch
    import transformers as tf

    datasets.disable_progress_bars()
    torch.set_num_threads(1)
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "out", f"preflight-{args.rows}")
    ds = build(out, args.rows)
    model = tf.GPT2LMHeadModel(tf.GPT2Config(vocab_size=VOCAB, n_positions=256, n_embd=8, n_layer=1, n_head=1))
    column = ds.data.column("input_ids")
    n_ids = sum(len(c.values) for c in column.chunks)
    print(f"dataset: {len(ds)} rows, {n_ids} ids ({n_ids * 4 / 1e9:.2f} GB int32) in {len(ds.cache_files)} Arrow file(s), {column.num_chunks} record batches")
    print(f"binary: {_scanner.binary()}   cores: {os.cpu_count()}   runs: best of {args.runs}")

    contiguous = np.concatenate([c.values.to_numpy() for c in column.chunks])
    devassert.preflight(model, data=ds)  # warm: the page cache, imports

    paths = [f["filename"] for f in ds.cache_files]

    def fresh_map_max():
        m = 0
        for p in paths:
            with pa.memory_map(p) as source:
                for batch in pa.ipc.open_stream(source):
                    m = max(m, int(batch.column("input_ids").values.to_numpy().max()))
        return m

    t_pre, t_np, t_chunk, t_fresh = Timing(), Timing(), Timing(), Timing()
    for _ in range(2):  # interleaved, so that a burst of load elsewhere hits all three
        _, report = best(lambda: devassert.preflight(model, data=ds), args.runs, t_pre)
        _, m = best(lambda: int(contiguous.max()), args.runs, t_np)
        _, m2 = best(lambda: max(int(c.values.to_numpy().max()) for c in column.chunks), args.runs, t_chunk)
        _, m3 = best(fresh_map_max, args.runs, t_fresh)
    assert report.ok and report.data[0]["read"] == "Arrow files read in place", report
    assert m == m2 == m3 < VOCAB
    print(f"load average: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores (wall times include waiting for a core; cpu times do not)")
    print(f"preflight (whole call: model, ids and lengths, by devassert scan)  {t_pre}")
    print(f"numpy max, contiguous array                                       {t_np}   preflight: {t_pre.ratio(t_np)}")
    print(f"numpy max, per memory-mapped chunk                                {t_chunk}   preflight: {t_pre.ratio(t_chunk)}")
    print(f"numpy max, per chunk of a fresh map of the files                  {t_fresh}   preflight: {t_pre.ratio(t_fresh)}")

    # The in-memory path, and the alternative it was chosen over.
    mem = datasets.Dataset(pa.table({"input_ids": column}))
    assert not mem.cache_files
    t_mem, r = best(lambda: devassert.preflight(model, data=mem), args.runs)
    assert r.ok and r.data[0]["read"] == "screened in memory", r.data

    def write_and_scan():
        flat = _preflight_columns.flat_from_arrow(mem.data.table.column("input_ids"))
        with tempfile.TemporaryDirectory() as tmp:
            path = _preflight_columns.write_arrow(flat, "input_ids", tmp)
            return _scanner.scan_all([([path], ["--vocab", str(VOCAB), "--max-len", "256", "--column", "input_ids"])])

    t_write, _ = best(write_and_scan, args.runs)
    print(f"in-memory Dataset: preflight (numpy min/max screen)                {t_mem}")
    print(f"in-memory Dataset: write a temporary Arrow file, then scan it      {t_write}")
    peer = min(t_np.wall, t_chunk.wall)
    print(f"goal (whole call within 1.5x of numpy max, wall): {'met' if t_pre.wall <= 1.5 * peer else 'NOT met'} ({t_pre.wall / peer:.2f}x the faster peer)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

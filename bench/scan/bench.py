"""Times `devassert scan` against the numpy and pyarrow a user would write.

Each tool runs in its own process (the numpy/pyarrow peers with
OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE unset), best of --runs, on files that
sit in the page cache. devassert is timed as a whole process (start-up,
mmap, both passes, report) and by the scan time it reports itself.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

PEER_ENV = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")}
VOCAB = 50257

# Fresh map per run, as a script would do it (`fresh`), and the same map
# reused, its pages already faulted in (`warm`): numpy's best case.
NUMPY_MAX = """
import numpy as np, sys, time
best = warm = 1e9
a = np.memmap(sys.argv[1], dtype=np.uint16, mode="r")
for _ in range(int(sys.argv[2])):
    t = time.perf_counter(); m = int(a.max()); warm = min(warm, time.perf_counter() - t)
for _ in range(int(sys.argv[2])):
    t = time.perf_counter(); m = int(np.memmap(sys.argv[1], dtype=np.uint16, mode="r").max()); best = min(best, time.perf_counter() - t)
print(best, warm, m)
"""

NUMPY_WHERE = """
import numpy as np, sys, time
best = 1e9
for _ in range(int(sys.argv[2])):
    t = time.perf_counter()
    a = np.memmap(sys.argv[1], dtype=np.uint16, mode="r")
    bad = np.flatnonzero(a >= int(sys.argv[3]))
    best = min(best, time.perf_counter() - t)
print(best, 0, len(bad))
"""

PYARROW_MINMAX = """
import pyarrow.parquet as pq, pyarrow.compute as pc, sys, time
best = 1e9
for _ in range(int(sys.argv[2])):
    t = time.perf_counter()
    col = pq.read_table(sys.argv[1], columns=["input_ids"]).column("input_ids")
    if col.type.num_fields:  # list<int>: the values, not the lists
        col = pc.list_flatten(col)
    mm = pc.min_max(col)
    best = min(best, time.perf_counter() - t)
print(best, 0, mm["max"].as_py())
"""


def peer(code, *args):
    out = subprocess.run([sys.executable, "-c", code, *map(str, args)], env=PEER_ENV, check=True, capture_output=True, text=True)
    secs, warm, val = out.stdout.split()
    return float(secs), float(warm), val


def devassert(binary, path, runs, *flags):
    best_wall, best_scan, report = 1e9, 1e9, None
    for _ in range(runs):
        t = time.perf_counter()
        out = subprocess.run([binary, "scan", path, *flags, "--format", "json"], capture_output=True, text=True)
        wall = time.perf_counter() - t
        if out.returncode not in (0, 1):
            sys.exit(f"devassert failed ({out.returncode}): {out.stderr}")
        report = json.loads(out.stdout)
        best_wall = min(best_wall, wall)
        best_scan = min(best_scan, report["scan"]["seconds"])
    return best_wall, best_scan, report


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--devassert", required=True)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--gib", type=float, default=1.0)
    ap.add_argument("--dir", default=None, help="where to write the data (default: a temp dir)")
    a = ap.parse_args()
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    with tempfile.TemporaryDirectory(dir=a.dir) as d:
        n = int(a.gib * (1 << 30)) // 2
        path = os.path.join(d, "tokens.bin")
        rng = np.random.default_rng(0)
        toks = rng.integers(0, VOCAB, size=n, dtype=np.uint16)
        toks[[17, n // 2, n - 1]] = [VOCAB, VOCAB + 3, 65535]
        toks.tofile(path)
        nbytes = os.path.getsize(path)
        with open(path, "rb") as f:  # into the page cache
            while f.read(1 << 24):
                pass

        gib = nbytes / (1 << 30)
        wall, scan, rep = devassert(a.devassert, path, a.runs, "--vocab", str(VOCAB))
        found = rep["findings"][0]["count"]
        np_max, np_warm, m = peer(NUMPY_MAX, path, a.runs)
        np_where, _, nbad = peer(NUMPY_WHERE, path, a.runs, VOCAB)
        assert found == int(nbad) == 3 and int(m) == 65535, (found, nbad, m)
        print(f"u16 tokens, {gib:.2f} GiB in page cache, best of {a.runs}, {os.cpu_count()} CPUs")
        print(f"  devassert scan (process)     {gib / wall:7.2f} GiB/s  ({wall * 1e3:.1f} ms)")
        print(f"  devassert scan (scan time)   {gib / scan:7.2f} GiB/s  ({scan * 1e3:.1f} ms)")
        print(f"  numpy np.memmap(f).max()       {gib / np_max:7.2f} GiB/s  ({np_max * 1e3:.1f} ms)")
        print(f"  numpy .max(), map reused     {gib / np_warm:7.2f} GiB/s  ({np_warm * 1e3:.1f} ms; pages already mapped)")
        print(f"  numpy flatnonzero(a >= V)    {gib / np_where:7.2f} GiB/s  ({np_where * 1e3:.1f} ms)")
        print(f"  ratio vs .max(): process {np_max / wall:.2f}x, scan {np_max / scan:.2f}x")
        print(f"  ratio vs .max() on a reused map: process {np_warm / wall:.2f}x, scan {np_warm / scan:.2f}x")
        print(f"  ratio vs flatnonzero: process {np_where / wall:.2f}x, scan {np_where / scan:.2f}x")
        del toks

        pqpath = os.path.join(d, "tokens.parquet")
        m_rows = 1 << 25  # 32 Mi int32 values = 128 MiB decoded
        col = rng.integers(0, VOCAB, size=m_rows, dtype=np.int32)
        col[[5, m_rows - 1]] = [VOCAB, VOCAB + 1]
        pq.write_table(pa.table({"input_ids": col}), pqpath)
        pw, ps, prep = devassert(a.devassert, pqpath, a.runs, "--vocab", str(VOCAB), "--column", "input_ids")
        pa_t, _, pmax = peer(PYARROW_MINMAX, pqpath, a.runs)
        assert prep["findings"][0]["count"] == 2 and int(pmax) == VOCAB + 1
        mib = os.path.getsize(pqpath) / (1 << 20)
        print(f"parquet int32 column, {m_rows} values ({mib:.0f} MiB snappy), best of {a.runs}")
        print(f"  devassert scan (process)     {m_rows / pw / 1e6:7.0f} M values/s  ({pw * 1e3:.1f} ms)")
        print(f"  pyarrow read + min_max       {m_rows / pa_t / 1e6:7.0f} M values/s  ({pa_t * 1e3:.1f} ms)")
        print(f"  ratio: {pa_t / pw:.2f}x")

        # What a Hugging Face dataset holds: a list<int32> column of
        # 512-token rows (pyarrow's default: one row group here).
        rows, seq = 1 << 16, 512
        flat = rng.integers(0, VOCAB, size=rows * seq, dtype=np.int32)
        flat[[7, rows * seq - 1]] = [VOCAB, VOCAB + 1]
        lists = pa.ListArray.from_arrays(pa.array(np.arange(0, rows * seq + 1, seq, dtype=np.int32)), pa.array(flat))
        pq.write_table(pa.table({"input_ids": lists}), pqpath)
        lw, _, lrep = devassert(a.devassert, pqpath, a.runs, "--vocab", str(VOCAB), "--column", "input_ids")
        la_t, _, lmax = peer(PYARROW_MINMAX, pqpath, a.runs)
        assert lrep["findings"][0]["count"] == 2 and int(lmax) == VOCAB + 1
        n = rows * seq
        mib = os.path.getsize(pqpath) / (1 << 20)
        print(f"parquet list<int32> column, {rows} rows x {seq} = {n} values ({mib:.0f} MiB snappy), best of {a.runs}")
        print(f"  devassert scan (process)     {n / lw / 1e6:7.0f} M values/s  ({lw * 1e3:.1f} ms)")
        print(f"  pyarrow read + min_max       {n / la_t / 1e6:7.0f} M values/s  ({la_t * 1e3:.1f} ms)")
        print(f"  ratio: {la_t / lw:.2f}x")


if __name__ == "__main__":
    main()

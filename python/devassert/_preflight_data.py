"""Data, judged against the model's tables: token ids against the embedding,
token type ids against the type table, labels against the head (or
`num_classes`) with `ignore_index`, row lengths against the positions.

Every finding comes from `devassert scan` (``_scanner``), so data gives the
same rules, causes and fixes here as on the command line:

- a ``datasets.Dataset`` whose columns live in its Arrow cache files is
  scanned there, in place (the common case: after ``map`` or
  ``load_from_disk``);
- anything held in memory (numpy arrays, tensors, an in-memory Dataset, the
  batches a DataLoader collates) is first screened with one vectorised
  min/max per column; only a column with a value out of range is written to
  a temporary Arrow file and scanned, to name its bad rows.

A row found bad is named by its dataset sample (the index ``dataset[i]``
takes) and column.
"""

import os
import random
import tempfile
import time

from . import _scanner

# Columns and what they index.
TOKENS, TYPES, LABELS = "tokens", "types", "labels"
_TOKEN_COLUMNS = ("input_ids", "decoder_input_ids")
# Samples named per finding, at most.
_MAX_SAMPLES = 16


class Bounds:
    """The valid range of each kind of column, and where it came from."""

    def __init__(self, vocab=None, vocab_from=None, positions=None, types=None, types_from=None, labels=None, labels_from=None, labels_lm=False, ignore_index=-100, label_key="labels"):
        self.vocab, self.vocab_from = vocab, vocab_from
        self.positions = positions
        self.types, self.types_from = types, types_from
        self.labels, self.labels_from, self.labels_lm = labels, labels_from, labels_lm
        self.ignore_index = ignore_index
        self.label_key = label_key

    def role(self, column, columns=()):
        """TOKENS / TYPES / LABELS for a column this preflight can check, or None."""
        if column in _TOKEN_COLUMNS and self.vocab is not None:
            return TOKENS
        if column == "token_type_ids" and self.types is not None:
            return TYPES
        label = self.label_key
        if label == "labels" and "labels" not in columns:
            label = "label"  # the Trainer's collators rename `label` to `labels`
        if column == label and self.labels is not None:
            return LABELS
        return None

    def flags(self, column, role):
        """`devassert scan` flags for a column."""
        if role == TOKENS:
            flags = ["--vocab", str(self.vocab)]
            if column == "input_ids" and self.positions is not None:
                flags += ["--max-len", str(self.positions)]
        elif role == TYPES:
            flags = ["--vocab", str(self.types)]
        else:
            flags = ["--range", f"0:{self.labels}", "--labels"]
            # scan ignores -100 in labels unless --ignore names another
            # value; with no ignore_index, 0 (always valid) is named instead.
            flags += ["--ignore", str(self.ignore_index if self.ignore_index is not None else 0)]
        return flags + ["--column", column]

    def limits(self, column, role):
        """(low, high, ignore, max_len) for the in-memory screen."""
        if role == TOKENS:
            return 0, self.vocab, None, self.positions if column == "input_ids" else None
        if role == TYPES:
            return 0, self.types, None, None
        return 0, self.labels, self.ignore_index, None


# --- one column held in memory -------------------------------------------------------


class Flat:
    """A column as numpy: `values` (1-D), `offsets` (row i is
    values[offsets[i]:offsets[i+1]]; None when each row is one value) and,
    per row, `samples` (dataset index, -1 unknown) and `batches` (batch
    number and row inside it, for loaders), or None when row == sample."""

    def __init__(self, values, offsets=None, samples=None, batches=None):
        self.values = values
        self.offsets = offsets
        self.samples = samples
        self.batches = batches

    @property
    def rows(self):
        return len(self.offsets) - 1 if self.offsets is not None else len(self.values)


def screen(flat, low, high, ignore, max_len):
    """Whether some value lies outside [low, high) (ignore excepted) or some
    row is longer than max_len: one min and one max over the values."""
    import numpy as np

    if max_len is not None and flat.offsets is not None and flat.rows and int(np.diff(flat.offsets).max()) > max_len:
        return True
    return _outside(flat.values, low, high, ignore)


def _outside(v, low, high, ignore):
    if not v.size:
        return False
    lo, hi = v.min(), v.max()
    if ignore is not None and ((lo < low and lo <= ignore) or (hi >= high and hi >= ignore)):
        kept = v[v != ignore]  # only when a sentinel sits at an end
        if not kept.size:
            return False
        lo, hi = kept.min(), kept.max()
    return bool(lo < low or hi >= high)


def flat_from_arrow(column):
    """A pyarrow (chunked) integer or list<integer> column as a Flat, without
    copying the values of a one-level list column."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    arr = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    if not _is_list(arr.type):
        return Flat(_ints(arr))
    level = pc.list_flatten(arr)
    if not _is_list(level.type):
        lengths = pc.fill_null(pc.list_value_length(arr), 0).to_numpy(zero_copy_only=False)
        values = _ints(level)
    else:  # nested (masks as lists of rows): each value's row, level by level
        rows = pc.list_parent_indices(arr).to_numpy(zero_copy_only=False)
        while _is_list(level.type):
            rows = rows[pc.list_parent_indices(level).to_numpy(zero_copy_only=False)]
            level = pc.list_flatten(level)
        values = _ints(level)
        lengths = np.bincount(rows, minlength=len(arr))
    offsets = np.zeros(len(arr) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return Flat(values, offsets)


def _int_type(t):
    """Whether an Arrow type is an integer or (nested) list of integers."""
    import pyarrow as pa

    while _is_list(t):
        t = t.value_type
    return pa.types.is_integer(t)


class ArrowColumn:
    """A pyarrow column screened chunk by chunk where it lies (no copy of the
    column: an in-memory Dataset's table has one chunk per written batch);
    made a Flat (one copy) only when a scan must name its bad rows."""

    def __init__(self, column):
        import pyarrow as pa

        self.column = column if isinstance(column, pa.ChunkedArray) else pa.chunked_array([column])
        self.rows = len(self.column)

    def screen(self, low, high, ignore, max_len):
        import pyarrow.compute as pc

        for chunk in self.column.chunks:
            if _is_list(chunk.type):
                if _is_list(chunk.type.value_type):  # nested: per row, as a Flat
                    if screen(flat_from_arrow(chunk), low, high, ignore, max_len):
                        return True
                    continue
                if max_len is not None and len(chunk) and (pc.max(pc.list_value_length(chunk)).as_py() or 0) > max_len:
                    return True
                values = pc.list_flatten(chunk)
            else:
                values = chunk
            if _outside(_ints(values), low, high, ignore):
                return True
        return False

    def values_count(self):
        import pyarrow.compute as pc

        return sum(len(pc.list_flatten(c)) if _is_list(c.type) else len(c) for c in self.column.chunks)

    def flat(self):
        return flat_from_arrow(self.column)


def _is_list(t):
    import pyarrow as pa

    return pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t)


def _ints(arr):
    import pyarrow.compute as pc

    if arr.null_count:
        arr = pc.drop_null(arr)
    return arr.to_numpy(zero_copy_only=False)


def flat_from_array(a):
    """A numpy array or tensor: one row per first-axis entry, the rest of each
    row flattened (a [N, L] batch of ids has rows of L)."""
    import numpy as np

    a = _numpy(a)
    if a.ndim == 0:
        a = a.reshape(1)
    if a.ndim == 1:
        return Flat(a)
    width = int(np.prod(a.shape[1:]))
    return Flat(a.reshape(-1), np.arange(0, a.shape[0] * width + 1, max(width, 1), dtype=np.int64)[: a.shape[0] + 1] if width else np.zeros(a.shape[0] + 1, dtype=np.int64))


def _numpy(a):
    import numpy as np

    if hasattr(a, "detach") and hasattr(a, "cpu"):  # a tensor
        return a.detach().cpu().numpy()
    return np.asarray(a)


def integer(a):
    """Whether an array / tensor holds integers (ids and labels do)."""
    import numpy as np

    dtype = getattr(a, "dtype", None)
    if dtype is None:
        return False
    if hasattr(a, "is_floating_point"):  # torch
        return not a.is_floating_point() and not a.is_complex() and str(dtype) != "torch.bool"
    return np.issubdtype(dtype, np.integer)


# --- scanning, and naming samples --------------------------------------------------------


class Job:
    """One column to scan: the files, the flags, and how a file's row maps
    to a dataset sample (`row_base` per file, or the Flat it was written from)."""

    def __init__(self, source, column, role, paths, flags, row_base=None, flat=None, temp=False):
        self.source, self.column, self.role = source, column, role
        self.paths, self.flags = paths, flags
        self.row_base = row_base or {}
        self.flat = flat
        self.temp = temp


def run_jobs(jobs, bounds):
    """Scan every job at once; the scan findings with samples named."""
    if not jobs:
        return [], []
    reports = _scanner.scan_all([(j.paths, j.flags) for j in jobs])
    findings, sections = [], []
    for job, report in zip(jobs, reports):
        for f in report.get("findings", []):
            findings.append(_name_samples(f, job, bounds))
        sections.append(_section(job, report))
    return findings, sections


def _section(job, report):
    files = []
    for f in report.get("files", []):
        f = dict(f)
        if job.temp:
            f.pop("file", None)
        files.append(f)
    scan = report.get("scan", {})
    return {"data": job.source, "column": job.column, "target": scan.get("target"), "bound": scan.get("bound"), "ignore": scan.get("ignore"), "read": "in place" if not job.temp else "screened, then scanned from a temporary file", "files": files, "seconds": scan.get("seconds")}


def _name_samples(f, job, bounds):
    f = dict(f)
    evidence = dict(f.get("evidence") or {})
    evidence["source"] = "preflight"
    evidence["data"] = job.source
    evidence["column"] = job.column
    if job.role == TYPES:
        # `scan --vocab` cannot know these are type ids: the catalog's own cause.
        from ._findings import cause

        evidence["type_vocab_size_from"] = bounds.types_from
        f["causes"] = [cause(f["rule"], "type_vocab_size", f"token_type_ids up to {f.get('value_max', max(f.get('values') or [0]))} reach a token type table of {bounds.types} row(s) ({bounds.types_from})")]
        f["fixes"] = list(_rules_causes(f["rule"])["type_vocab_size"]["fixes"])
    elif job.role == TOKENS:
        evidence["embedding_rows_from"] = bounds.vocab_from
    elif job.role == LABELS:
        evidence["classes_from"] = bounds.labels_from
    f["evidence"] = evidence
    samples = []
    locations = []
    for loc in f.get("locations", []):
        loc = dict(loc)
        row = loc.get("row")
        if job.temp:
            loc.pop("file", None)
        if isinstance(row, int):
            sample, batch = _sample_of(job, loc, row)
            loc["column"] = job.column
            if batch is not None:
                loc["batch"], loc["row"] = batch
            if sample is not None:
                loc["sample"] = sample
                if sample not in samples:
                    samples.append(sample)
            elif batch is None:
                loc.pop("row", None)
        locations.append(loc)
    f["locations"] = locations
    if samples:
        f["samples"] = [{"dataset_index": s} for s in samples[:_MAX_SAMPLES]]
        f["samples_certain"] = True
    return f


def _sample_of(job, loc, row):
    """(dataset sample or None, (batch, row in batch) or None) of a scanned row."""
    if job.flat is None:
        base = job.row_base.get(loc.get("file"))
        return (base + row if base is not None else None), None
    flat = job.flat
    batch = None
    if flat.batches is not None and row < len(flat.batches):
        batch = (int(flat.batches[row][0]), int(flat.batches[row][1]))
    if flat.samples is None:
        return row, batch
    s = int(flat.samples[row]) if row < len(flat.samples) else -1
    return (s if s >= 0 else None), batch


def _rules_causes(rule):
    from ._rules import RULES

    return RULES[rule]["causes"]


def write_arrow(flat, column, directory):
    """A temporary Arrow file holding one column, for the scanner."""
    import numpy as np
    import pyarrow as pa

    values = pa.array(flat.values)
    if flat.offsets is None:
        arr = values
    elif flat.offsets[-1] < 2**31:
        arr = pa.ListArray.from_arrays(pa.array(flat.offsets.astype(np.int32)), values)
    else:
        arr = pa.LargeListArray.from_arrays(pa.array(flat.offsets), values)
    table = pa.table({column: arr})
    path = os.path.join(directory, f"{len(os.listdir(directory))}-{column}.arrow")
    with pa.OSFile(path, "wb") as sink, pa.ipc.new_file(sink, table.schema) as w:
        w.write_table(table)
    return path


# --- the sources ---------------------------------------------------------------------------


class Checked:
    """What one data source gave: findings and a summary."""

    def __init__(self):
        self.findings = []
        self.sections = []
        self.sources = []


def check(data, bounds, max_rows):
    """Findings and summary for `data` (one source, a DatasetDict, or a
    list / tuple of sources)."""
    out = Checked()
    with tempfile.TemporaryDirectory(prefix="devassert-preflight-") as tmp:
        jobs = []
        for name, source in _sources(data):
            started = time.perf_counter()
            summary = {"name": name, "kind": _kind(source)}
            jobs += _jobs(source, name, bounds, max_rows, tmp, summary, out)
            summary["seconds"] = round(time.perf_counter() - started, 6)
            out.sources.append(summary)
        findings, sections = run_jobs(jobs, bounds)
        out.findings += findings
        out.sections += sections
    return out


def _sources(data):
    """(name, source) pairs: a DatasetDict or a mapping of loaders gives one
    per split; a list / tuple of sources one each; else `data` itself."""
    if _is_hf_dataset(data) or _is_loader(data) or _is_torch_dataset(data) or _is_array(data):
        return [("data", data)]
    if hasattr(data, "items") and hasattr(data, "keys"):
        values = list(data.values())
        if values and all(_is_hf_dataset(v) or _is_loader(v) or _is_torch_dataset(v) for v in values):
            return [(str(k), v) for k, v in data.items()]
        return [("data", data)]
    if isinstance(data, (list, tuple)) and data and all(_is_hf_dataset(v) or _is_loader(v) or _is_torch_dataset(v) or hasattr(v, "keys") for v in data):
        return [(f"data[{i}]", v) for i, v in enumerate(data)]
    return [("data", data)]


def _kind(source):
    t = type(source)
    top = t.__module__.split(".")[0]
    return t.__name__ if top == "builtins" else f"{top}.{t.__name__}"


def _is_hf_dataset(x):
    t = type(x)
    return t.__name__ == "Dataset" and t.__module__.startswith("datasets.")


def _is_loader(x):
    try:
        from torch.utils.data import DataLoader
    except ImportError:
        return False
    return isinstance(x, DataLoader)


def _is_torch_dataset(x):
    try:
        from torch.utils.data import Dataset, IterableDataset
    except ImportError:
        return False
    return isinstance(x, (Dataset, IterableDataset)) and not _is_hf_dataset(x)


def _is_array(x):
    return hasattr(x, "dtype") and hasattr(x, "shape")


def _jobs(source, name, bounds, max_rows, tmp, summary, out):
    if _is_hf_dataset(source):
        return _hf_jobs(source, name, bounds, tmp, summary)
    if _is_loader(source):
        return _memory_jobs(_loader_columns(source, max_rows, summary), name, bounds, tmp, summary)
    if _is_torch_dataset(source):
        from torch.utils.data import DataLoader

        loader = DataLoader(source, batch_size=None, shuffle=False)
        return _memory_jobs(_loader_columns(loader, max_rows, summary), name, bounds, tmp, summary)
    if _is_array(source):
        role_name = _bare_array_column(bounds)
        if role_name is None:
            summary["skipped"] = "no bound to check a bare array against: pass a model, a tokenizer or num_classes"
            return []
        if not integer(source):
            summary["skipped"] = f"dtype {source.dtype} holds no ids or labels"
            return []
        flat = flat_from_array(source)
        summary["rows"] = flat.rows
        return _memory_jobs({role_name: flat}, name, bounds, tmp, summary)
    if hasattr(source, "keys"):
        columns = {}
        for key in source.keys():
            v = source[key]
            if _is_array(v) and integer(v):
                columns[str(key)] = flat_from_array(v)
            elif isinstance(v, (list, tuple)):
                columns[str(key)] = _flat_from_lists(v)
        summary["rows"] = max((c.rows for c in columns.values()), default=0)
        return _memory_jobs(columns, name, bounds, tmp, summary)
    raise TypeError(
        f"devassert.preflight: cannot read data of type {type(source).__name__}: pass a datasets.Dataset, "
        "a numpy array or tensor, a dict of them, a torch Dataset or a DataLoader"
    )


def _bare_array_column(bounds):
    """A bare array holds token ids when an id bound is known, else labels."""
    if bounds.vocab is not None:
        return "input_ids"
    if bounds.labels is not None:
        return bounds.label_key
    return None


def _flat_from_lists(v):
    import pyarrow as pa

    try:
        arr = pa.array(v)
        if not _int_type(arr.type):
            raise TypeError(f"devassert.preflight: a column given as a list holds {arr.type}, not integers")
        return flat_from_arrow(arr)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError) as e:
        raise TypeError(f"devassert.preflight: a column given as a list must hold integers or lists of them: {e}") from None


def _memory_jobs(columns, name, bounds, tmp, summary):
    jobs = []
    checked = {}
    names = list(columns)
    for column, flat in columns.items():
        role = bounds.role(column, names)
        if role is None:
            continue
        low, high, ignore, max_len = bounds.limits(column, role)
        if isinstance(flat, ArrowColumn):
            bad = flat.screen(low, high, ignore, max_len)
            checked[column] = {"rows": flat.rows, "values": flat.values_count(), "out_of_range": bad}
            flat = flat.flat() if bad else flat
        else:
            bad = screen(flat, low, high, ignore, max_len)
            checked[column] = {"rows": flat.rows, "values": int(flat.values.size), "out_of_range": bad}
        if bad:
            path = write_arrow(flat, column, tmp)
            jobs.append(Job(name, column, role, [path], bounds.flags(column, role), flat=flat, temp=True))
    summary["columns"] = checked
    summary["read"] = "screened in memory"
    return jobs


def _hf_jobs(ds, name, bounds, tmp, summary):
    """A datasets.Dataset: its columns scanned in its Arrow files when the
    table is those files whole; otherwise (an in-memory table, a sliced one,
    renamed or cast columns) screened in memory."""
    summary["rows"] = len(ds)
    names = list(ds.column_names)
    schema = ds.data.schema
    columns = [c for c in names if bounds.role(c, names) and _int_type(schema.field(c).type)]
    jobs = []
    memory = []
    for column in columns:
        files = _whole_files(ds, column)
        role = bounds.role(column, names)
        if files is None:
            memory.append(column)
            continue
        paths = [p for p, _ in files]
        base, total = {}, 0
        for p, n in files:
            base[p] = total
            total += n
        if ds._indices is not None:
            # A selection (shuffle, filter, train_test_split) of the files'
            # rows: clean files mean a clean selection; anything found is
            # re-read from the selected rows, to name samples exactly.
            report = _scanner.scan_all([(paths, bounds.flags(column, role))])[0]
            if report.get("exit_code") == 0:
                summary.setdefault("columns", {})[column] = {"read": "in place", "files": len(paths)}
                continue
            memory.append(column)
            continue
        jobs.append(Job(name, column, role, paths, bounds.flags(column, role), row_base=base))
        summary.setdefault("columns", {})[column] = {"read": "in place", "files": len(paths)}
    if memory:
        table = ds.data.table if ds._indices is None else ds.data.table.take(ds._indices.column(0))
        flats = {c: ArrowColumn(table.column(c)) for c in memory}
        part = {}
        jobs += _memory_jobs(flats, name, bounds, tmp, part)
        summary.setdefault("columns", {}).update({c: dict(v, read="screened in memory") for c, v in part.get("columns", {}).items()})
    reads = {v.get("read") for v in summary.get("columns", {}).values()}
    summary["read"] = "Arrow files read in place" if reads == {"in place"} else "screened in memory" if reads == {"screened in memory"} else "Arrow files in place, and memory" if reads else "nothing to check"
    return jobs


# Replays (operations datasets records on a memory-mapped table) that leave
# the rows and a remaining column's values as the file holds them.
_SAME_ROWS = {"remove_column", "drop", "select", "replace_schema_metadata", "combine_chunks"}


def _whole_files(ds, column):
    """[(path, rows)] when the dataset's `column` is exactly that column of
    its Arrow files, whole and in order; else None."""
    try:
        from datasets.table import ConcatenationTable, MemoryMappedTable
    except ImportError:
        return None
    table = ds.data
    blocks = table.blocks if isinstance(table, ConcatenationTable) else [[table]]
    out = []
    for row_block in blocks:
        holder = [b for b in row_block if column in b.column_names]
        if len(holder) != 1:
            return None
        b = holder[0]
        if not isinstance(b, MemoryMappedTable) or any(r[0] not in _SAME_ROWS for r in b.replays or []):
            return None
        out.append((b.path, b.num_rows))
    paths = [p for p, _ in out]
    if len(set(paths)) != len(paths) or not paths:
        return None
    return out


# --- loaders ---------------------------------------------------------------------------


def _loader_columns(loader, max_rows, summary):
    """Draw batches as the loader would (its sampler, its dataset, its
    collate_fn) up to max_rows samples, in this process, with the random
    state restored after (the run's shuffle order stays what it was)."""
    import numpy as np
    import torch
    from torch.utils.data import IterableDataset

    parts = {}
    rows = 0
    state = (torch.random.get_rng_state(), random.getstate(), np.random.get_state())
    truncated = False
    try:
        for b, (indices, batch) in enumerate(_batches(loader, isinstance(loader.dataset, IterableDataset))):
            got = _batch_columns(batch)
            n = max((f.rows for f in got.values()), default=0)
            for column, flat in got.items():
                samples = np.asarray(indices if indices is not None and len(indices) == flat.rows else [-1] * flat.rows, dtype=np.int64)
                where = np.stack([np.full(flat.rows, b), np.arange(flat.rows)], axis=1)
                parts.setdefault(column, []).append((flat, samples, where))
            rows += n
            if max_rows is not None and rows >= max_rows:
                truncated = True
                break
    finally:
        torch.random.set_rng_state(state[0])
        random.setstate(state[1])
        np.random.set_state(state[2])
    summary["rows"] = rows
    try:
        total = len(loader.dataset)
    except TypeError:
        total = None
    summary["rows_total"] = total
    if truncated and total != rows:
        summary["partial"] = f"the first {rows} samples drawn (max_rows={max_rows})"
    return {c: _concat(p) for c, p in parts.items()}


def _batches(loader, iterable):
    """(sampler indices or None, collated batch) in the loader's order."""
    if iterable:
        for batch in loader:
            yield None, batch
        return
    ds = loader.dataset
    getitems = getattr(ds, "__getitems__", None)
    if loader.batch_sampler is not None:
        for idx in loader.batch_sampler:
            idx = [int(i) for i in idx]
            items = getitems(idx) if getitems is not None else [ds[i] for i in idx]
            yield idx, loader.collate_fn(items)
    else:  # batch_size=None: each sample is its own (uncollated) row
        for i in loader.sampler:
            yield [int(i)], _as_batch_of_one(loader.collate_fn(ds[i]))


def _as_batch_of_one(sample):
    """An uncollated sample as a batch of one row."""
    if _is_array(sample):
        return sample[None]
    if hasattr(sample, "keys"):
        return {k: _as_batch_of_one(sample[k]) for k in sample.keys()}
    if isinstance(sample, tuple):
        return tuple(_as_batch_of_one(v) for v in sample)
    if isinstance(sample, list) and all(isinstance(v, int) for v in sample):
        return [sample]
    if isinstance(sample, int):
        return [sample]
    return sample


def _batch_columns(batch):
    """The integer columns of a collated batch as Flats: a dict by key; a
    (inputs, labels) tuple as `input_ids` and `labels`. Token columns are cut
    to the attention mask (padding is not data)."""
    out = {}
    if hasattr(batch, "keys"):
        items = [(str(k), batch[k]) for k in batch.keys()]
    elif isinstance(batch, (list, tuple)) and len(batch) == 2:
        items = [("input_ids", batch[0]), ("labels", batch[1])]
    elif _is_array(batch):
        items = [("input_ids", batch)]
    else:
        return out
    mask = dict(items).get("attention_mask")
    for key, v in items:
        if isinstance(v, (list, tuple)):
            try:
                out[key] = _flat_from_lists(v)
            except TypeError:
                pass  # not ids: text, floats
            continue
        if not _is_array(v) or not integer(v):
            continue
        if key in ("input_ids", "token_type_ids") and mask is not None and _is_array(mask) and tuple(mask.shape) == tuple(v.shape) and len(v.shape) == 2:
            out[key] = _masked(v, mask)
        else:
            out[key] = flat_from_array(v)
    return out


def _masked(v, mask):
    import numpy as np

    v, m = _numpy(v), _numpy(mask).astype(bool)
    offsets = np.zeros(v.shape[0] + 1, dtype=np.int64)
    np.cumsum(m.sum(axis=1), out=offsets[1:])
    return Flat(v[m], offsets)


def _concat(parts):
    import numpy as np

    values = np.concatenate([p[0].values for p in parts]) if parts else np.zeros(0, dtype=np.int64)
    offsets = None
    if all(p[0].offsets is not None for p in parts):
        pieces, base = [np.zeros(1, dtype=np.int64)], 0
        for f, _, _ in parts:
            pieces.append(f.offsets[1:] + base)
            base += int(f.offsets[-1])
        offsets = np.concatenate(pieces)
    elif any(p[0].offsets is not None for p in parts):  # ragged: one row per value
        offsets = np.concatenate([[0], np.cumsum(np.concatenate([np.diff(p[0].offsets) if p[0].offsets is not None else np.ones(p[0].rows, dtype=np.int64) for p in parts]))]).astype(np.int64)
    samples = np.concatenate([p[1] for p in parts])
    where = np.concatenate([p[2] for p in parts])
    return Flat(values, offsets, samples, where)

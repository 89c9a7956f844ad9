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

import tempfile
import time

from . import columns as _columns
from . import loaders as _preflight_loaders
from . import scanner as _scanner
from .columns import ArrowColumn, flat_from_array, integer, screen, write_arrow
from .steps import step as _step

# Columns and what they index.
TOKENS, TYPES, LABELS = "tokens", "types", "labels"
_TOKEN_COLUMNS = ("input_ids", "decoder_input_ids")
# Samples named per finding, at most.
_MAX_SAMPLES = 16


class Bounds:
    """The valid range of each kind of column, and where it came from."""

    def __init__(self, vocab=None, vocab_from=None, positions=None, types=None, types_from=None, labels=None, labels_from=None, labels_lm=False, ignore_index=-100, label_key="labels", tokenizer_facts=None):
        self.vocab, self.vocab_from = vocab, vocab_from
        self.positions = positions
        self.types, self.types_from = types, types_from
        self.labels, self.labels_from, self.labels_lm = labels, labels_from, labels_lm
        self.ignore_index = ignore_index
        self.label_key = label_key
        # The live tokenizer's facts for the cause engine (tok_len, tok_added, pad_id).
        self.tokenizer_facts = tokenizer_facts

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
        from .._findings.findings import cause

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
    split = job.source if job.source != "data" else None
    if split is not None:
        for loc in locations:
            if "sample" in loc:
                loc["split"] = split
    if samples:
        f["samples"] = [{"dataset_index": s, "split": split} if split else {"dataset_index": s} for s in samples[:_MAX_SAMPLES]]
        f["samples_certain"] = True
    if job.role in (TOKENS, LABELS) and (f.get("evidence") or {}).get("check") == "range":
        _decide(f, job.role, bounds)
    return f


def _decide(f, role, bounds):
    """The range finding's causes decided again with what preflight knows
    beyond the scan: the live tokenizer (its length, added tokens, pad id)
    and the loss's ignore_index; one story with the model's findings."""
    from .._findings import facts as _facts

    ev = f["evidence"]
    bound = f.get("bound") or {}
    low, high = bound.get("low"), bound.get("high")
    if not isinstance(low, int) or not isinstance(high, int):
        return
    kind = "ids" if role == TOKENS else "labels"
    counts = {v: c for v, c in zip(f.get("values") or [], f.get("value_counts") or []) if isinstance(v, int)}
    measured = _facts.value_facts(counts, low, high, kind)
    for key, fact in (("column_min", "col_min"), ("column_max", "col_max")):
        if isinstance(ev.get(key), int):
            measured[fact] = ev[key]
    measured.update({"positions": 0, "hf": 1})
    if kind == "ids":
        measured.update(bounds.tokenizer_facts or {})
    else:
        measured["ignore"] = bounds.ignore_index
    causes, ruled_out = _facts.decide(kind, measured)
    if not causes:
        return
    # The rule's own steps stay after the causes' (scan put them there).
    old = _facts.fixes_of(f.get("causes") or [])
    new = _facts.fixes_of(causes)
    f["fixes"] = new + [x for x in f.get("fixes") or [] if x not in old and x not in new]
    f["causes"] = causes
    if ruled_out:
        ev["ruled_out"] = ruled_out
    else:
        ev.pop("ruled_out", None)


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
    from .._findings.rules import RULES

    return RULES[rule]["causes"]


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
            with _step(f"reading data source {name!r} ({_kind(source)})"):
                jobs += _jobs(source, name, bounds, max_rows, tmp, summary, out)
            summary["seconds"] = round(time.perf_counter() - started, 6)
            if not summary.get("columns"):
                out.findings.append(_nothing_checked(name, summary, bounds))
            # What was seen, for that finding's words only (not in the contract).
            out.sources.append({k: v for k, v in summary.items() if not k.startswith("_")})
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
    return _columns.is_array(x)


def _jobs(source, name, bounds, max_rows, tmp, summary, out):
    if _is_hf_dataset(source):
        return _hf_jobs(source, name, bounds, tmp, summary)
    if _is_loader(source):
        return _memory_jobs(_preflight_loaders.loader_columns(source, max_rows, summary, bounds.labels is not None), name, bounds, tmp, summary)
    if _is_torch_dataset(source):
        from torch.utils.data import DataLoader

        loader = DataLoader(source, batch_size=None, shuffle=False)
        return _memory_jobs(_preflight_loaders.loader_columns(loader, max_rows, summary, bounds.labels is not None), name, bounds, tmp, summary)
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
        summary["_seen_columns"] = [str(k) for k in source.keys()][:24]
        for key in source.keys():
            v = source[key]
            if _is_array(v) and integer(v):
                columns[str(key)] = flat_from_array(v)
            elif isinstance(v, (list, tuple)):
                try:
                    columns[str(key)] = _columns.flat_from_lists(v)
                except TypeError:
                    pass  # not ids: text, floats
        summary["rows"] = max((c.rows for c in columns.values()), default=0)
        return _memory_jobs(columns, name, bounds, tmp, summary)
    raise TypeError(
        f"devassert.preflight: cannot read data of type {type(source).__name__}: pass a datasets.Dataset, "
        "a numpy array or tensor, a dict of them, a torch Dataset or a DataLoader"
    )


def _nothing_checked(name, summary, bounds):
    """The error finding of a data source of which no column could be
    checked (rule DA601): preflight never passes on data it did not read."""
    from .._findings.findings import NOTHING_CHECKED, finding

    seen = summary.get("_seen_columns")
    if summary.get("skipped"):
        why = summary["skipped"]
    elif bounds.vocab is None and bounds.labels is None and bounds.types is None:
        why = "there is nothing to check it against: no input embedding (the model has none, or no model), no tokenizer and no num_classes"
    elif "_batch" in summary:
        why = f"its batches ({summary['_batch']}) hold no column preflight knows"
    elif summary.get("rows") == 0:
        why = "it holds no rows"
    else:
        why = f"it holds no column preflight knows (columns: {seen if seen else 'none read'})"
    label = bounds.label_key
    fixes = [
        f"name the columns preflight checks: input_ids (or decoder_input_ids) against the embedding, token_type_ids, and {label!r} (label_key=) against the labels' bound",
        "or pass the ids themselves: devassert.preflight(model, data=ids_tensor), or a DataLoader whose batches are dicts of those keys or (ids, labels) tuples",
    ]
    if bounds.vocab is None and bounds.labels is None:
        fixes.insert(0, "pass the model (its input embedding), the tokenizer, or num_classes= for labels")
    evidence = {"source": "preflight", "data": name, "checked": [], "why": why}
    summary_text = f"preflight checked nothing in data {name!r}: {why}"
    return finding(NOTHING_CHECKED, "error", None, evidence, fixes, summary=summary_text)


def _bare_array_column(bounds):
    """A bare array holds token ids when an id bound is known, else labels."""
    if bounds.vocab is not None:
        return "input_ids"
    if bounds.labels is not None:
        return bounds.label_key
    return None


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
    summary["_seen_columns"] = names[:24]
    schema = ds.data.schema
    columns = [c for c in names if bounds.role(c, names) and _columns.int_type(schema.field(c).type)]
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

"""Which dataset samples a bad tensor came from.

The guard notes, for the last batches the DataLoaders of this process
returned, the dataset indices the sampler drew for them (``_next_index``),
which worker made them, and their tensors. On a violation it looks for the
offending tensor among all of them and maps the bad rows to dataset indices.
The answer is certain only when the match is proven: the tensor *is* one of a
batch's tensors (or a view of its rows), or its content equals one batch's
tensor and no other recorded batch's. Prefetching loaders (timm's, HF
Accelerate's, Lightning's, CUDA-stream copies) have already fetched the next
batch when one fails, and two batches can hold the same bad row: then every
candidate is named, as "not certain". Large tensors are only weakly held: a
batch whose tensor is gone may have held it too, so it also makes the answer
uncertain. An ``IterableDataset`` has no indices: its batches are matched (for
the worker) but never name samples.

Inside a worker (or the main process with ``num_workers=0``) a violation raised
while a batch is being fetched maps to the indices of that fetch; inside
``dataset[i]`` to `i`, for certain. A finding raised in a worker travels with
the exception the DataLoader re-raises in its parent, so the parent's report
names the raise that ended the run.

Everything here runs at most once per batch (recording) or on a violation.
"""

import collections
import os
import sys
import weakref

import torch

from . import caller as _caller
from . import splits as _splits
from .violation import cpu_view

# Batches recorded, newest last: enough for loaders that fetch a few ahead.
_KEEP_BATCHES = 16
# Tensors of a batch are held (so their content can be compared) up to this
# many bytes per batch; the rest weakly (their identity, while they live).
_HOLD_BYTES = 4 << 20
# Rows mapped to samples, at most.
_MAX_ROWS = 16

_recent = collections.deque(maxlen=_KEEP_BATCHES)
_patched = []  # (class, attribute, original) for uninstall()


class _Batch:
    """One batch a DataLoader returned: its sampler indices (None for an
    IterableDataset), its worker, and (shape, dtype, ref) of its tensors."""

    __slots__ = ("indices", "worker", "tensors", "split")

    def __init__(self, data, indices, worker, split=None):
        self.indices = indices
        self.worker = worker
        self.split = split
        self.tensors = []
        held = 0
        for t in _tensors(data):
            size = t.numel() * t.element_size()
            if held + size <= _HOLD_BYTES:
                held += size
                ref = _splits.Strong(t)
            else:
                try:
                    ref = weakref.ref(t)
                except TypeError:
                    continue
            self.tensors.append((t.shape, t.dtype, ref))


class Samples(tuple):
    """(samples, certain, worker), and `note`: why the samples are not
    certain; `split`: the split of the dataset they came from, when known."""

    note = None
    split = None

    def __new__(cls, samples, certain, worker, note=None, split=None):
        self = super().__new__(cls, (samples, certain, worker))
        self.note = note
        self.split = split
        return self


def _flatten(index):
    """A sampler's index (an int, or a list of them for a batch) as a list."""
    if isinstance(index, (list, tuple)):
        return [int(i) for i in index if isinstance(i, int)] if all(isinstance(i, int) for i in index) else []
    return [int(index)] if isinstance(index, int) else []


def install():
    """Record the indices of every batch the DataLoaders of this process return."""
    if _patched:
        return
    try:
        from torch.utils.data import dataloader as dl
    except Exception:
        return
    base = dl._BaseDataLoaderIter
    next_index = base._next_index
    next_ = base.__next__

    def _next_index(self):
        index = next_index(self)
        self._devassert_index = index
        return index

    def __next__(self):
        try:
            data = next_(self)
        except BaseException as error:  # a worker's error, StopIteration: as from torch
            _caller.trim(error)
            raise
        try:
            _note_batch(self, data)
        except Exception:
            pass
        return data

    _patch(base, "_next_index", _next_index)
    _patch(base, "__next__", __next__)

    multi = getattr(dl, "_MultiProcessingDataLoaderIter", None)
    if multi is not None and hasattr(multi, "_try_put_index") and hasattr(multi, "_get_data"):
        try_put = multi._try_put_index
        get_data = multi._get_data

        def _try_put_index(self):
            sent = self._send_idx
            try_put(self)
            if self._send_idx != sent:
                sent_map = self.__dict__.setdefault("_devassert_sent", {})
                worker = self._task_info.get(sent, (None,))[0]
                sent_map[sent] = (getattr(self, "_devassert_index", None), worker)

        def _get_data(self):
            idx, data = get_data(self)
            self.__dict__.setdefault("_devassert_received", {})[id(data)] = idx
            return idx, data

        _patch(multi, "_try_put_index", _try_put_index)
        _patch(multi, "_get_data", _get_data)
    _carry_findings()


def _patch(cls, name, fn):
    _patched.append((cls, name, cls.__dict__[name]))
    setattr(cls, name, fn)


def uninstall():
    """Put the DataLoader's own methods back."""
    while _patched:
        cls, name, original = _patched.pop()
        setattr(cls, name, original)
    _recent.clear()


def _carry_findings():
    """A guard exception raised in a DataLoader worker reaches the parent as a
    new exception built from its class and text (``ExceptionWrapper``): give
    it the worker's finding, so the parent knows which raise ended the run."""
    try:
        from torch._utils import ExceptionWrapper
    except Exception:
        return
    init = ExceptionWrapper.__init__
    reraise = ExceptionWrapper.reraise

    def __init__(self, exc_info=None, *args, **kwargs):
        init(self, exc_info, *args, **kwargs)
        try:
            finding = getattr((exc_info or sys.exc_info())[1], "finding", None)
        except Exception:
            finding = None
        if isinstance(finding, dict):
            self.devassert_finding = finding  # pickled with the wrapper

    def reraise_with_finding(self):
        finding = getattr(self, "devassert_finding", None)
        try:
            reraise(self)
        except Exception as e:
            if finding is not None and getattr(e, "finding", None) is None:
                e.finding = finding
                e.rule = finding.get("rule")
                from . import report as _report

                _report.watch_uncaught()
            _caller.trim(e)
            raise

    _patch(ExceptionWrapper, "__init__", __init__)
    _patch(ExceptionWrapper, "reraise", reraise_with_finding)


def _note_batch(it, data):
    received = it.__dict__.get("_devassert_received")
    if received is not None:
        idx = received.pop(id(data), None)
        index, worker = it.__dict__.get("_devassert_sent", {}).pop(idx, (None, None))
    else:
        index, worker = getattr(it, "_devassert_index", None), None
    # An IterableDataset's sampler yields None: no indices, but the batch is
    # kept (a match names its worker, and it is the newest batch).
    _recent.append(_Batch(data, _wrapped_indices(it, _flatten(index)) or None, worker, _split(it)))


def _split(it):
    """The split of the iterator's dataset (asked once per iterator: an epoch)."""
    known = it.__dict__.get("_devassert_split", _split)
    if known is _split:
        known = it.__dict__["_devassert_split"] = _splits.split_of(getattr(it, "_dataset", None))
    return known


def _wrapped_indices(it, indices):
    """`indices` as the wrapped dataset's, for a dataset that maps its own
    (`devassert.quarantine.Excluded`): the quarantine file names those."""
    mapping = getattr(getattr(it, "_dataset", None), "devassert_index", None)
    if not indices or not callable(mapping):
        return indices
    try:
        return [mapping(i) for i in indices]
    except Exception:  # noqa: BLE001 - a mapping that fails names no sample
        return None


def _tensors(obj, depth=0):
    """The tensors of a collated batch (dicts, lists, tuples, BatchEncoding)."""
    if isinstance(obj, torch.Tensor):
        yield obj
    elif depth < 4:
        if hasattr(obj, "items"):
            try:
                values = list(obj.values())
            except Exception:
                values = []
            for v in values:
                yield from _tensors(v, depth + 1)
        elif isinstance(obj, (list, tuple)):
            for v in obj[:64]:
                yield from _tensors(v, depth + 1)


def _content(found, t):
    """Whether the recorded tensor `t` holds exactly `found`'s values."""
    if found.shape != t.shape or found.dtype != t.dtype:
        return False
    try:
        return bool(torch.equal(cpu_view(found), cpu_view(t)))
    except Exception:
        return False


def _rows_of(found, t):
    """Whether `found` is `t`, or a view of `t` whose rows are `t`'s rows."""
    if found is t:
        return True
    try:
        return (
            found.dim() > 0
            and t.dim() > 0
            and found.device == t.device
            and found.size(0) == t.size(0)
            and found.stride(0) == t.stride(0)
            and found.untyped_storage().data_ptr() == t.untyped_storage().data_ptr()
            and t.storage_offset() <= found.storage_offset() < t.storage_offset() + max(t.stride(0), 1)
        )
    except Exception:
        return False


def _fetching():
    """(indices, current index or None) of a map-style fetch on this stack."""
    frame = sys._getframe(1)
    while frame is not None:
        code = frame.f_code
        if code.co_filename.endswith("fetch.py") and "utils" in code.co_filename:
            local = frame.f_locals
            if code.co_name == "<listcomp>" and "idx" in local:
                current = local.get("idx")
                outer = frame.f_back
                batch = outer.f_locals.get("possibly_batched_index") if outer is not None else None
                return _flatten(batch), current if isinstance(current, int) else None
            if code.co_name == "fetch" and "possibly_batched_index" in local:
                if type(local.get("self")).__name__ != "_MapDatasetFetcher":
                    return [], None  # an IterableDataset: no indices
                index = local["possibly_batched_index"]
                # Python 3.12+ runs the comprehension inside this frame; without
                # automatic batching the index is the sample's.
                current = local.get("idx", index)
                return _flatten(index), current if isinstance(current, int) else None
        frame = frame.f_back
    return None


def _rows(found, cap=_MAX_ROWS):
    """The first `cap` first-dimension rows that hold a bad value, found on
    the mask (over the collapsed tensor), never over the view's full size."""
    t = found.tensor
    mask = found.mask
    if t.dim() == 0 or mask.dim() == 0:
        return []
    if mask.size(0) == 1 and t.size(0) > 1:  # expanded along the batch dimension: every row
        return list(range(min(t.size(0), cap)))
    per_row = mask.flatten(1).any(dim=1) if mask.dim() > 1 else mask  # (any over a tuple of dims: torch 2.2+)
    return per_row.nonzero()[:cap].flatten().tolist()


def find(found):
    """Samples (samples, certain, worker, note) for a violation: `samples` a
    list of {"dataset_index", "row"} or None; `worker` the DataLoader worker
    that raised it or loaded its batch; `note` why it is not certain."""
    worker = _worker_id()
    fetch = _fetching()
    if fetch is not None:
        indices, current = fetch
        if current is not None:
            return Samples([{"dataset_index": current}], True, worker)
        if indices and found.tensor.dim() and found.tensor.size(0) == len(indices):
            return Samples(_mapped(_rows(found), indices), False, worker, "raised while the batch was collated")
        return Samples(None, False, worker)
    return _match(found.tensor, _rows(found), worker)


def _match(t, rows, worker):
    """The recorded batch that `t` came from, proven or among candidates."""
    batches = list(_recent)
    for b in reversed(batches):
        for _, _, ref in b.tensors:
            held = ref()
            if held is not None and _rows_of(t, held):
                return _named(t, [b], rows, worker, proven=True)
    same, unknown = [], 0
    for b in batches:
        states = [_compare(t, shape, dtype, ref) for shape, dtype, ref in b.tensors]
        if True in states:
            same.append(b)
        elif None in states:
            unknown += 1
    if same:
        return _named(t, same, rows, worker, proven=len(same) == 1 and not unknown, unknown=unknown)
    # No batch holds it as it is: it was computed from a batch (positions,
    # shifted labels). Its rows are named in the batch being processed,
    # when the calling frames hold one; never in another batch (a loader
    # that prefetches has already returned the next one).
    b = _processed(batches)
    if b is not None and b.indices and t.dim() and t.size(0) == len(b.indices):
        note = "computed from the batch being processed (the calling code holds it); its rows are taken as that batch's rows"
        return Samples(_mapped(rows, b.indices), False, _first(worker, b.worker), note, b.split)
    return Samples(None, False, worker)


# The devassert package's folder: its frames hold batches of their own.
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
# Calling frames searched for the batch being processed, and values per frame.
_FRAMES, _LOCALS = 64, 64


def _processed(batches):
    """The recorded batch whose tensors the calling frames hold (the
    training loop's `batch`, a Trainer's `inputs`), innermost first; None
    when no frame holds one. Identity only: a loader that prefetches holds
    the next batch in a suspended generator, never on this stack."""
    held = {}
    for b in batches:
        for _, _, ref in b.tensors:
            t = ref()
            if t is not None:
                held[id(t)] = b
    if not held:
        return None
    frame = sys._getframe(1)
    for _ in range(_FRAMES):
        if frame is None:
            break
        if frame.f_code.co_filename.startswith(_PACKAGE):  # the guard's own frames
            frame = frame.f_back
            continue
        try:
            values = list(frame.f_locals.values())[:_LOCALS]
        except Exception:  # noqa: BLE001
            values = []
        for v in values:
            if isinstance(v, torch.Tensor):
                if id(v) in held:
                    return held[id(v)]
            elif isinstance(v, (dict, list, tuple)) or hasattr(v, "items"):
                for t in _tensors(v, 2):
                    if id(t) in held:
                        return held[id(t)]
        frame = frame.f_back
    return None


def _compare(t, shape, dtype, ref):
    """True: the recorded tensor holds `t`'s values; False: it does not; None:
    it might (it is gone, so its content cannot be compared)."""
    if shape != t.shape or dtype != t.dtype:
        return False
    held = ref()
    if held is None:
        return None
    return _content(t, held)


def _named(t, batches, rows, worker, proven, unknown=0):
    """The samples of `t`'s `rows` in each candidate batch (proven: the one
    batch `t` came from); rows map to indices when the batch has one index
    per row of `t`."""
    workers = {b.worker for b in batches}
    batch_worker = workers.pop() if len(workers) == 1 else None
    samples = []
    for b in batches:
        if b.indices and t.dim() and t.size(0) == len(b.indices):
            samples += [s for s in _mapped(rows, b.indices) if s not in samples]
    samples = samples[:_MAX_ROWS] or None
    indexed = all(b.indices and t.dim() and t.size(0) == len(b.indices) for b in batches)
    certain = proven and indexed and samples is not None
    note = None
    if not certain:
        if not indexed and len(batches) == 1:
            note = "the batch has no sampler index per row (an IterableDataset, or a custom sampler or collate)"
        if len(batches) > 1 or unknown:
            note = f"{len(batches) + unknown} batches the DataLoader returned may hold this tensor; every candidate is named"
    splits = {b.split for b in batches}
    return Samples(samples, certain, _first(worker, batch_worker), note, splits.pop() if len(splits) == 1 else None)


def _first(*values):
    return next((v for v in values if v is not None), None)


def _mapped(rows, indices):
    return [{"dataset_index": indices[r], "row": r} for r in rows[:_MAX_ROWS] if r < len(indices)]


def _worker_id():
    try:
        from torch.utils.data import get_worker_info

        info = get_worker_info()
    except Exception:
        return None
    return info.id if info is not None else None

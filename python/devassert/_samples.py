"""Which dataset samples a bad tensor came from.

The guard notes, for the last few batches a DataLoader returned in this
process, the dataset indices the sampler drew for them (``_next_index``), and
which worker made them. On a violation it looks for the offending tensor among
those batches' tensors (same shape, same values: a batch moved to the GPU
still matches), and maps the bad rows to dataset indices. Inside a worker (or
the main process with ``num_workers=0``) a violation raised while a batch is
being fetched maps to the indices of that fetch; inside ``dataset[i]`` to `i`.
When no batch matches, the last batch's indices are offered as "not certain".

Everything here runs at most once per batch (recording) or on a violation.
"""

import collections
import sys

import torch

from ._violation import cpu_view

_recent = collections.deque(maxlen=4)  # (batch, indices, worker) newest last
_patched = False


def _flatten(index):
    """A sampler's index (an int, or a list of them for a batch) as a list."""
    if isinstance(index, (list, tuple)):
        return [int(i) for i in index if isinstance(i, int)] if all(isinstance(i, int) for i in index) else []
    return [int(index)] if isinstance(index, int) else []


def install():
    """Record the indices of every batch the DataLoaders of this process return."""
    global _patched
    if _patched:
        return
    _patched = True
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
        data = next_(self)
        try:
            _note_batch(self, data)
        except Exception:
            pass
        return data

    base._next_index = _next_index
    base.__next__ = __next__

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

        multi._try_put_index = _try_put_index
        multi._get_data = _get_data


def _note_batch(it, data):
    received = it.__dict__.get("_devassert_received")
    if received is not None:
        idx = received.pop(id(data), None)
        index, worker = it.__dict__.get("_devassert_sent", {}).pop(idx, (None, None))
    else:
        index, worker = getattr(it, "_devassert_index", None), None
    indices = _flatten(index)
    if indices:
        _recent.append((data, indices, worker))


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


def _same(a, b):
    if a is b:
        return True
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    try:
        return bool(torch.equal(cpu_view(a), cpu_view(b)))
    except Exception:
        return False


def _fetching():
    """(indices, current index or None) of a fetch running on this stack."""
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
                # Python 3.12+ runs the comprehension inside this frame.
                current = local.get("idx")
                return _flatten(local["possibly_batched_index"]), current if isinstance(current, int) else None
        frame = frame.f_back
    return None


def _rows(found, cap=16):
    """The first `cap` first-dimension rows that hold a bad value, found on
    the mask (over the collapsed tensor), never over the view's full size."""
    t = found.tensor
    mask = found.mask
    if t.dim() == 0 or mask.dim() == 0:
        return []
    if mask.size(0) == 1 and t.size(0) > 1:  # expanded along the batch dimension: every row
        return list(range(min(t.size(0), cap)))
    per_row = mask.any(dim=tuple(range(1, mask.dim()))) if mask.dim() > 1 else mask
    return per_row.nonzero()[:cap].flatten().tolist()


def find(found):
    """(samples, certain, worker) for a violation, or (None, False, None).
    `worker` is the DataLoader worker that raised it or loaded its batch."""
    worker = _worker_id()
    fetch = _fetching()
    if fetch is not None:
        indices, current = fetch
        if current is not None:
            return [{"dataset_index": current}], True, worker
        rows = _rows(found)
        if indices and found.tensor.dim() and found.tensor.size(0) == len(indices):
            return _mapped(rows, indices), False, worker
        return None, False, worker
    rows = _rows(found)
    for data, indices, batch_worker in reversed(_recent):
        for t in _tensors(data):
            if _same(found.tensor, t) and t.dim() and t.size(0) == len(indices):
                return _mapped(rows, indices), True, _first(worker, batch_worker)
    if _recent:
        data, indices, batch_worker = _recent[-1]
        if found.tensor.dim() and found.tensor.size(0) == len(indices):
            return _mapped(rows, indices), False, _first(worker, batch_worker)
    return None, False, worker


def _first(*values):
    return next((v for v in values if v is not None), None)


def _mapped(rows, indices):
    return [{"dataset_index": indices[r], "row": r} for r in rows[:16] if r < len(indices)]


def _worker_id():
    try:
        from torch.utils.data import get_worker_info

        info = get_worker_info()
    except Exception:
        return None
    return info.id if info is not None else None

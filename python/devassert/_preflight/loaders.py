"""Rows drawn from a torch DataLoader as it draws them (its sampler, the
dataset's __getitem__ / __getitems__, its collate_fn), in this process, up
to max_rows samples, each row tagged with its dataset index and batch.

Drawing leaves no trace: every random state it can advance is put back
after (torch's, Python's and numpy's global ones, and the generators the
loader, its sampler and its batch sampler hold), so the run's first epoch
draws what it would have drawn without preflight.

A batch is read by key when it is a mapping. A tuple or list batch
(``DataLoader(TensorDataset(ids, labels))``) is read by position: its first
integer tensor is ``input_ids``, and when there is more than one integer
tensor and labels have a bound (``num_classes``, or the model's head), the
last one is ``labels``; tensors between them are not read.
"""

import random

from .columns import Flat, as_numpy, flat_from_array, flat_from_lists, integer, is_array
from .steps import name as _name
from .steps import step as _step


def loader_columns(loader, max_rows, summary, labels=True):
    """Draw batches as the loader would (its sampler, its dataset, its
    collate_fn) up to max_rows samples, in this process, with every random
    state restored after. `labels`: whether a tuple batch's last integer
    tensor is read as labels (they have a bound)."""
    import numpy as np
    from torch.utils.data import IterableDataset

    parts = {}
    rows = 0
    saved = _RandomStates(loader)
    truncated = False
    try:
        for b, (indices, batch) in enumerate(_batches(loader, isinstance(loader.dataset, IterableDataset))):
            with _step(f"reading batch {b} ({_describe(batch)})"):
                got = _batch_columns(batch, labels)
            if b == 0:
                summary["_batch"] = _describe(batch)
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
        saved.restore()
    summary["rows"] = rows
    total = _length(loader.dataset)
    summary["rows_total"] = total
    if truncated and total != rows:
        summary["partial"] = f"the first {rows} samples drawn (max_rows={max_rows})"
    return {c: _concat(p) for c, p in parts.items()}


class _RandomStates:
    """The random states drawing batches can advance, saved to be put back."""

    def __init__(self, loader):
        import numpy as np
        import torch

        self.globals = (torch.random.get_rng_state(), random.getstate(), np.random.get_state())
        self.generators = [(g, _get_state(g)) for g in _generators(loader)]

    def restore(self):
        import numpy as np
        import torch

        torch.random.set_rng_state(self.globals[0])
        random.setstate(self.globals[1])
        np.random.set_state(self.globals[2])
        for g, state in self.generators:
            _set_state(g, state)


def _generators(loader):
    """The generators the loader, its sampler and its batch sampler hold
    (and a batch sampler's own sampler), each once."""
    import numpy as np
    import torch

    kinds = (torch.Generator, random.Random, np.random.Generator, np.random.RandomState)
    holders = [loader, getattr(loader, "sampler", None), getattr(loader, "batch_sampler", None)]
    holders.append(getattr(holders[2], "sampler", None))
    out, seen = [], set()
    for h in holders:
        if h is None:
            continue
        try:
            values = list(vars(h).values())
        except TypeError:
            continue
        for v in values:
            if isinstance(v, kinds) and id(v) not in seen:
                seen.add(id(v))
                out.append(v)
    return out


def _get_state(g):
    import numpy as np
    import torch

    if isinstance(g, torch.Generator):
        return g.get_state()
    if isinstance(g, np.random.Generator):
        return g.bit_generator.state
    if isinstance(g, np.random.RandomState):
        return g.get_state()
    return g.getstate()


def _set_state(g, state):
    import numpy as np
    import torch

    if isinstance(g, torch.Generator):
        g.set_state(state)
    elif isinstance(g, np.random.Generator):
        g.bit_generator.state = state
    elif isinstance(g, np.random.RandomState):
        g.set_state(state)
    else:
        g.setstate(state)


def _length(dataset):
    """len(dataset), None when it has none; a length that is not one (-1,
    10**20) named as the dataset's."""
    with _step(f"len() of the dataset ({_name(dataset)})"):
        try:
            return len(dataset)
        except TypeError as e:
            if "has no len" in str(e) or "object of type" in str(e):
                return None
            raise


def _batches(loader, iterable):
    """(sampler indices or None, collated batch) in the loader's order."""
    if iterable:
        it = iter(loader)
        b = 0
        while True:
            with _step(f"the DataLoader over {_name(loader.dataset)} drawing batch {b}"):
                try:
                    batch = next(it)
                except StopIteration:
                    return
            yield None, batch
            b += 1
    ds = loader.dataset
    _length(ds)  # the samplers take it: a bad one is named here, as the dataset's
    getitems = getattr(ds, "__getitems__", None)
    collate = loader.collate_fn
    if loader.batch_sampler is not None:
        sampler = loader.batch_sampler
        it = _draw(sampler)
        b = 0
        while True:
            with _step(f"the batch sampler ({_name(sampler)}) drawing batch {b}"):
                try:
                    idx = [int(i) for i in next(it)]
                except StopIteration:
                    return
            with _step(f"the dataset ({_name(ds)}) giving samples {_short(idx)} of batch {b}"):
                items = getitems(idx) if getitems is not None else [ds[i] for i in idx]
            with _step(f"collate_fn ({_name(collate)}) on batch {b}"):
                batch = collate(items)
            yield idx, batch
            b += 1
    else:  # batch_size=None: each sample is its own (uncollated) row
        sampler = loader.sampler
        it = _draw(sampler)
        while True:
            with _step(f"the sampler ({_name(sampler)}) drawing a sample"):
                try:
                    i = int(next(it))
                except StopIteration:
                    return
            with _step(f"the dataset ({_name(ds)}) giving sample {i}"):
                sample = ds[i]
            with _step(f"collate_fn ({_name(collate)}) on sample {i}"):
                batch = _as_batch_of_one(collate(sample))
            yield [i], batch


def _draw(sampler):
    with _step(f"iter() of the sampler ({_name(sampler)})"):
        return iter(sampler)


def _short(idx):
    return str(idx) if len(idx) <= 8 else f"[{', '.join(map(str, idx[:8]))}, ...]"


def _describe(batch):
    """What a batch is, in a few words (for the summary and messages)."""
    if hasattr(batch, "keys"):
        try:
            keys = list(batch.keys())
        except Exception:  # noqa: BLE001
            keys = []
        return f"{type(batch).__name__} with keys {keys[:12]}"
    if isinstance(batch, (list, tuple)):
        kinds = [_kind(v) for v in batch[:8]]
        return f"{type(batch).__name__} of {len(batch)}: [{', '.join(kinds)}{', ...' if len(batch) > 8 else ''}]"
    return _kind(batch)


def _kind(v):
    if is_array(v):
        device = getattr(v, "device", None)
        on = f" on {device}" if device is not None and str(device) != "cpu" else ""
        return f"{type(v).__name__} {getattr(v, 'dtype', '')} {list(getattr(v, 'shape', []))}{on}"
    return type(v).__name__


def _as_batch_of_one(sample):
    """An uncollated sample as a batch of one row."""
    if is_array(sample):
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


def _batch_columns(batch, labels=True):
    """The integer columns of a collated batch as Flats: a dict by key; a
    tuple or list by position (see the module's doc). Token columns are cut
    to the attention mask (padding is not data)."""
    out = {}
    if hasattr(batch, "keys"):
        items = [(str(k), batch[k]) for k in batch.keys()]
    elif isinstance(batch, (list, tuple)):
        items = _positional(batch, labels)
    elif is_array(batch):
        items = [("input_ids", batch)]
    else:
        return out
    mask = dict(items).get("attention_mask")
    for key, v in items:
        if isinstance(v, (list, tuple)):
            try:
                out[key] = flat_from_lists(v)
            except TypeError:
                pass  # not ids: text, floats
            continue
        if not is_array(v) or not integer(v):
            continue
        if key in ("input_ids", "token_type_ids") and mask is not None and is_array(mask) and tuple(mask.shape) == tuple(v.shape) and len(v.shape) == 2:
            out[key] = _masked(v, mask)
        else:
            out[key] = flat_from_array(v)
    return out


def _positional(batch, labels):
    """(column, tensor) of a tuple / list batch: the first integer tensor is
    input_ids, the last one labels (when there are two or more and labels
    have a bound)."""
    ints = [v for v in batch if is_array(v) and integer(v)]
    if not ints:
        # Rows of ids as Python lists (a collate that pads nothing).
        rows = all(isinstance(v, (list, tuple)) for v in batch) and batch
        return [("input_ids", list(batch))] if rows else []
    if labels and len(ints) > 1:
        return [("input_ids", ints[0]), ("labels", ints[-1])]
    return [("input_ids", ints[0])]


def _masked(v, mask):
    import numpy as np

    v, m = as_numpy(v), as_numpy(mask).astype(bool)
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

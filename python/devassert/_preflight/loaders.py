"""Rows drawn from a torch DataLoader as it draws them (its sampler, the
dataset's __getitem__ / __getitems__, its collate_fn), in this process, up
to max_rows samples, each row tagged with its dataset index and batch."""

import random

from .columns import Flat, as_numpy, flat_from_array, flat_from_lists, integer, is_array


def loader_columns(loader, max_rows, summary):
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


def _batch_columns(batch):
    """The integer columns of a collated batch as Flats: a dict by key; a
    (inputs, labels) tuple as `input_ids` and `labels`. Token columns are cut
    to the attention mask (padding is not data)."""
    out = {}
    if hasattr(batch, "keys"):
        items = [(str(k), batch[k]) for k in batch.keys()]
    elif isinstance(batch, (list, tuple)) and len(batch) == 2:
        items = [("input_ids", batch[0]), ("labels", batch[1])]
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

"""The samples a run skipped under ``guard(on_bad_batch="skip")``, and the
dataset without them for the resumed run.

The quarantine file holds one JSON line per skipped sample: ``dataset_index``
(None when the guard could not tell which sample the bad tensor came from),
``row``, ``split``, ``rank``, ``step``, ``op``, ``argument``, ``rule``,
``values``, ``bound``, ``location``, ``certain`` and ``message`` (the
finding's text). Indices are those of the dataset the DataLoader was given;
through `exclude`, those of the dataset it wraps, so one file serves every
resume.

    train = devassert.quarantine.exclude(train, "bad.jsonl")
"""

import json
import os

__all__ = ["read", "indices", "exclude", "Excluded", "ExcludingSampler"]


def read(path):
    """The records of the file at `path` (lines that are not JSON objects are
    skipped: the file is appended to by running jobs, and may end mid-line).
    A missing file holds none."""
    out = []
    try:
        fh = open(os.fspath(path), encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return out
    with fh:
        for line in fh:
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if isinstance(record, dict):
                out.append(record)
    return out


def indices(path):
    """The dataset indices the file names, sorted (records without one are left out)."""
    found = set()
    for record in read(path):
        i = record.get("dataset_index")
        if isinstance(i, int) and not isinstance(i, bool) and i >= 0:
            found.add(i)
    return sorted(found)


def exclude(dataset, path):
    """`dataset` without the samples the quarantine file at `path` names: a
    ``datasets.Dataset`` through ``.select`` (a new Dataset), a map-style
    dataset (``__getitem__`` and ``__len__``) as an `Excluded` view, and a
    sampler (anything with ``__iter__`` yielding indices, ``__len__``
    optional) as an `ExcludingSampler`. The user's dataset is not modified."""
    bad = set(indices(path))
    if _is_hf_dataset(dataset):
        return dataset.select([i for i in range(len(dataset)) if i not in bad])
    try:
        from torch.utils.data import Sampler
    except ImportError:
        Sampler = ()
    if isinstance(dataset, Sampler):
        return ExcludingSampler(dataset, bad)
    if hasattr(dataset, "__getitem__") and hasattr(dataset, "__len__"):
        return Excluded(dataset, bad)
    raise TypeError(
        f"devassert.quarantine.exclude: {type(dataset).__name__} is neither a map-style dataset (__getitem__ and __len__) "
        "nor a sampler; wrap the sampler of an iterable pipeline in ExcludingSampler instead"
    )


def _is_hf_dataset(dataset):
    return type(dataset).__module__.split(".")[0] == "datasets" and hasattr(dataset, "select")


class Excluded:
    """A map-style dataset without some of its indices (a torch ``Subset`` that
    also maps its own indices back: the guard names the wrapped dataset's
    index in the quarantine file, so a second resume excludes them too)."""

    def __init__(self, dataset, excluded):
        self.dataset = dataset
        self.excluded = frozenset(excluded)
        self.indices = [i for i in range(len(dataset)) if i not in self.excluded]

    def __len__(self):
        return len(self.indices)

    def __getitem__(self, i):
        if isinstance(i, list):
            return [self.dataset[self.indices[j]] for j in i]
        return self.dataset[self.indices[i]]

    def __getitems__(self, items):
        return [self.dataset[self.indices[j]] for j in items]

    def devassert_index(self, i):
        """The wrapped dataset's index of item `i` (read by the guard's sample finder)."""
        inner = self.indices[i]
        mapping = getattr(self.dataset, "devassert_index", None)
        return mapping(inner) if callable(mapping) else inner

    def __repr__(self):
        return f"Excluded({self.dataset!r}, {len(self.excluded)} samples left out)"


class ExcludingSampler:
    """A sampler (or any iterable of dataset indices) that never yields the
    excluded indices; indices stay those of the dataset."""

    def __init__(self, sampler, excluded):
        self.sampler = sampler
        self.excluded = frozenset(excluded)

    def __iter__(self):
        return (i for i in self.sampler if i not in self.excluded)

    def __len__(self):
        return sum(1 for i in self.sampler if i not in self.excluded)

    def set_epoch(self, epoch):
        # DistributedSampler's: each epoch's shuffle.
        setter = getattr(self.sampler, "set_epoch", None)
        if setter is not None:
            setter(epoch)

"""The split (train, eval, validation, ...) of the dataset a batch came from,
for the quarantine file's ``split`` and the finding's ``evidence.split``.

Known when a callback named the run's datasets (`name`: the transformers
Trainer's train and eval datasets, Lightning's train and val loaders), or when
the dataset says so itself (a ``datasets.Dataset`` loaded with a split);
looked for through wrappers that keep the dataset as ``.dataset`` (torch's
``Subset``, `devassert.quarantine.Excluded`, a DataLoader). None: not known.
"""

import weakref

_named = {}  # id(dataset) -> (a reference to it, split)
# Wrappers followed to the dataset they hold, at most.
_DEPTH = 4


def name(dataset, split):
    """`dataset` (or a DataLoader's) is the run's `split`, until `forget`."""
    dataset = getattr(dataset, "dataset", dataset) if _is_loader(dataset) else dataset
    try:
        ref = weakref.ref(dataset)
    except TypeError:
        ref = Strong(dataset)
    _named[id(dataset)] = (ref, split)


def forget():
    _named.clear()


def split_of(dataset):
    """The split of `dataset`, or None."""
    for _ in range(_DEPTH):
        if dataset is None:
            return None
        entry = _named.get(id(dataset))
        if entry is not None and entry[0]() is dataset:
            return entry[1]
        own = _own_split(dataset)
        if own is not None:
            return own
        dataset = getattr(dataset, "dataset", None)
    return None


def _own_split(dataset):
    # datasets.Dataset.split: a NamedSplit (a str subclass in recent
    # releases), or None when it was not loaded as one split.
    if type(dataset).__module__.split(".")[0] != "datasets":
        return None
    try:
        split = dataset.split
    except Exception:  # noqa: BLE001 - a property that fails: not known
        return None
    return str(split) if split is not None else None


def _is_loader(obj):
    return type(obj).__name__.endswith("DataLoader") or hasattr(obj, "batch_sampler")


class Strong:
    """A strong reference called like a `weakref.ref`, for an object that
    takes no weak reference (samples.py keeps tensors this way too)."""

    __slots__ = ("obj",)

    def __init__(self, obj):
        self.obj = obj

    def __call__(self):
        return self.obj

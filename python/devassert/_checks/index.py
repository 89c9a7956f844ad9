"""Index ops: gather / scatter, index_select / index_add / index_copy /
index_fill, take / put / take_along_dim, x[idx] / x[idx] = v / index_put."""

import sys

import torch

from . import measure as _measure
from .violation import (
    Found,
    arg,
    as_int,
    deferred,
    dim_size,
    index_replace,
    int_tensor,
    is_tensor,
    outside,
    precheck,
    range_mask,
    with_valid,
)


def _bounded(op, rule, argument, idx, low, high, fix, replace, pre, strict, cpu_checks=True):
    """The common path: `idx` must lie in [low, high)."""
    if not precheck(idx, pre, strict, cpu_checks):
        return None
    if pre and not outside(idx, low, high):
        return None
    mask = range_mask(idx, low, high)
    if mask is None:
        return None

    def explain(desc, frames):
        # The indices of any dimension: the engine's `index` causes, decided
        # by the measured facts as explain decides a log's stated ones. Not
        # the rule's `values`: DA101's are nn.Embedding's token ids, but the
        # guard sees the op, and torch.index_select indexes any tensor.
        causes, fixes = _measure.decide("index", _measure.index_facts(idx, None, desc, low, high, "index", frames))
        if low == 0:
            # Position ids gathered from a buffer (RoBERTa's token types,
            # cached rotary tables): the engine's position causes lead.
            decided, _ = _measure.decide("ids", _measure.index_facts(idx, None, desc, low, high, "ids", frames))
            lead = [c for c in decided if c["id"] in _POSITION_CAUSES]
            if lead:
                ids = {c["id"] for c in lead}
                causes = lead + [c for c in causes if c["id"] not in ids]
                first = [x for c in lead for x in c["fixes"]]
                fixes = first + [x for x in fixes if x not in first]
        return causes, [*fixes, fix]

    return Found(op, argument, idx, mask, rule, {"low": low, "high": high}, explain, replace)


# The causes of an index op that the facts of its indices can show.
_POSITION_CAUSES = ("seq_len_gt_max_positions", "off_by_one")


def dim_index(op, rule, negatives_legal):
    """op(input, dim, index, ...): index must lie in the dimension `dim`."""

    def find(args, kwargs, pre, strict):
        x = arg(args, kwargs, 0, "input")
        idx = arg(args, kwargs, 2, "index")
        dim = as_int(arg(args, kwargs, 1, "dim"), None)
        if not is_tensor(x) or not int_tensor(idx) or dim is None:
            return None
        size = dim_size(x, dim)
        low = -size if negatives_legal else 0
        fix = f"check `index.min() >= {low} and index.max() < input.size({dim})` ({size}) before {op}"
        return _bounded(op, rule, "index", idx, low, size, fix, index_replace(2, "index", low, size), pre, strict)

    return find


def flat_index(op, argument="index", along_dim=False):
    """take / put / take_along_dim: flat (or, `along_dim`, per-dim) indices in [-n, n)."""

    def find(args, kwargs, pre, strict):
        x = arg(args, kwargs, 0, "input")
        idx = arg(args, kwargs, 1, argument)
        if not is_tensor(x) or not int_tensor(idx):
            return None
        dim = as_int(arg(args, kwargs, 2, "dim"), None) if along_dim else None
        n = x.numel() if dim is None else dim_size(x, dim)
        if along_dim:
            fix = f"indices must lie in [-{n}, {n}); PyTorch's CPU kernel wraps them silently, its CUDA kernel fails gather's device assert"
        else:
            fix = f"flat indices must lie in [-{n}, {n}) (the tensor's numel)"
        # take_along_dim's CPU kernel wraps instead of raising: checked before the op.
        return _bounded(op, "DA112", argument, idx, -n, n, fix, index_replace(1, argument, -n, n), pre, strict, cpu_checks=not along_dim)

    return find


# --- advanced indexing ----------------------------------------------------------


def _is_array(k):
    np = sys.modules.get("numpy")  # no array exists unless numpy was imported
    return np is not None and isinstance(k, np.ndarray)


def _as_index(k):
    """A key item as torch reads it: a list or numpy array becomes the tensor
    torch makes of it (of bools: a mask over as many dimensions as it has)."""
    if isinstance(k, list) or _is_array(k):
        try:
            return torch.as_tensor(k)
        except Exception:  # noqa: BLE001 - ragged or mixed: torch decides
            return k
    return k


def _consumes(k):
    """Dimensions an item of an indexing key consumes."""
    if k is None or k is Ellipsis or isinstance(k, bool):
        return 0
    if isinstance(k, torch.Tensor) and k.dtype in (torch.bool, torch.uint8):
        return k.dim()  # a 0-d bool tensor adds a dimension, like True
    return 1


def key_tensors(x, items):
    """(position in key, index tensor, dimension size, dimension) for each
    integer tensor in an indexing key, following how x[key] assigns key items
    to dimensions."""
    given = items
    items = [_as_index(k) for k in items]
    out = []
    d = 0
    ndim = x.dim()
    for i, k in enumerate(items):
        if k is Ellipsis:
            # torch sizes the Ellipsis by the items after it as given: a mask
            # given as a list or array counts as one dimension there.
            d = ndim - sum(_consumes(j) for j in given[i + 1 :])
            continue
        if int_tensor(k) and k.dtype is not torch.uint8 and d < ndim:
            out.append((i, k, x.size(d), d))
        d += _consumes(k)
    return out


def _advanced(op, x, entries, rebuild, pre, strict):
    """The first integer index tensor outside its dimension."""
    for pos, idx, size, d in entries:
        fix = f"indices for dimension {d} must lie in [-{size}, {size}); check how they were computed (torch.where / argmax / a mask that yields -1 or one past the end)"

        def replace(args, kwargs, found, pos=pos, size=size):
            if size == 0:
                return None
            return rebuild(args, kwargs, pos, with_valid(found.tensor, found.mask, 0))

        argument = f"index (dimension {d})"
        if deferred(argument):
            continue
        found = _bounded(op, "DA111", argument, idx, -size, size, fix, replace, pre, strict)
        if found is not None:
            return found
    return None


def _key_items(key):
    """The items of an indexing key. Like torch (after numpy), a list shorter
    than 32 that holds a tensor, sequence, slice, None or Ellipsis is read as
    a tuple of items; any other list is one item."""
    if isinstance(key, tuple):
        return key
    if isinstance(key, list) and len(key) < 32 and any(_splits(k) for k in key):
        return key
    return (key,)


def _splits(k):
    return k is None or k is Ellipsis or isinstance(k, (torch.Tensor, list, tuple, slice)) or _is_array(k)


def _rebuild_key(args, kwargs, pos, value):
    key = args[1]
    items = _key_items(key)
    if items is not key:  # a key of one item
        return (args[0], value, *args[2:]), kwargs
    items = list(items)
    items[pos] = value
    return (args[0], tuple(items) if isinstance(key, tuple) else items, *args[2:]), kwargs


def subscript(op):
    """Tensor.__getitem__ / __setitem__ with integer tensors (or int lists) in the key."""

    def find(args, kwargs, pre, strict):
        x, key = args[0], args[1]
        if not is_tensor(x):
            return None
        items = _key_items(key)
        if not any(isinstance(k, (torch.Tensor, list)) or _is_array(k) for k in items):
            return None
        return _advanced(op, x, key_tensors(x, items), _rebuild_key, pre, strict)

    return find


def _rebuild_indices(args, kwargs, pos, value):
    indices = list(arg(args, kwargs, 1, "indices"))
    indices[pos] = value
    if len(args) > 1:
        return (args[0], tuple(indices), *args[2:]), kwargs
    return args, dict(kwargs, indices=tuple(indices))


def index_put(op):
    def find(args, kwargs, pre, strict):
        x = arg(args, kwargs, 0, "input")
        indices = arg(args, kwargs, 1, "indices")
        if not is_tensor(x) or not isinstance(indices, (tuple, list)):
            return None
        entries = []
        d = 0
        for i, k in enumerate(indices):
            if is_tensor(k) and k.dtype in (torch.bool, torch.uint8):
                d += k.dim()
                continue
            if int_tensor(k) and d < x.dim():
                entries.append((i, k, x.size(d), d))
            d += 1
        return _advanced(op, x, entries, _rebuild_indices, pre, strict)

    return find

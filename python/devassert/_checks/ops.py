"""The guarded entry points: which callable, on which object, runs which check."""

import torch

from . import embedding as _check_embedding
from . import index as _check_index
from . import loss as _check_loss
from . import values as _check_values


class Check:
    """One op's check. `find(args, kwargs, pre, strict)` returns a Found or
    None; `pre` is True before the op runs (cheap: CPU tensors are left to the
    op), False after the op raised (look at the values whatever the device)."""

    __slots__ = ("find", "strict_only", "cpu_checks", "deferrable", "multi")

    def __init__(self, find, strict_only=False, cpu_checks=True, deferrable=False, multi=False):
        self.find = find
        self.strict_only = strict_only
        # False when the CPU kernel does not check these values itself.
        self.cpu_checks = cpu_checks
        # True when the check is a range test (`outside` / `range_mask`) whose
        # Found can `replace` the bad values: the async path can run it with
        # no host sync (see deferred.py). `multi`: several arguments may be
        # checked (the index tensors of one indexing key).
        self.deferrable = deferrable
        self.multi = multi

    def before(self, args, kwargs, strict):
        return self.find(args, kwargs, True, strict)

    def after(self, args, kwargs, strict):
        return self.find(args, kwargs, False, strict)


_entries = None


def entry_points():
    """[(owner, attribute, Check)] for every guarded entry point (made once)."""
    global _entries
    if _entries is None:
        _entries = _make_entries()
    return _entries


def _make_entries():
    nn = torch._C._nn
    F = torch.nn.functional
    T = torch.Tensor
    out = []

    def add(owners, names, find, strict_only=False, cpu_checks=True, deferrable=True, multi=False):
        check = Check(find, strict_only, cpu_checks, deferrable, multi)
        for owner in owners:
            for name in names:
                if hasattr(owner, name):
                    out.append((owner, name, check))

    both = (torch, T)
    add((torch,), ("embedding",), _check_embedding.embedding)
    # The CPU kernel checks ids, and offsets only in part (_check_embedding._offsets).
    add((torch,), ("embedding_bag",), _check_embedding.embedding_bag, cpu_checks=False, deferrable=False)
    add((nn,), ("cross_entropy_loss",), _check_loss.nll("cross_entropy", 4))
    add((nn,), ("nll_loss_nd", "nll_loss", "nll_loss2d"), _check_loss.nll("nll_loss", 4))
    add((nn,), ("binary_cross_entropy",), _check_loss.bce, deferrable=False)
    add((torch,), ("ctc_loss",), _check_loss.ctc, cpu_checks=False, deferrable=False)
    add((nn,), ("multi_margin_loss",), _check_loss.multi_margin)
    add((nn, F), ("one_hot",), _check_values.one_hot)
    add(both, ("multinomial",), _check_values.multinomial, deferrable=False)
    add(both, ("bincount",), _check_values.bincount)
    add(both, ("bernoulli",), _check_values.bernoulli, deferrable=False)
    add((T,), ("bernoulli_",), _check_values.bernoulli_, deferrable=False)
    add((torch,), ("poisson",), _check_values.poisson, deferrable=False)
    add(both, ("repeat_interleave",), _check_values.repeat_interleave)
    add(both, ("take",), _check_index.flat_index("take"))
    add(both, ("put", "put_"), _check_index.flat_index("put_"))
    # The CPU kernel wraps an index past the dimension (a wrong value, no
    # error); CUDA's fails gather's device assert: checked before the op everywhere.
    add(both, ("take_along_dim",), _check_index.flat_index("take_along_dim", "indices", along_dim=True), cpu_checks=False)
    add((T,), ("__getitem__",), _check_index.subscript("Tensor.__getitem__"), multi=True)
    add((T,), ("__setitem__",), _check_index.subscript("Tensor.__setitem__"), multi=True)
    add(both, ("index_put", "index_put_"), _check_index.index_put("index_put"), multi=True)
    for name in ("gather", "scatter", "scatter_", "scatter_add", "scatter_add_", "scatter_reduce", "scatter_reduce_"):
        add(both, (name,), _check_index.dim_index(name, "DA121", False))
    add(both, ("index_select",), _check_index.dim_index("index_select", "DA101", False))
    for name in ("index_add", "index_add_", "index_reduce", "index_reduce_"):
        add(both, (name,), _check_index.dim_index(name, "DA113", False))
    for name in ("index_copy", "index_copy_"):
        add(both, (name,), _check_index.dim_index(name, "DA114", False))
    for name in ("index_fill", "index_fill_"):
        add(both, (name,), _check_index.dim_index(name, "DA115", True))
    return out

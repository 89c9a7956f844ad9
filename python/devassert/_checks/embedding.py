"""Embedding lookups: torch.embedding (F.embedding, nn.Embedding) and
torch.embedding_bag (F.embedding_bag, nn.EmbeddingBag)."""

import torch

from . import measure as _measure
from . import violation as _violation
from .violation import Found, arg, cause, index_replace, int_tensor, int_values, is_tensor, outside, precheck, range_mask


def _fixes(fixes, n):
    """The decided causes' fixes, then the check that finds the rest."""
    return list(fixes) + [f"check `ids.min() >= 0 and ids.max() < {n}` on the batch; devassert scan DATA --vocab {n}"]


def _lookup(op, rule, argument, ids, weight, replace, pre, strict):
    if not int_tensor(ids) or not is_tensor(weight) or weight.dim() == 0:
        return None
    if not precheck(ids, pre, strict):
        return None
    n = weight.size(0)
    if pre and not outside(ids, 0, n):
        return None
    mask = range_mask(ids, 0, n)
    if mask is None:
        return None

    def explain(desc, frames):
        causes, fixes = _measure.decide_rule(rule, ids, mask, desc, 0, n, frames)
        return causes, _fixes(fixes, n)

    return Found(op, argument, ids, mask, rule, {"low": 0, "high": n}, explain, replace)


def embedding(args, kwargs, pre, strict):
    """torch.embedding(weight, indices, ...), which F.embedding calls."""
    weight = arg(args, kwargs, 0, "weight")
    ids = arg(args, kwargs, 1, "indices")
    n = weight.size(0) if is_tensor(weight) and weight.dim() else 0
    return _lookup("embedding", "DA101", "input", ids, weight, index_replace(1, "indices", 0, n), pre, strict)


def embedding_bag(args, kwargs, pre, strict):
    """torch.embedding_bag(weight, indices, offsets, scale_grad_by_freq, mode,
    sparse, per_sample_weights, include_last_offset, padding_idx)."""
    weight = arg(args, kwargs, 0, "weight")
    ids = arg(args, kwargs, 1, "indices")
    n = weight.size(0) if is_tensor(weight) and weight.dim() else 0
    found = _lookup("embedding_bag", "DA102", "input", ids, weight, index_replace(1, "indices", 0, n), pre, strict)
    if found is not None:
        return found
    return _offsets(args, kwargs, ids, pre, strict)


def _offsets(args, kwargs, ids, pre, strict):
    offsets = arg(args, kwargs, 2, "offsets")
    if not int_tensor(offsets) or not int_tensor(ids) or ids.dim() != 1 or offsets.dim() != 1:
        return None
    # A CPU kernel gets these offsets next: it rejects a first offset other
    # than 0 and a last one past the ids itself, but not a bag that ends
    # before it begins, so those are checked before it runs, whatever the level.
    cpu_runs = pre and offsets.is_cpu and not _violation.PRECHECK_CPU
    if not precheck(offsets, pre, strict, cpu_checks=not cpu_runs):
        return None
    include_last = bool(arg(args, kwargs, 7, "include_last_offset", False))
    count = ids.numel()
    o = offsets.detach()
    undefined = _cpu_undefined(o, count) if cpu_runs else None
    if undefined is not None:
        mask, cuda = undefined, False
    elif cpu_runs and not strict:
        return None
    else:
        # Before an accelerator launch (or strict): what the CUDA kernel
        # asserts on. After the CPU op raised: what the CPU op rejects.
        cuda = pre
        mask = _cuda_breaks(o, count, include_last) if cuda else _cpu_breaks(o, count)
    if mask is None:
        return None
    if not cpu_runs:
        # Whether the CPU op, run on copies for torch's own error, would be undefined.
        undefined = _cpu_undefined(o, count)
    if cuda:
        contract, asserts = _cuda_contract(count, include_last), True
    else:
        asserts = _cuda_breaks(o, count, include_last) is not None
        on_cuda = _cuda_contract(count, include_last) if asserts else "they pass (offsets[0] is read as 0, the last bag ends at len(input))"
        contract = f"{_cpu_contract(count, undefined is not None)}; on CUDA {on_cuda}"

    def explain(desc, frames):
        past = any(isinstance(v, int) and v > count for v in int_values(desc))
        why = "offsets run past the ids, " if past else "offsets do not start at 0 or decrease, "
        causes = [cause("index_ge_dim_size" if past else "unknown", 0.6, why + "built from unsorted or negative lengths, or taken from another batch than input")]
        return causes, ["build offsets as a cumulative sum of bag lengths starting at 0: offsets = torch.cat([lengths.new_zeros(1), lengths.cumsum(0)[:-1]])"]

    # No single valid replacement exists for offsets: the CPU error stands.
    bound = {"low": 0, "high": count, "high_inclusive": True}
    return Found("embedding_bag", "offsets", offsets, mask, "DA103", bound, explain, None, contract=contract, device_assert=asserts, cpu_undefined=undefined is not None)


def _decreases(o):
    """The mask of o[1:] elements smaller than the one before them."""
    return o[1:] < o[:-1]


def _cuda_breaks(o, count, include_last):
    """The offsets the CUDA kernel asserts on, or None. Bag b runs from
    offsets[b] (0 for the first bag: offsets[0] is never read) to offsets[b+1]
    (`count` for the last bag: with include_last_offset the last offset is
    never read) and the kernel asserts `end >= begin`."""
    bags = o.numel() - int(include_last)
    if bags < 2:
        return None
    read = torch.cat([o.new_zeros(1), o[1:bags], o.new_full((1,), count)])
    bad = _decreases(read)  # bad[b]: bag b ends before it begins
    if not bool(bad.any()):
        return None
    mask = torch.zeros_like(o, dtype=torch.bool)
    mask[1:bags] = bad[:-1]  # the end of a bag that is not the last
    mask[bags - 1] |= bad[-1]  # the begin of the last bag (it ends at `count`)
    return mask


def _cpu_breaks(o, count):
    """The offsets the CPU op rejects, or None: offsets[0] == 0,
    non-decreasing, offsets[-1] <= count."""
    if o.numel() == 0:
        return None
    mask = torch.zeros_like(o, dtype=torch.bool)
    mask[0] = o[0] != 0
    mask[1:] = _decreases(o)
    mask[-1] |= o[-1] > count
    return mask if bool(mask.any()) else None


def _cuda_contract(count, include_last):
    ends = "; include_last_offset: the last offset is not read" if include_last else ""
    return (
        f"bag b runs from offsets[b] to offsets[b+1] (offsets[0] is read as 0, the last bag ends at len(input) = {count}{ends}) "
        f"and the CUDA kernel asserts `end >= begin` for each: the offsets it reads must be non-decreasing, within [0, {count}]"
    )


def _cpu_undefined(o, count):
    """The offsets on which the CPU op's result is undefined, or None: it
    checks offsets[0] == 0 and offsets[-1] <= len(input) first, but a bag that
    ends before it begins is read out of bounds, with an outcome that varies
    with the thread count and memory contents (garbage sums, or one of several
    errors)."""
    if o.numel() < 2:
        return None
    down = _decreases(o)
    if not bool(down.any()) or bool(o[0] != 0) or bool(o[-1] > count):
        return None
    mask = torch.zeros_like(o, dtype=torch.bool)
    mask[1:] = down
    return mask


def _cpu_contract(count, undefined=False):
    checked = (
        "the CPU op checks the first and the last itself; on a decrease its result is undefined (garbage, or an error that depends on the thread count), so the guard stops it"
        if undefined
        else "checked by the CPU op"
    )
    return f"offsets[0] == 0, non-decreasing, offsets[-1] <= len(input) = {count} ({checked})"

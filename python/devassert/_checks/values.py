"""Value checks that are not indices into a dimension: multinomial, bernoulli
and poisson parameters, one_hot classes, bincount inputs, repeat counts."""

import torch

from .violation import (
    Found,
    arg,
    as_int,
    cause,
    collapse,
    extrema,
    index_replace,
    int_tensor,
    int_values,
    is_tensor,
    outside,
    precheck,
    range_mask,
    replaced,
    valid_replace,
)

_MULTINOMIAL_FIX = "find where the logits become NaN/inf (fp16 overflow, temperature 0, all -inf after masking); sample from torch.softmax(logits.float() / max(t, 1e-5), -1)"


def multinomial(args, kwargs, pre, strict):
    p = arg(args, kwargs, 0, "input")
    if not is_tensor(p) or not p.is_floating_point() or p.numel() == 0 or p.dim() == 0:
        return None
    if not precheck(p, pre, strict):
        return None
    lo, hi = extrema(p)
    if not (lo == lo and hi == hi and lo >= 0 and hi != float("inf")):
        d = collapse(p)
        mask = ~(torch.isfinite(d) & (d >= 0))

        def explain(desc, frames):
            causes = []
            if any(v in ("nan", "inf", "-inf") for v in desc["values"]):
                causes.append(cause("nan_inf_probs", 0.85, "probabilities hold NaN/inf: overflowing logits, a temperature of 0, or a softmax over all -inf"))
            if any(not isinstance(v, str) and v < 0 for v in desc["values"]):
                causes.append(cause("unknown", 0.5, "negative probabilities: logits passed where probabilities are expected (apply softmax first)"))
            return causes, [_MULTINOMIAL_FIX]

        return Found("multinomial", "input", p, mask, "DA301", {"low": 0.0, "high": "inf"}, explain, valid_replace(0, "input", 1.0))
    sums = p.detach().sum(dim=-1)
    if float(sums.min()) > 0:
        return None
    mask = sums <= 0

    def explain(desc, frames):
        desc["locations"] = [dict(loc, row=loc["index"]) for loc in desc["locations"]]
        causes = [cause("nan_inf_probs", 0.6, "a row of probabilities sums to 0: every token was filtered out (top-k/top-p/min-p, bad-word masks) or underflowed to 0")]
        return causes, [_MULTINOMIAL_FIX]

    def replace(args, kwargs, found):
        rows = mask.unsqueeze(-1) if p.dim() > 1 else mask
        return replaced(args, kwargs, 0, "input", torch.where(rows, torch.ones_like(p.detach()), p.detach()))

    return Found("multinomial", "input (row sums)", sums, mask, "DA302", {"low": 0.0, "high": None}, explain, replace)


def _unit_interval(p):
    d = collapse(p)
    mask = ~((d >= 0) & (d <= 1))
    return mask if bool(mask.any()) else None


def bernoulli(args, kwargs, pre, strict):
    """torch.bernoulli(input) / Tensor.bernoulli(): `input` holds the
    probabilities. torch.bernoulli(input, p): `input` only gives the shape; a
    tensor `p` holds them (a float p is checked by torch on the host)."""
    if len(args) > 1 or "p" in kwargs:
        return _probabilities(arg(args, kwargs, 1, "p"), 1, "p", pre, strict)
    return _probabilities(arg(args, kwargs, 0, "input"), 0, "input", pre, strict)


def bernoulli_(args, kwargs, pre, strict):
    """Tensor.bernoulli_(p=0.5): `self` is only overwritten; a tensor `p`
    holds the probabilities."""
    return _probabilities(arg(args, kwargs, 1, "p"), 1, "p", pre, strict)


def _probabilities(p, pos, name, pre, strict):
    """bernoulli's probabilities `p` (argument `pos` / `name`) must lie in [0, 1]."""
    if not is_tensor(p) or not p.is_floating_point() or p.numel() == 0:
        return None
    if not precheck(p, pre, strict):
        return None
    if pre:
        lo, hi = extrema(p)
        if lo == lo and hi == hi and lo >= 0 and hi <= 1:
            return None
    mask = _unit_interval(p)
    if mask is None:
        return None

    def explain(desc, frames):
        cid = "nan_in_input" if "nan" in desc["values"] else "unknown"
        causes = [cause(cid, 0.6, "probabilities outside [0, 1]: logits passed where probabilities are expected, or NaN from an earlier step")]
        return causes, ["pass probabilities (torch.sigmoid(logits)) in [0, 1]"]

    return Found("bernoulli", "p", p, mask, "DA303", {"low": 0.0, "high": 1.0, "high_inclusive": True}, explain, valid_replace(pos, name, 0.5))


def poisson(args, kwargs, pre, strict):
    rate = arg(args, kwargs, 0, "input")
    if not is_tensor(rate) or not rate.is_floating_point() or rate.numel() == 0:
        return None
    if not precheck(rate, pre, strict):
        return None
    if pre:
        lo, hi = extrema(rate)
        if lo == lo and hi == hi and lo >= 0:
            return None
    d = collapse(rate)
    mask = ~(d >= 0)
    if not bool(mask.any()):
        return None

    def explain(desc, frames):
        cid = "nan_in_input" if "nan" in desc["values"] else "unknown"
        return [cause(cid, 0.6, "negative or NaN rates reach torch.poisson")], ["pass non-negative rates (e.g. softplus or exp of the prediction)"]

    return Found("poisson", "input", rate, mask, "DA304", {"low": 0.0, "high": None}, explain, valid_replace(0, "input", 1.0))


def one_hot(args, kwargs, pre, strict):
    t = arg(args, kwargs, 0, "tensor", kwargs.get("input"))
    n = as_int(arg(args, kwargs, 1, "num_classes", -1), None)
    if not int_tensor(t) or n is None:
        return None
    if not precheck(t, pre, strict):
        return None
    high = n if n > 0 else None
    if pre and not outside(t, 0, high):
        return None
    mask = range_mask(t, 0, high)
    if mask is None:
        return None

    def explain(desc, frames):
        vals = int_values(desc)
        causes = []
        if any(v < 0 for v in vals):
            causes.append(cause("negative_label", 0.75, f"negative values ({min(vals)}) passed to one_hot: ignore/padding labels (-1, -100) not removed first"))
        if n > 0 and any(v >= n for v in vals):
            causes.append(cause("label_ge_num_classes", 0.75, f"values up to {max(vals)} for num_classes={n}"))
        fixes = [f"pass values in [0, num_classes); mask ignore labels first: F.one_hot(t.clamp_min(0), {n if n > 0 else 'C'}) * (t >= 0).unsqueeze(-1)"]
        return causes, fixes


    return Found("one_hot", "tensor", t, mask, "DA122", {"low": 0, "high": high}, explain, index_replace(0, "tensor", 0, n if n >= 0 else None))


def bincount(args, kwargs, pre, strict):
    t = arg(args, kwargs, 0, "input")
    if not int_tensor(t) or t.dim() != 1:
        return None
    if not precheck(t, pre, strict):
        return None
    if pre and not outside(t, 0, None):
        return None
    mask = range_mask(t, 0, None)
    if mask is None:
        return None

    def explain(desc, frames):
        causes = [cause("negative_index", 0.7, "negative values passed to bincount: ignore/padding labels (-1, -100) counted as classes")]
        return causes, ["drop negative values first: torch.bincount(t[t >= 0], minlength=C)"]

    return Found("bincount", "input", t, mask, "DA123", {"low": 0, "high": None}, explain, valid_replace(0, "input", 0))


def repeat_interleave(args, kwargs, pre, strict):
    first = arg(args, kwargs, 0, "input")
    repeats = arg(args, kwargs, 1, "repeats")
    pos, name = 1, "repeats"
    if repeats is None and int_tensor(first):
        repeats, pos, name = first, 0, "input"  # torch.repeat_interleave(repeats)
    if not int_tensor(repeats):
        return None
    if not precheck(repeats, pre, strict):
        return None
    if pre and not outside(repeats, 0, None):
        return None
    mask = range_mask(repeats, 0, None)
    if mask is None:
        return None

    def explain(desc, frames):
        # Only negative counts are bad (any count >= 0 is valid): DA501's cause.
        low = min(int_values(desc), default=None)
        causes = [cause("negative_index", 0.75, f"negative repeat counts (down to {low}): lengths computed by subtraction that went negative, or -1 markers")]
        return causes, ["repeat counts must be >= 0 (clamp_min(0) or fix how they are computed)"]

    return Found("repeat_interleave", "repeats", repeats, mask, "DA501", {"low": 0, "high": None}, explain, valid_replace(pos, name, 0))

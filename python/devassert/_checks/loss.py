"""Losses: cross_entropy / nll_loss (1d and spatial), binary_cross_entropy,
ctc_loss, multi_margin_loss. The C ops that F.* call are the entry points."""

import torch

from . import measure as _measure
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
    valid_replace,
)

_IGNORE_LIKE = (255, -1, -100)


def _scan_hint(c, ignore_like):
    text = f"devassert scan LABELS --classes {c}"
    if ignore_like:
        text += f" --ignore {ignore_like}"
    return text


def nll(op, ignore_pos):
    """cross_entropy_loss(input, target, weight, reduction, ignore_index, ...),
    nll_loss_nd / nll_loss / nll_loss2d(input, target, weight, reduction, ignore_index)."""

    def find(args, kwargs, pre, strict):
        x = arg(args, kwargs, 0, "input")
        target = arg(args, kwargs, 1, "target")
        if not is_tensor(x) or not int_tensor(target) or x.dim() == 0:
            return None
        if not precheck(target, pre, strict):
            return None
        ignore = as_int(arg(args, kwargs, ignore_pos, "ignore_index", -100), -100)
        c = x.size(1) if x.dim() >= 2 else x.size(0)
        if pre and not outside(target, 0, c):
            return None
        mask = range_mask(target, 0, c, allowed=ignore)
        if mask is None:
            return None
        spatial = x.dim() >= 3
        rule = "DA202" if spatial else "DA201"

        def explain(desc, frames):
            causes, fixes = _measure.decide_rule(rule, target, mask, desc, 0, c, frames, ignore=ignore)
            what = "masks" if spatial else "labels"
            marker = next((v for v in (255, -1, -100) if v in int_values(desc) and v != ignore), None)
            fixes.append(f"check the {what} before training: {_scan_hint(c, marker)}")
            return causes, fixes

        return Found(op, "target", target, mask, rule, {"low": 0, "high": c}, explain, index_replace(1, "target", 0, c))

    return find


def _unit_mask(t, pre):
    """Mask of values outside [0, 1] or NaN, or None."""
    if t.numel() == 0:
        return None
    if pre:
        lo, hi = extrema(t)
        if lo == lo and hi == hi and lo >= 0 and hi <= 1:
            return None
    d = collapse(t)
    mask = ~((d >= 0) & (d <= 1))
    return mask if bool(mask.any()) else None


_UNIT = {"low": 0.0, "high": 1.0, "high_inclusive": True}


def bce(args, kwargs, pre, strict):
    """binary_cross_entropy(input, target, weight, reduction)."""
    x = arg(args, kwargs, 0, "input")
    target = arg(args, kwargs, 1, "target")
    if is_tensor(x) and x.is_floating_point() and precheck(x, pre, strict):
        mask = _unit_mask(x, pre)
        if mask is not None:

            def explain(desc, frames):
                causes = []
                if any(v == "nan" for v in desc["values"]):
                    causes.append(cause("nan_in_input", 0.8, "the input holds NaN: the forward pass diverged (learning rate, fp16 overflow, log of 0) before the loss"))
                if any(not isinstance(v, str) or v in ("inf", "-inf") for v in desc["values"]):
                    causes.append(cause("bce_on_logits", 0.85, "inputs outside [0, 1]: raw logits were passed to binary_cross_entropy / BCELoss, which expects probabilities"))
                return causes, ["use F.binary_cross_entropy_with_logits / nn.BCEWithLogitsLoss on the logits (numerically stable), or apply torch.sigmoid first"]

            return Found("binary_cross_entropy", "input", x, mask, "DA203", _UNIT, explain, valid_replace(0, "input", 0.5))
    if is_tensor(target) and target.is_floating_point() and precheck(target, pre, strict):
        mask = _unit_mask(target, pre)
        if mask is not None:

            def explain(desc, frames):
                causes = [cause("bce_target_range", 0.8, "targets outside [0, 1]: class ids or 0/255 masks used as binary targets")]
                if any(v == "nan" for v in desc["values"]):
                    causes.append(cause("nan_in_input", 0.6, "the targets hold NaN"))
                return causes, ["scale or binarise the targets to [0, 1] (e.g. mask / 255, or (labels == k).float())"]

            return Found("binary_cross_entropy", "target", target, mask, "DA204", _UNIT, explain, valid_replace(1, "target", 0.5))
    return None


def _as_int_tensor(x):
    if int_tensor(x):
        return x
    if isinstance(x, (list, tuple)) and all(isinstance(v, int) for v in x):
        return torch.tensor(list(x), dtype=torch.long)
    return None


_CTC_FIX = "targets must be class ids in [0, C) other than blank, and each length within its tensor; reserve the blank index (usually 0) in the label map"


def _length(argument, lengths, limit, what, pre, strict):
    """A CTC length tensor must lie in [0, limit]."""
    if not lengths.numel() or not precheck(lengths, pre, strict):
        return None
    mask = range_mask(lengths, 0, limit + 1)
    if mask is None:
        return None

    def explain(desc, frames):
        return [cause("index_ge_dim_size", 0.6, f"{argument} outside [0, {limit}] ({what})")], [_CTC_FIX]

    return Found("ctc_loss", argument, lengths, mask, "DA205", {"low": 0, "high": limit, "high_inclusive": True}, explain, None)


def ctc(args, kwargs, pre, strict):
    """torch.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank, ...).
    The CPU kernel checks the lengths but not the targets' values."""
    log_probs = arg(args, kwargs, 0, "log_probs")
    targets = arg(args, kwargs, 1, "targets")
    input_lengths = _as_int_tensor(arg(args, kwargs, 2, "input_lengths"))
    target_lengths = _as_int_tensor(arg(args, kwargs, 3, "target_lengths"))
    blank = as_int(arg(args, kwargs, 4, "blank", 0), 0)
    if not is_tensor(log_probs) or not int_tensor(targets) or log_probs.dim() < 2 or input_lengths is None or target_lengths is None:
        return None
    c = log_probs.size(-1)
    t_max = log_probs.size(0)
    found = _length("input_lengths", input_lengths, t_max, "the time steps of log_probs", pre, strict)
    if found is not None:
        return found
    t = targets.detach()
    if t.dim() == 2:
        found = _length("target_lengths", target_lengths, t.size(1), "the width of the padded targets", pre, strict)
        if found is not None:
            return found
    if t.numel() == 0 or not precheck(t, pre, strict, cpu_checks=False):
        return None
    if t.dim() == 2:
        used = torch.arange(t.size(1), device=t.device).unsqueeze(0) < target_lengths.to(t.device).reshape(-1, 1)
    else:
        total = int(target_lengths.sum()) if target_lengths.numel() else 0
        used = torch.arange(t.numel(), device=t.device) < total
    if used.shape != t.shape:
        return None
    bad = ((t < 0) | (t >= c)) & used
    if strict:
        bad |= (t == blank) & used
    if not bool(bad.any()):
        return None

    def explain(desc, frames):
        vals = int_values(desc)
        causes = []
        if any(v >= c for v in vals):
            causes.append(cause("label_ge_num_classes", 0.75, f"targets up to {max(vals)} for {c} classes (including blank)"))
        if any(v < 0 for v in vals):
            causes.append(cause("negative_label", 0.7, "negative targets inside the target lengths: padding counted as labels"))
        if blank in vals:
            causes.append(cause("unknown", 0.5, f"targets contain the blank index {blank}"))
        return causes, [_CTC_FIX]

    return Found("ctc_loss", "targets", targets, bad, "DA205", {"low": 0, "high": c}, explain, None)


def multi_margin(args, kwargs, pre, strict):
    """multi_margin_loss(input, target, p, margin, weight, reduction)."""
    x = arg(args, kwargs, 0, "input")
    target = arg(args, kwargs, 1, "target")
    if not is_tensor(x) or not int_tensor(target) or x.dim() == 0:
        return None
    if not precheck(target, pre, strict):
        return None
    c = x.size(-1)
    if pre and not outside(target, 0, c):
        return None
    mask = range_mask(target, 0, c)
    if mask is None:
        return None

    def explain(desc, frames):
        fixes = [f"targets of multi_margin_loss must lie in [0, {c}); it has no ignore_index, so drop padding targets first"]
        # Targets are class labels (DA206's causes): the engine's `labels`
        # causes, decided by the measured facts (no ignore_index here).
        causes, steps = _measure.decide_rule("DA206", target, mask, desc, 0, c, frames)
        return causes, [*steps, *fixes]

    return Found("multi_margin_loss", "target", target, mask, "DA206", {"low": 0, "high": c}, explain, index_replace(1, "target", 0, c))

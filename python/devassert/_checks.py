"""One check per guarded op: cheap when the input is valid (one reduction and
one host sync), detailed only on a violation (distinct values, counts, first
positions, likely causes).

A check returns None, or the exception to raise (a DeviceAssertPrevented that is
also the exception type the op raises on CPU for the same input).
"""

import os
import re

import torch

from . import _prevented_class, _report

# rule id -> (name, op_family, summary); names and families are the catalog's.
RULES = {
    "DA101": ("embedding-index-out-of-range", "index_select", "an index passed to index_select / nn.Embedding is outside the table"),
    "DA102": ("embedding-bag-index-out-of-range", "embedding_bag", "an id passed to embedding_bag / nn.EmbeddingBag is outside the table"),
    "DA103": ("embedding-bag-offsets-invalid", "embedding_bag", "embedding_bag offsets do not start at 0, decrease, or run past the input"),
    "DA111": ("advanced-index-out-of-range", "index", "an integer index tensor in x[idx] / index_put is outside the indexed dimension"),
    "DA112": ("take-put-index-out-of-range", "index", "a flat index passed to take / put / take_along_dim is outside the tensor"),
    "DA113": ("index-add-out-of-range", "index", "an index passed to index_add / index_reduce is outside the dimension"),
    "DA114": ("index-copy-out-of-range", "index", "an index passed to index_copy is outside the dimension"),
    "DA115": ("index-fill-out-of-range", "index", "an index passed to index_fill is outside the dimension"),
    "DA121": ("gather-scatter-index-out-of-range", "gather_scatter", "an index passed to gather / scatter is outside the dimension"),
    "DA122": ("one-hot-class-out-of-range", "one_hot", "a value passed to one_hot is negative or >= num_classes"),
    "DA123": ("bincount-negative-input", "bincount", "a value passed to bincount is negative"),
    "DA201": ("cross-entropy-target-out-of-range", "nll_loss", "a class target of cross_entropy / nll_loss is outside [0, C) and not ignore_index"),
    "DA202": ("spatial-cross-entropy-target-out-of-range", "nll_loss2d", "a class target of cross_entropy / nll_loss on [N, C, d1, ...] input is outside [0, C)"),
    "DA203": ("bce-input-out-of-range", "bce", "an input of binary_cross_entropy is outside [0, 1] or NaN"),
    "DA204": ("bce-target-out-of-range", "bce", "a target of binary_cross_entropy is outside [0, 1] or NaN"),
    "DA205": ("ctc-loss-invalid-target", "ctc_loss", "a CTC target is outside [0, C), equal to blank, or a length is invalid"),
    "DA206": ("multi-margin-target-out-of-range", "unknown", "a target of multi_margin_loss is outside [0, C)"),
    "DA303": ("bernoulli-probability-out-of-range", "unknown", "a bernoulli probability is outside [0, 1] or NaN"),
    "DA304": ("poisson-negative-rate", "unknown", "a poisson rate is negative or NaN"),
    "DA501": ("repeat-interleave-invalid-repeats", "unknown", "a repeat count passed to repeat_interleave is negative"),
    "DA301": ("multinomial-invalid-probabilities", "multinomial", "a multinomial probability is negative, NaN or inf"),
    "DA302": ("multinomial-zero-sum", "multinomial", "a multinomial row's probabilities sum to zero"),
}

# Vocabulary sizes of common base tokenizers: a table of exactly this size with
# ids a little past it means tokens were added without resizing the embeddings.
BASE_VOCABS = {
    30000, 30522, 21128, 28996, 32000, 32001, 32100, 32128, 49152, 50257, 50265,
    50280, 51200, 65024, 100277, 100352, 119547, 128000, 128256, 151643, 151936,
    250002, 250880, 256000, 262144,
}

MAX_VALUES = 32
MAX_POSITIONS = 8


def _arg(args, kwargs, i, name, default=None):
    if len(args) > i:
        return args[i]
    return kwargs.get(name, default)


def _is_tensor(x):
    return isinstance(x, torch.Tensor)


def _int_tensor(x):
    return isinstance(x, torch.Tensor) and not x.is_floating_point() and not x.is_complex() and x.dtype is not torch.bool


def _minmax(t):
    """(min, max) of a non-empty tensor with one reduction and one sync."""
    mn, mx = torch.aminmax(t.detach().reshape(-1))
    lo, hi = torch.stack((mn, mx)).tolist()
    return lo, hi


# --- describing a violation --------------------------------------------------


def _flat(pos, shape):
    idx = 0
    for p, s in zip(pos, shape):
        idx = idx * s + p
    return idx


def _describe(t, mask):
    """Distinct bad values with counts, the total, and the first positions."""
    t = t.detach()
    bad = t[mask]
    count = int(bad.numel())
    values, counts = [], []
    if t.is_floating_point():
        nan = torch.isnan(bad)
        n_nan = int(nan.sum())
        rest = bad[~nan]
        if rest.numel():
            u, c = torch.unique(rest, return_counts=True)
            values += [float(v) for v in u.tolist()]
            counts += c.tolist()
        if n_nan:
            values.append(float("nan"))
            counts.append(n_nan)
    elif count:
        u, c = torch.unique(bad, return_counts=True)
        values, counts = u.tolist(), c.tolist()
    shape = list(t.shape)
    positions = []
    if t.dim() == 0:
        positions.append({"index": 0, "value": _report.scalar(t.item())})
    else:
        for pos in mask.nonzero()[:MAX_POSITIONS].tolist():
            value = t[tuple(pos)].item()
            positions.append({"index": _flat(pos, shape), "position": pos, "value": _report.scalar(value)})
    return {
        "values": [_report.scalar(v) for v in values[:MAX_VALUES]],
        "value_counts": counts[:MAX_VALUES],
        "count": count,
        "locations": positions,
    }


def _shape_str(t):
    return "[" + ", ".join(str(s) for s in t.shape) + "]"


def _bound_str(bound):
    low = bound.get("low")
    high = bound.get("high")
    low = "-inf" if low is None else low
    high = "inf" if high is None else high
    close = "]" if bound.get("high_inclusive") else ")"
    return f"[{low}, {high}{close}"


def _fmt_values(desc):
    parts = []
    for v, c in zip(desc["values"][:8], desc["value_counts"][:8]):
        parts.append(f"{v} (x{c})" if c > 1 else f"{v}")
    more = len(desc["values"]) - 8
    if more > 0:
        parts.append(f"... {more} more")
    return ", ".join(parts)


def _cause(cid, confidence, why):
    return {"id": cid, "confidence": round(confidence, 2), "why": why}


def _frame_text(frames):
    """Source lines and function names of the calling frames, for name hints."""
    out = []
    for f in frames[:4]:
        loc = _report._where(f)
        out.append(loc.get("code", "") + " " + loc.get("function", ""))
    return " ".join(out)


def violation(op, argument, tensor, mask, rule, bound, base, causes, fixes, ctx, desc=None):
    """Build the finding, write it for the supervisor, and return the exception."""
    if desc is None:
        desc = _describe(tensor, mask)
    name, family, summary = RULES[rule]
    location, inner = _report.locate(ctx["frames"])
    rank = _report.rank()
    evidence = {
        "source": "guard",
        "op": op,
        "argument": argument,
        "shape": list(tensor.shape),
        "dtype": str(tensor.dtype),
        "device": str(tensor.device),
        "pid": os.getpid(),
    }
    if rank is not None:
        evidence["rank"] = rank
        evidence["ranks"] = [rank]
    if inner is not None and inner != location:
        evidence["inner_frame"] = inner
    causes = sorted(causes, key=lambda c: -c["confidence"])
    finding = {
        "rule": rule,
        "name": name,
        "op_family": family,
        "summary": summary,
        "severity": "error",
        "evidence": evidence,
        "location": location,
        "noticed_at": None,
        "values": desc["values"],
        "value_counts": desc["value_counts"],
        "count": desc["count"],
        "bound": bound,
        "locations": desc["locations"],
        "causes": causes,
        "fixes": fixes,
    }
    _report.emit(finding)
    first = ", ".join(str(p.get("position", p["index"])) for p in desc["locations"][:3])
    where = f" at {location['file']}:{location['line']}" if location else ""
    lines = [
        f"{op}: argument `{argument}` (shape {_shape_str(tensor)}, {tensor.dtype}, {tensor.device}) holds "
        f"{desc['count']} value(s) outside {_bound_str(bound)}: {_fmt_values(desc)}; first at {first}{where}",
        f"  this would fail a CUDA device-side assert; devassert stopped the op before it ran [{rule} {name}]",
    ]
    if causes:
        lines.append(f"  likely cause: {causes[0]['id']}: {causes[0]['why']}")
    if fixes:
        lines.append(f"  fix: {fixes[0]}")
    lines.append(f"  more: devassert rule {rule}")
    exc = _prevented_class(base)("\n".join(lines))
    exc.finding = finding
    exc.rule = rule
    return exc


# --- generic index ranges ----------------------------------------------------


def _range_mask(t, low, high, allowed=None):
    """None when every value is in [low, high) (or equals `allowed`); else the bad mask."""
    if t.numel() == 0:
        return None
    lo, hi = _minmax(t)
    if lo >= low and hi < high:
        return None
    t = t.detach()
    mask = (t < low) | (t >= high)
    if allowed is not None:
        mask &= t != allowed
    if not bool(mask.any()):
        return None
    return mask


def _index_causes(desc, size, what):
    causes = []
    vals = [v for v in desc["values"] if isinstance(v, int)]
    if any(v < 0 for v in vals):
        causes.append(_cause("negative_index", 0.75, f"negative indices ({min(vals)}) reach an op that does not wrap them; -1 / -100 are usually padding or 'missing' markers"))
    if any(v >= size for v in vals):
        causes.append(_cause("index_ge_dim_size", 0.7, f"indices up to {max(vals)} for a {what} of size {size}: an off-by-one, or indices computed for a larger tensor"))
    if any(abs(v) >= 2**31 for v in vals):
        causes.append(_cause("index_overflow", 0.6, "indices beyond 2^31: an integer overflow or uninitialised memory"))
    return causes


def _dim_size(t, dim):
    return t.size(dim) if t.dim() > 0 else 1


def _plain_index(op, rule, base, negatives_legal, tensor_pos, dim_pos, index_pos, index_name="index"):
    def check(args, kwargs, ctx):
        x = _arg(args, kwargs, tensor_pos, "input" if tensor_pos == 0 else "self")
        dim = _arg(args, kwargs, dim_pos, "dim")
        idx = _arg(args, kwargs, index_pos, index_name)
        if not _is_tensor(x) or not _int_tensor(idx) or not isinstance(dim, int):
            return None
        size = _dim_size(x, dim)
        low = -size if negatives_legal else 0
        mask = _range_mask(idx, low, size)
        if mask is None:
            return None
        desc = _describe(idx, mask)
        bound = {"low": low, "high": size}
        causes = _index_causes(desc, size, f"dimension {dim}")
        fixes = [f"check `{index_name}.min() >= {low} and {index_name}.max() < input.size({dim})` ({size}) before {op}"]
        return violation(op, index_name, idx, mask, rule, bound, base, causes, fixes, ctx, desc)

    return check


# --- embedding ---------------------------------------------------------------

_POSITION_HINT = re.compile(r"position|\bwpe\b|pos_emb|positional")
_TOKEN_TYPE_HINT = re.compile(r"token_type|segment|type_emb")
_TOKEN_HINT = re.compile(r"input_ids|word_embeddings|embed_tokens|\bwte\b|tok_embeddings|token_embedding")


def _looks_like_positions(ids):
    """ids whose last dim counts up by one (arange positions)."""
    if ids.dim() == 0 or ids.size(-1) < 2:
        return False
    return bool((ids.diff(dim=-1) == 1).all())


def _trailing(mask):
    """True when, in every row with bad ids, the bad ids fill the row's end (padding)."""
    if mask.dim() != 2:
        return False
    rows = mask.any(dim=1)
    m = mask[rows]
    if m.numel() == 0:
        return False
    length = m.size(1)
    first = m.int().argmax(dim=1)
    return bool((m.sum(dim=1) == length - first).all())


def _embedding_causes(ids, mask, desc, n, frames):
    hints = _frame_text(frames)
    vals = [v for v in desc["values"] if isinstance(v, int)]
    causes = []
    high = [v for v in vals if v >= n]
    if any(v < 0 for v in vals):
        neg = min(vals)
        why = f"negative ids ({neg}) reach the embedding"
        if -100 in vals:
            why += "; -100 is the label padding value: labels were passed as input ids, or ids were padded with -100"
        causes.append(_cause("negative_index", 0.75, why))
    if high:
        if _looks_like_positions(ids):
            causes.append(_cause("seq_len_gt_max_positions", 0.85, f"the ids are positions 0..{ids.max().item()} (a sequence of {ids.size(-1)}) but the table has {n} rows: the input is longer than max_position_embeddings; truncate (max_length={n}) or use a model with more positions"))
        elif _POSITION_HINT.search(hints):
            causes.append(_cause("seq_len_gt_max_positions", 0.7, f"a position embedding of {n} rows gets position {max(high)}: the sequence is longer than max_position_embeddings"))
        if _TOKEN_TYPE_HINT.search(hints) or (n <= 2 and max(high) <= 2):
            causes.append(_cause("type_vocab_size", 0.75 if _TOKEN_TYPE_HINT.search(hints) else 0.5, f"a token-type embedding of {n} row(s) gets type id {max(high)}: the model's type_vocab_size is {n}; pass token_type_ids of zeros or drop them"))
        if n in BASE_VOCABS and max(high) - n < 1024:
            causes.append(_cause("added_tokens_no_resize", 0.75, f"the table has {n} rows, the size of a common base vocabulary, and the ids go a little past it (to {max(high)}): tokens were added to the tokenizer without model.resize_token_embeddings(len(tokenizer))"))
        if len(high) == 1 and _trailing(mask):
            causes.append(_cause("pad_token_id_out_of_range", 0.6, f"the out-of-range id {high[0]} fills the ends of the rows: the padding id is outside the vocabulary"))
        conf = 0.6 if _TOKEN_HINT.search(hints) else 0.45
        causes.append(_cause("token_id_ge_vocab", conf, f"ids up to {max(high)} for an embedding of {n} rows: the data was tokenized with a larger vocabulary than the model's, or the model's vocab_size is wrong"))
    return causes


def _embedding_fixes(causes, n):
    top = causes[0]["id"] if causes else ""
    fixes = {
        "added_tokens_no_resize": ["model.resize_token_embeddings(len(tokenizer))"],
        "seq_len_gt_max_positions": [f"truncate inputs to the model's maximum: tokenizer(..., truncation=True, max_length={n})"],
        "type_vocab_size": ["pass token_type_ids with values below config.type_vocab_size (usually zeros), or none"],
        "pad_token_id_out_of_range": ["set the pad id to one inside the vocabulary (e.g. tokenizer.pad_token = tokenizer.eos_token)"],
        "negative_index": ["replace negative ids before the lookup (e.g. ids.masked_fill(ids < 0, pad_id)); never pass labels as input ids"],
    }.get(top, [])
    return fixes + [f"check `ids.min() >= 0 and ids.max() < {n}` on the batch; devassert scan DATA --vocab {n}"]


def _embedding_check(op, ids, weight, ctx, rule="DA101", base=IndexError, argument="input"):
    if not _int_tensor(ids) or not _is_tensor(weight) or weight.dim() == 0:
        return None
    n = weight.size(0)
    mask = _range_mask(ids, 0, n)
    if mask is None:
        return None
    desc = _describe(ids, mask)
    causes = _embedding_causes(ids.detach(), mask, desc, n, ctx["frames"])
    return violation(op, argument, ids, mask, rule, {"low": 0, "high": n}, base, causes, _embedding_fixes(causes, n), ctx, desc)


def check_embedding(args, kwargs, ctx):
    return _embedding_check("F.embedding", _arg(args, kwargs, 0, "input"), _arg(args, kwargs, 1, "weight"), ctx)


def check_torch_embedding(args, kwargs, ctx):
    return _embedding_check("torch.embedding", _arg(args, kwargs, 1, "indices"), _arg(args, kwargs, 0, "weight"), ctx, argument="indices")


def check_embedding_bag(args, kwargs, ctx):
    ids = _arg(args, kwargs, 0, "input")
    weight = _arg(args, kwargs, 1, "weight")
    err = _embedding_check("F.embedding_bag", ids, weight, ctx, rule="DA102", base=RuntimeError)
    if err is not None:
        return err
    offsets = _arg(args, kwargs, 2, "offsets")
    if not _int_tensor(offsets) or not _int_tensor(ids) or ids.dim() != 1 or offsets.dim() != 1 or offsets.numel() == 0:
        return None
    include_last = bool(_arg(args, kwargs, 10, "include_last_offset", False))
    n = ids.numel()
    o = offsets.detach()
    parts = [o[:1], o[-1:]]
    if o.numel() > 1:
        parts.append(o.diff().min().reshape(1))
    stats = torch.cat(parts).tolist()
    first, last = stats[0], stats[1]
    min_step = stats[2] if len(stats) > 2 else 0
    if first == 0 and last <= n and min_step >= 0:
        return None
    mask = torch.zeros_like(o, dtype=torch.bool)
    why = []
    if first != 0:
        mask[0] = True
        why.append(f"offsets[0] is {first}, not 0")
    if last > n:
        mask |= o > n
        why.append(f"offsets run to {last}, past the {n} ids")
    if min_step < 0:
        dec = torch.zeros_like(mask)
        dec[1:] = o.diff() < 0
        mask |= dec
        why.append("offsets decrease (a bag ends before it starts)")
    bound = {"low": 0, "high": n, "high_inclusive": True}
    causes = [_cause("index_ge_dim_size" if last > n else "unknown", 0.6, "; ".join(why) + ("; with include_last_offset=True the last offset must equal the number of ids" if include_last else ""))]
    fixes = ["build offsets as a cumulative sum of bag lengths starting at 0: offsets = torch.cat([lengths.new_zeros(1), lengths.cumsum(0)[:-1]])"]
    return violation("F.embedding_bag", "offsets", offsets, mask, "DA103", bound, RuntimeError, causes, fixes, ctx)


# --- losses ------------------------------------------------------------------


def _nll_check(op, args, kwargs, ctx):
    x = _arg(args, kwargs, 0, "input")
    target = _arg(args, kwargs, 1, "target")
    if not _is_tensor(x) or not _int_tensor(target) or x.dim() == 0:
        return None
    ignore = _arg(args, kwargs, 4, "ignore_index", -100)
    if not isinstance(ignore, int):
        ignore = -100
    c = x.size(1) if x.dim() >= 2 else x.size(0)
    mask = _range_mask(target, 0, c, allowed=ignore)
    if mask is None:
        return None
    rule = "DA202" if x.dim() >= 3 else "DA201"
    desc = _describe(target, mask)
    vals = [v for v in desc["values"] if isinstance(v, int)]
    causes = []
    ignore_like = [v for v in vals if v in (255, -1, -100) and v != ignore]
    if ignore_like:
        causes.append(_cause("ignore_label_not_ignored", 0.85, f"targets hold {ignore_like[0]}, the usual 'ignore' label, but ignore_index is {ignore}: pass ignore_index={ignore_like[0]}"))
    if any(v >= c for v in vals if v not in ignore_like):
        hi = max(vals)
        extra = f" (labels run 1..{c} instead of 0..{c - 1}, or num_classes is one too small)" if hi == c else ""
        causes.append(_cause("label_ge_num_classes", 0.75, f"targets up to {hi} for {c} classes{extra}"))
    if any(v < 0 for v in vals if v not in ignore_like):
        causes.append(_cause("negative_label", 0.7, f"negative targets ({min(vals)}) that are not ignore_index ({ignore})"))
    top = causes[0]["id"] if causes else ""
    fixes = {
        "ignore_label_not_ignored": [f"F.cross_entropy(..., ignore_index={ignore_like[0] if ignore_like else 255})" + " / nn.CrossEntropyLoss(ignore_index=...)"],
        "label_ge_num_classes": [f"make the model output as many classes as the labels need (num_labels > {max(vals)}), or remap the labels to 0..{c - 1}"],
        "negative_label": [f"map negative labels to ignore_index ({ignore}) or to a real class"],
    }.get(top, [])
    fixes.append(f"check `((t >= 0) & (t < {c}) | (t == {ignore})).all()` on the targets; devassert scan LABELS --vocab {c}")
    return violation(op, "target", target, mask, rule, {"low": 0, "high": c}, IndexError, causes, fixes, ctx, desc)


def check_cross_entropy(args, kwargs, ctx):
    return _nll_check("F.cross_entropy", args, kwargs, ctx)


def check_nll_loss(args, kwargs, ctx):
    return _nll_check("F.nll_loss", args, kwargs, ctx)


def _unit_interval_mask(t):
    if t.numel() == 0:
        return None
    lo, hi = _minmax(t)
    if lo == lo and hi == hi and lo >= 0 and hi <= 1:
        return None
    t = t.detach()
    mask = ~((t >= 0) & (t <= 1))
    return mask if bool(mask.any()) else None


def check_bce(args, kwargs, ctx):
    x = _arg(args, kwargs, 0, "input")
    target = _arg(args, kwargs, 1, "target")
    bound = {"low": 0.0, "high": 1.0, "high_inclusive": True}
    if _is_tensor(x) and x.is_floating_point():
        mask = _unit_interval_mask(x)
        if mask is not None:
            desc = _describe(x, mask)
            causes = []
            if any(v == "nan" for v in desc["values"]):
                causes.append(_cause("nan_in_input", 0.8, "the input holds NaN: the forward pass diverged (learning rate, fp16 overflow, log of 0) before the loss"))
            if any(not isinstance(v, str) or v in ("inf", "-inf") for v in desc["values"]):
                causes.append(_cause("bce_on_logits", 0.85, "inputs outside [0, 1]: raw logits were passed to binary_cross_entropy / BCELoss, which expects probabilities"))
            fixes = ["use F.binary_cross_entropy_with_logits / nn.BCEWithLogitsLoss on the logits (numerically stable), or apply torch.sigmoid first"]
            return violation("F.binary_cross_entropy", "input", x, mask, "DA203", bound, RuntimeError, causes, fixes, ctx, desc)
    if _is_tensor(target) and target.is_floating_point():
        mask = _unit_interval_mask(target)
        if mask is not None:
            desc = _describe(target, mask)
            causes = [_cause("bce_target_range", 0.8, "targets outside [0, 1]: class ids or 0/255 masks used as binary targets")]
            if any(v == "nan" for v in desc["values"]):
                causes.append(_cause("nan_in_input", 0.6, "the targets hold NaN"))
            fixes = ["scale or binarise the targets to [0, 1] (e.g. mask / 255, or (labels == k).float())"]
            return violation("F.binary_cross_entropy", "target", target, mask, "DA204", bound, RuntimeError, causes, fixes, ctx, desc)
    return None


def check_multinomial(args, kwargs, ctx):
    p = _arg(args, kwargs, 0, "input")
    if not _is_tensor(p) or not p.is_floating_point() or p.numel() == 0 or p.dim() == 0:
        return None
    lo, hi = _minmax(p)
    fixes = ["find where the logits become NaN/inf (fp16 overflow, temperature 0, all -inf after masking); sample from torch.softmax(logits.float() / max(t, 1e-5), -1)"]
    if not (lo == lo and hi == hi and lo >= 0 and hi != float("inf")):
        d = p.detach()
        mask = ~(torch.isfinite(d) & (d >= 0))
        desc = _describe(p, mask)
        causes = []
        if any(v in ("nan", "inf", "-inf") for v in desc["values"]):
            causes.append(_cause("nan_inf_probs", 0.85, "probabilities hold NaN/inf: overflowing logits, a temperature of 0, or a softmax over all -inf"))
        if any(not isinstance(v, str) and v < 0 for v in desc["values"]):
            causes.append(_cause("unknown", 0.5, "negative probabilities: logits passed where probabilities are expected (apply softmax first)"))
        bound = {"low": 0.0, "high": "inf"}
        return violation("torch.multinomial", "input", p, mask, "DA301", bound, RuntimeError, causes, fixes, ctx, desc)
    sums = p.detach().sum(dim=-1)
    if float(sums.min()) > 0:
        return None
    mask = sums <= 0
    desc = _describe(sums, mask)
    desc["locations"] = [dict(loc, row=loc["index"]) for loc in desc["locations"]]
    causes = [_cause("nan_inf_probs", 0.6, "a row of probabilities sums to 0: every token was filtered out (top-k/top-p/min-p, bad-word masks) or underflowed to 0")]
    bound = {"low": 0.0, "high": None}
    return violation("torch.multinomial", "input (row sums)", sums, mask, "DA302", bound, RuntimeError, causes, fixes, ctx, desc)


def _as_int_tensor(x):
    if _int_tensor(x):
        return x
    if isinstance(x, (list, tuple)) and all(isinstance(v, int) for v in x):
        return torch.tensor(list(x), dtype=torch.long)
    return None


def check_ctc_loss(args, kwargs, ctx):
    log_probs = _arg(args, kwargs, 0, "log_probs")
    targets = _arg(args, kwargs, 1, "targets")
    input_lengths = _as_int_tensor(_arg(args, kwargs, 2, "input_lengths"))
    target_lengths = _as_int_tensor(_arg(args, kwargs, 3, "target_lengths"))
    blank = _arg(args, kwargs, 4, "blank", 0)
    if not _is_tensor(log_probs) or not _int_tensor(targets) or log_probs.dim() < 2 or input_lengths is None or target_lengths is None:
        return None
    c = log_probs.size(-1)
    t_max = log_probs.size(0)
    fixes = ["targets must be class ids in [0, C) other than blank, and each length within its tensor; reserve the blank index (usually 0) in the label map"]
    if input_lengths.numel():
        mask = _range_mask(input_lengths, 0, t_max + 1)
        if mask is not None:
            causes = [_cause("index_ge_dim_size", 0.6, f"input_lengths outside [0, {t_max}] (the time steps of log_probs)")]
            return violation("F.ctc_loss", "input_lengths", input_lengths, mask, "DA205", {"low": 0, "high": t_max, "high_inclusive": True}, RuntimeError, causes, fixes, ctx)
    t = targets.detach()
    if t.dim() == 2:
        s = t.size(1)
        mask = _range_mask(target_lengths, 0, s + 1) if target_lengths.numel() else None
        if mask is not None:
            causes = [_cause("index_ge_dim_size", 0.6, f"target_lengths outside [0, {s}] (the width of the padded targets)")]
            return violation("F.ctc_loss", "target_lengths", target_lengths, mask, "DA205", {"low": 0, "high": s, "high_inclusive": True}, RuntimeError, causes, fixes, ctx)
        used = torch.arange(s, device=t.device).unsqueeze(0) < target_lengths.to(t.device).reshape(-1, 1)
    else:
        total = int(target_lengths.sum()) if target_lengths.numel() else 0
        used = torch.arange(t.numel(), device=t.device) < total
    if t.numel() == 0:
        return None
    strict = ctx["level"] == "strict"
    lo, hi = _minmax(torch.where(used, t, torch.zeros_like(t)) if t.shape == used.shape else t)
    if lo >= 0 and hi < c and not strict:
        return None
    bad = ((t < 0) | (t >= c)) & used
    if strict:
        bad |= (t == blank) & used
    if not bool(bad.any()):
        return None
    desc = _describe(targets, bad)
    vals = [v for v in desc["values"] if isinstance(v, int)]
    causes = []
    if any(v >= c for v in vals):
        causes.append(_cause("label_ge_num_classes", 0.75, f"targets up to {max(vals)} for {c} classes (including blank)"))
    if any(v < 0 for v in vals):
        causes.append(_cause("negative_label", 0.7, "negative targets inside the target lengths: padding counted as labels"))
    if blank in vals:
        causes.append(_cause("unknown", 0.5, f"targets contain the blank index {blank}"))
    return violation("F.ctc_loss", "targets", targets, bad, "DA205", {"low": 0, "high": c}, RuntimeError, causes, fixes, ctx, desc)


# --- one_hot, bincount, take --------------------------------------------------


def check_one_hot(args, kwargs, ctx):
    t = _arg(args, kwargs, 0, "tensor", _arg(args, kwargs, 0, "input"))
    n = _arg(args, kwargs, 1, "num_classes", -1)
    if not _int_tensor(t) or not isinstance(n, int):
        return None
    high = n if n > 0 else 2**62
    mask = _range_mask(t, 0, high)
    if mask is None:
        return None
    desc = _describe(t, mask)
    vals = [v for v in desc["values"] if isinstance(v, int)]
    causes = []
    if any(v < 0 for v in vals):
        causes.append(_cause("negative_label", 0.75, f"negative values ({min(vals)}) passed to one_hot: ignore/padding labels (-1, -100) not removed first"))
    if n > 0 and any(v >= n for v in vals):
        causes.append(_cause("label_ge_num_classes", 0.75, f"values up to {max(vals)} for num_classes={n}"))
    fixes = [f"pass values in [0, num_classes); mask ignore labels first: F.one_hot(t.clamp_min(0), {n if n > 0 else 'C'}) * (t >= 0).unsqueeze(-1)"]
    bound = {"low": 0, "high": n if n > 0 else None}
    return violation("F.one_hot", "tensor", t, mask, "DA122", bound, RuntimeError, causes, fixes, ctx, desc)


def check_bincount(args, kwargs, ctx):
    t = _arg(args, kwargs, 0, "input")
    if not _int_tensor(t) or t.dim() != 1:
        return None
    mask = _range_mask(t, 0, 2**62)
    if mask is None:
        return None
    desc = _describe(t, mask)
    causes = [_cause("negative_index", 0.7, "negative values passed to bincount: ignore/padding labels (-1, -100) counted as classes")]
    fixes = ["drop negative values first: torch.bincount(t[t >= 0], minlength=C)"]
    return violation("torch.bincount", "input", t, mask, "DA123", {"low": 0, "high": None}, RuntimeError, causes, fixes, ctx, desc)


def check_take(op):
    def check(args, kwargs, ctx):
        x = _arg(args, kwargs, 0, "input")
        idx = _arg(args, kwargs, 1, "index")
        if not _is_tensor(x) or not _int_tensor(idx):
            return None
        n = x.numel()
        mask = _range_mask(idx, -n, n)
        if mask is None:
            return None
        desc = _describe(idx, mask)
        causes = _index_causes(desc, n, "flattened tensor")
        fixes = [f"flat indices must lie in [-{n}, {n}) (the tensor's numel)"]
        return violation(op, "index", idx, mask, "DA112", {"low": -n, "high": n}, IndexError, causes, fixes, ctx, desc)

    return check


def check_take_along_dim(args, kwargs, ctx):
    if ctx["level"] != "strict":
        return None
    x = _arg(args, kwargs, 0, "input")
    idx = _arg(args, kwargs, 1, "indices")
    dim = _arg(args, kwargs, 2, "dim")
    if not _is_tensor(x) or not _int_tensor(idx):
        return None
    n = x.numel() if dim is None else _dim_size(x, dim)
    mask = _range_mask(idx, -n, n)
    if mask is None:
        return None
    desc = _describe(idx, mask)
    causes = _index_causes(desc, n, "dimension" if dim is not None else "flattened tensor")
    fixes = [f"indices must lie in [-{n}, {n}); current PyTorch wraps them silently, older releases fail a gather device assert"]
    return violation("torch.take_along_dim", "indices", idx, mask, "DA112", {"low": -n, "high": n}, RuntimeError, causes, fixes, ctx, desc)


# --- advanced indexing ---------------------------------------------------------


def _key_tensors(x, key):
    """(index tensor, dimension size, dimension) for each integer tensor in an
    indexing key, following how x[key] assigns key items to dimensions."""
    items = key if isinstance(key, tuple) else (key,)
    # dims consumed by each item: bool tensors consume their ndim, None/bool consume none
    def consumes(k):
        if k is None or k is Ellipsis or isinstance(k, bool):
            return 0
        if isinstance(k, torch.Tensor) and k.dtype in (torch.bool, torch.uint8):
            return max(k.dim(), 1)
        return 1

    out = []
    d = 0
    ndim = x.dim()
    for i, k in enumerate(items):
        if k is Ellipsis:
            d = ndim - sum(consumes(j) for j in items[i + 1:])
            continue
        if isinstance(k, list) and k and all(isinstance(v, int) and not isinstance(v, bool) for v in k):
            k = torch.tensor(k)
        if _int_tensor(k) and k.dtype is not torch.uint8 and d < ndim:
            out.append((k, x.size(d), d))
        d += consumes(k)
    return out


def _advanced_index(op, x, entries, ctx):
    for idx, size, d in entries:
        mask = _range_mask(idx, -size, size)
        if mask is None:
            continue
        desc = _describe(idx, mask)
        causes = _index_causes(desc, size, f"dimension {d}")
        fixes = [f"indices for dimension {d} must lie in [-{size}, {size}); check how they were computed (torch.where / argmax / a mask that yields -1 or one past the end)"]
        return violation(op, f"index (dimension {d})", idx, mask, "DA111", {"low": -size, "high": size}, IndexError, causes, fixes, ctx, desc)
    return None


def _simple_key(key):
    return key is None or isinstance(key, (int, slice)) or key is Ellipsis


def check_getitem(args, kwargs, ctx):
    x, key = args[0], args[1]
    if _simple_key(key) or not _is_tensor(x):
        return None
    if isinstance(key, tuple) and not any(isinstance(k, (torch.Tensor, list)) for k in key):
        return None
    return _advanced_index("Tensor.__getitem__", x, _key_tensors(x, key), ctx)


def check_setitem(args, kwargs, ctx):
    x, key = args[0], args[1]
    if _simple_key(key) or not _is_tensor(x):
        return None
    if isinstance(key, tuple) and not any(isinstance(k, (torch.Tensor, list)) for k in key):
        return None
    return _advanced_index("Tensor.__setitem__", x, _key_tensors(x, key), ctx)


def check_index_put(op):
    def check(args, kwargs, ctx):
        x = _arg(args, kwargs, 0, "input")
        indices = _arg(args, kwargs, 1, "indices")
        if not _is_tensor(x) or not isinstance(indices, (tuple, list)):
            return None
        entries = []
        d = 0
        for k in indices:
            if _is_tensor(k) and k.dtype in (torch.bool, torch.uint8):
                d += max(k.dim(), 1)
                continue
            if _int_tensor(k) and d < x.dim():
                entries.append((k, x.size(d), d))
            d += 1
        return _advanced_index(op, x, entries, ctx)

    return check


# --- other value checks --------------------------------------------------------


def check_multi_margin(args, kwargs, ctx):
    x = _arg(args, kwargs, 0, "input")
    target = _arg(args, kwargs, 1, "target")
    if not _is_tensor(x) or not _int_tensor(target) or x.dim() == 0:
        return None
    c = x.size(-1)
    mask = _range_mask(target, 0, c)
    if mask is None:
        return None
    desc = _describe(target, mask)
    causes = _index_causes(desc, c, "class dimension")
    fixes = [f"targets of multi_margin_loss must lie in [0, {c}); it has no ignore_index, so drop padding targets first"]
    return violation("F.multi_margin_loss", "target", target, mask, "DA206", {"low": 0, "high": c}, RuntimeError, causes, fixes, ctx, desc)


def check_bernoulli(args, kwargs, ctx):
    p = _arg(args, kwargs, 0, "input")
    return _bernoulli_p(p, ctx)


def check_bernoulli_(args, kwargs, ctx):
    # Tensor.bernoulli_(p): self only receives the samples; only a tensor p is checked.
    p = _arg(args, kwargs, 1, "p")
    return _bernoulli_p(p, ctx) if _is_tensor(p) else None


def _bernoulli_p(p, ctx):
    if not _is_tensor(p) or not p.is_floating_point():
        return None
    mask = _unit_interval_mask(p)
    if mask is None:
        return None
    desc = _describe(p, mask)
    causes = [_cause("nan_in_input" if "nan" in desc["values"] else "unknown", 0.6, "probabilities outside [0, 1]: logits passed where probabilities are expected, or NaN from an earlier step")]
    fixes = ["pass probabilities (torch.sigmoid(logits)) in [0, 1]"]
    return violation("torch.bernoulli", "p", p, mask, "DA303", {"low": 0.0, "high": 1.0, "high_inclusive": True}, RuntimeError, causes, fixes, ctx, desc)


def check_poisson(args, kwargs, ctx):
    rate = _arg(args, kwargs, 0, "input")
    if not _is_tensor(rate) or not rate.is_floating_point() or rate.numel() == 0:
        return None
    lo, hi = _minmax(rate)
    if lo == lo and hi == hi and lo >= 0:
        return None
    d = rate.detach()
    mask = ~(d >= 0)
    desc = _describe(rate, mask)
    causes = [_cause("nan_in_input" if "nan" in desc["values"] else "unknown", 0.6, "negative or NaN rates reach torch.poisson")]
    fixes = ["pass non-negative rates (e.g. softplus or exp of the prediction)"]
    return violation("torch.poisson", "input", rate, mask, "DA304", {"low": 0.0, "high": None}, RuntimeError, causes, fixes, ctx, desc)


def check_repeat_interleave(args, kwargs, ctx):
    first = _arg(args, kwargs, 0, "input")
    repeats = _arg(args, kwargs, 1, "repeats")
    if repeats is None and _int_tensor(first):
        repeats = first  # torch.repeat_interleave(repeats)
    if not _int_tensor(repeats):
        return None
    mask = _range_mask(repeats, 0, 2**62)
    if mask is None:
        return None
    desc = _describe(repeats, mask)
    causes = _index_causes(desc, 2**62, "repeat count")
    fixes = ["repeat counts must be >= 0 (clamp_min(0) or fix how they are computed)"]
    return violation("repeat_interleave", "repeats", repeats, mask, "DA501", {"low": 0, "high": None}, RuntimeError, causes, fixes, ctx, desc)


# --- the table the mode looks ops up in ---------------------------------------


def table():
    """{callable: (check, op name)} for every guarded entry point."""
    F = torch.nn.functional
    T = torch.Tensor
    checks = {}

    def add(funcs, check):
        for f in funcs:
            if f is not None:
                checks[f] = check

    def both(name):
        return [getattr(torch, name, None), getattr(T, name, None)]

    add([F.embedding], check_embedding)
    add([torch.embedding], check_torch_embedding)
    add([F.embedding_bag], check_embedding_bag)
    add([F.cross_entropy], check_cross_entropy)
    add([F.nll_loss], check_nll_loss)
    add([F.binary_cross_entropy], check_bce)
    add(both("multinomial"), check_multinomial)
    add([F.ctc_loss], check_ctc_loss)
    add([F.one_hot], check_one_hot)
    add(both("bincount"), check_bincount)
    add(both("take"), check_take("torch.take"))
    add([F.multi_margin_loss], check_multi_margin)
    add(both("bernoulli"), check_bernoulli)
    add([getattr(T, "bernoulli_", None)], check_bernoulli_)
    add(both("poisson"), check_poisson)
    add(both("repeat_interleave"), check_repeat_interleave)
    add([getattr(T, "put_", None), getattr(T, "put", None), getattr(torch, "put", None)], check_take("Tensor.put_"))
    add(both("take_along_dim"), check_take_along_dim)
    add([T.__getitem__], check_getitem)
    add([T.__setitem__], check_setitem)
    add(both("index_put") + [T.index_put_], check_index_put("index_put"))
    add(both("gather"), _plain_index("gather", "DA121", RuntimeError, False, 0, 1, 2))
    for name in ("scatter", "scatter_", "scatter_add", "scatter_add_", "scatter_reduce", "scatter_reduce_"):
        add(both(name), _plain_index(name, "DA121", RuntimeError, False, 0, 1, 2))
    add(both("index_select"), _plain_index("index_select", "DA101", IndexError, False, 0, 1, 2))
    for name in ("index_add", "index_add_", "index_reduce", "index_reduce_"):
        add(both(name), _plain_index(name, "DA113", IndexError, False, 0, 1, 2))
    for name in ("index_copy", "index_copy_"):
        add(both(name), _plain_index(name, "DA114", IndexError, False, 0, 1, 2))
    for name in ("index_fill", "index_fill_"):
        add(both(name), _plain_index(name, "DA115", IndexError, True, 0, 1, 2))
    return checks

"""The facts a violation shows, measured on the tensor the op was given and
on the program around it, for the cause engine (``_findings/facts.py``,
``catalog/causes.toml``): the bad values and their counts, the whole
tensor's range, whether the ids count up like positions, whether the bad ids
fill the ends of their rows, the names of the calling code, and the live
tokenizer. Measured only once a violation is found, never on valid calls."""

import re
import sys

import torch

from .._findings import facts as _facts
from . import report as _report
from .violation import collapse

_POSITION_HINT = re.compile(r"position|\bwpe\b|pos_emb|positional")
_TOKEN_TYPE_HINT = re.compile(r"token_type|segment|type_emb")
_TOKEN_HINT = re.compile(r"input_ids|word_embeddings|embed_tokens|\bwte\b|tok_embeddings|token_embedding")


def _frame_text(frames):
    """Source lines and function names of the calling frames, for name hints."""
    out = []
    for f in frames[:6]:
        loc = _report.where(f)
        out.append(loc.get("code", "") + " " + loc.get("function", ""))
    return " ".join(out)


def _value_counts(desc):
    counts = {}
    for v, c in zip(desc.get("values") or [], desc.get("value_counts") or []):
        if isinstance(v, int) and not isinstance(v, bool):
            counts[v] = int(c)
    for v in (desc.get("value_min"), desc.get("value_max")):
        if isinstance(v, int) and not isinstance(v, bool) and v not in counts:
            counts[v] = 1
    return counts


def _looks_like_positions(t):
    """ids whose last dim counts up by one (arange positions)."""
    if t.dim() == 0 or t.size(-1) < 2:
        return False
    return bool((t.diff(dim=-1) == 1).all())


def _trailing(mask):
    """(whether, in every row with bad ids, the bad ids fill the row's end;
    rows with bad ids)."""
    if mask.dim() != 2:
        return False, None
    m = mask[mask.any(dim=1)]
    if m.numel() == 0:
        return False, 0
    first = m.int().argmax(dim=1)
    return bool((m.sum(dim=1) == m.size(1) - first).all()), int(m.size(0))


def tokenizer_in(frames):
    """The live Hugging Face tokenizer the calling code holds (a local, or a
    `tokenizer` / `processing_class` attribute of one), or None. Any class
    of transformers 4.x or 5.x, fast or slow: all derive from
    PreTrainedTokenizerBase."""
    tf = sys.modules.get("transformers")
    base = getattr(tf, "PreTrainedTokenizerBase", None) if tf is not None else None
    if base is None:
        return None
    for frame in frames:
        # A compiled region's recorded frames carry no variables.
        for scope in (getattr(frame, "f_locals", None), getattr(frame, "f_globals", None)):
            if not isinstance(scope, dict):
                continue
            for v in list(scope.values()):
                if isinstance(v, base):
                    return v
                for attr in ("tokenizer", "processing_class"):
                    try:
                        inner = getattr(v, attr, None) if not isinstance(v, type) else None
                    except Exception:  # noqa: BLE001 - a property that raises holds no tokenizer
                        inner = None
                    if isinstance(inner, base):
                        return inner
    return None


def tokenizer_facts(tok):
    """len(tokenizer), its added tokens (beyond its base vocabulary) and its
    pad id, as far as the tokenizer says them."""
    out = {}
    try:
        n = len(tok)
        out["tok_len"] = n
        base = getattr(tok, "vocab_size", None)
        if isinstance(base, int) and 0 < base <= n:
            out["tok_added"] = n - base
        pad = getattr(tok, "pad_token_id", None)
        if isinstance(pad, int):
            out["pad_id"] = pad
    except Exception:  # noqa: BLE001 - a tokenizer that cannot say is no fact
        pass
    return out


def index_facts(t, mask, desc, low, high, kind, frames, ignore=None):
    """The facts of an index or label violation: `t` the argument, `mask`
    its bad elements (over collapse(t)), `desc` the described values."""
    f = _facts.value_facts(_value_counts(desc), low, high, kind)
    t = collapse(t)
    if ignore is not None:
        f["ignore"] = ignore
    kept = t[t != ignore] if ignore is not None else t
    if kept.numel():
        lo, hi = torch.aminmax(kept)
        f["col_min"], f["col_max"] = int(lo), int(hi)
    f["hf"] = 1 if _report.in_stack(frames, "transformers") else 0
    if kind == "ids":
        hints = _frame_text(frames)
        f["hint_pos"] = 1 if _POSITION_HINT.search(hints) else 0
        f["hint_type"] = 1 if _TOKEN_TYPE_HINT.search(hints) else 0
        f["hint_tok"] = 1 if _TOKEN_HINT.search(hints) else 0
        f["positions"] = 1 if _looks_like_positions(t) else 0
        f["offset"] = 0
        if t.dim():
            f["seq_len"] = t.size(-1)
        if mask is not None:
            trailing, rows = _trailing(mask)
            f["trailing"] = 1 if trailing else 0
            if rows is not None:
                f["bad_rows"] = rows
        tok = tokenizer_in(frames)
        if tok is not None:
            f.update(tokenizer_facts(tok))
            f["hf"] = 1
    return f


class Causes(list):
    """The decided causes, carrying the ones the facts ruled out."""

    ruled_out = ()


def decide(kind, f):
    """(causes, fixes) for a check's `explain`: the engine's causes with
    their checked fixes, and those fixes in rank order."""
    causes, ruled_out = _facts.decide(kind, f)
    out = Causes(causes)
    out.ruled_out = tuple(ruled_out)
    return out, _facts.fixes_of(causes)

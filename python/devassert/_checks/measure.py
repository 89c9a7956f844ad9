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
from .._findings.rules import RULES
from .._findings import tokenizer as _tokenizer
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


# Where the calling code keeps a tokenizer besides a plain name: a Trainer's
# processing_class (tokenizer before transformers 4.46), a pipeline's or a
# processor's tokenizer, and a data collator's (a Trainer's data_collator, a
# DataLoader's collate_fn), one attribute further.
_HOLDERS = ("tokenizer", "processing_class")
_COLLATORS = ("data_collator", "collate_fn")


def _get(obj, attr):
    try:
        return getattr(obj, attr, None) if not isinstance(obj, type) else None
    except Exception:  # noqa: BLE001 - a property that raises holds no tokenizer
        return None


def _held(v, base):
    """The tokenizer `v` is or holds, or None."""
    if isinstance(v, base):
        return v
    for attr in _HOLDERS:
        inner = _get(v, attr)
        if isinstance(inner, base):
            return inner
    for attr in _COLLATORS:
        collator = _get(v, attr)
        if collator is not None:
            for name in _HOLDERS:
                inner = _get(collator, name)
                if isinstance(inner, base):
                    return inner
    return None


def tokenizer_in(frames):
    """The live Hugging Face tokenizer the calling code holds (a local or
    global of a calling frame, or one such holds, `_held`), or None. Any
    class of transformers 4.x or 5.x, fast or slow (all derive from
    PreTrainedTokenizerBase), or a bare `tokenizers.Tokenizer`."""
    tf = sys.modules.get("transformers")
    classes = (getattr(tf, "PreTrainedTokenizerBase", None) if tf is not None else None, _tokenizer.bare_class())
    base = tuple(c for c in classes if isinstance(c, type))
    if not base:
        return None
    for frame in frames:
        # A compiled region's recorded frames carry no variables.
        for scope in (getattr(frame, "f_locals", None), getattr(frame, "f_globals", None)):
            if not isinstance(scope, dict):
                continue
            for v in list(scope.values()):
                tok = _held(v, base)
                if tok is not None:
                    return tok
    return None


def tokenizer_facts(tok):
    """The cause engine's facts of the live tokenizer (len, added tokens,
    pad id), read as preflight reads them (`_findings/tokenizer.py`)."""
    try:
        return _tokenizer.Read(tok).facts()
    except Exception:  # noqa: BLE001 - a tokenizer whose len() raises says nothing
        return {}


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


def decide_rule(rule, t, mask, desc, low, high, frames, ignore=None):
    """decide() for the values of `rule`'s bad argument, of the kind its
    catalog entry names (`values`: ids, labels or index)."""
    kind = RULES[rule]["values"]
    return decide(kind, index_facts(t, mask, desc, low, high, kind, frames, ignore=ignore))


def decide(kind, f):
    """(causes, fixes) for a check's `explain`: the engine's causes with
    their checked fixes, and those fixes in rank order."""
    causes, ruled_out = _facts.decide(kind, f)
    out = Causes(causes)
    out.ruled_out = tuple(ruled_out)
    return out, _facts.fixes_of(causes)

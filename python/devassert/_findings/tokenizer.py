"""What a live Hugging Face tokenizer says about the ids it makes, read one
way for the guard (`_checks/measure.py`) and for preflight
(`_preflight/model.py`), so that both weigh the same facts: len(tokenizer),
its base vocabulary, its added and special tokens, and from them the cause
engine's facts (`tok_len`, `tok_added`, `pad_id`).

Any class of transformers 4.x or 5.x reads the same: fast
(`PreTrainedTokenizerFast`, 5.x's `TokenizersBackend`), slow
(`PreTrainedTokenizer`, 5.x's `PythonBackend`, ByT5's byte vocabulary), a
user's subclass. Their differences, met here:
- `vocab_size` is the base vocabulary without added tokens, but a slow
  subclass that does not define it raises NotImplementedError, and ByT5's
  (256 bytes) leaves out its own specials and extra ids;
- `added_tokens_decoder` lists the special tokens that sit inside the base
  vocabulary too ([CLS] at 101), so only the ids at or past the base count
  as added; without it, len(tokenizer) - vocab_size does.
An attribute a class lacks, or that raises, is a fact not measured; only
len(tokenizer) is required (what raises there is the caller's to name).

A bare `tokenizers.Tokenizer` (the Rust library's object, which training code
without transformers holds, and which a fast tokenizer wraps) has no len():
its size is `get_vocab_size(with_added_tokens=True)`, its base vocabulary the
same without them, its added tokens `get_added_tokens_decoder()` (where the
library has it; it lists in-vocabulary specials as transformers does) and
its pad id the one its padding is enabled with."""

import sys

_SPECIALS = ("pad_token_id", "bos_token_id", "eos_token_id", "unk_token_id", "sep_token_id", "cls_token_id", "mask_token_id")


def _attr(tok, name):
    try:
        return getattr(tok, name, None)
    except Exception:  # noqa: BLE001 - an attribute that raises is no fact (vocab_size of a bare slow subclass)
        return None


def _int(v):
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def bare_class():
    """`tokenizers.Tokenizer` when the library is loaded, else None."""
    lib = sys.modules.get("tokenizers")
    cls = getattr(lib, "Tokenizer", None) if lib is not None else None
    return cls if isinstance(cls, type) else None


def is_bare(tok):
    cls = bare_class()
    return cls is not None and isinstance(tok, cls)


def _call(tok, name, **kw):
    """tok.name(**kw), or None where it lacks it or raises (a fact not measured)."""
    fn = _attr(tok, name)
    if not callable(fn):
        return None
    try:
        return fn(**kw)
    except Exception:  # noqa: BLE001 - an older tokenizers without the keyword
        return None


def _bare(tok):
    """(size, base size, added tokens {id: token}, specials) of a bare
    `tokenizers.Tokenizer`; the size is required, as len() is of the others."""
    size = _int(tok.get_vocab_size(with_added_tokens=True))
    if size is None:
        raise TypeError(f"get_vocab_size() gave {size!r}, not an int")
    base = _int(_call(tok, "get_vocab_size", with_added_tokens=False))
    added = _call(tok, "get_added_tokens_decoder")
    padding = _attr(tok, "padding")
    pad = _int(padding.get("pad_id")) if isinstance(padding, dict) else None
    return size, base, added, ({"pad_token_id": pad} if pad is not None else {})


class Read:
    """The tokenizer's ids: `size` (len), `base_size` (vocab_size, or None),
    `added` ([(id, content)] sorted, as added_tokens_decoder lists them),
    `max_id` (the largest id it makes) and `specials` ({"pad_token_id": id})."""

    def __init__(self, tok):
        self.cls = type(tok).__name__
        self.bare = is_bare(tok)
        if self.bare:
            self.size, base, added, self.specials = _bare(tok)
        else:
            self.size = int(len(tok))
            base = _int(_attr(tok, "vocab_size"))
            added = _attr(tok, "added_tokens_decoder")
            self.specials = {name: v for name, v in ((n, _int(_attr(tok, n))) for n in _SPECIALS) if v is not None}
        self.base_size = base if base is not None and base > 0 else None
        self.added = []
        if isinstance(added, dict):
            self.added = sorted((i, str(getattr(t, "content", t))) for i, t in added.items() if _int(i) is not None)
        self.has_added_list = isinstance(added, dict)
        self.max_id = max([self.size - 1] + [i for i, _ in self.added])

    def added_count(self):
        """Tokens past the base vocabulary, or None when the tokenizer says
        neither its added tokens nor its base."""
        if self.has_added_list and self.base_size is not None:
            return len([i for i, _ in self.added if i >= self.base_size])
        if self.base_size is not None and self.base_size <= self.size:
            return self.size - self.base_size
        return None

    def facts(self):
        """The cause engine's facts (catalog/causes.toml): tok_len is
        len(tokenizer) (a bare Tokenizer's size with its added tokens), what
        the resize fix gives."""
        out = {"tok_len": self.size, "tok_bare": int(self.bare)}
        n = self.added_count()
        if n is not None:
            out["tok_added"] = n
        if "pad_token_id" in self.specials:
            out["pad_id"] = self.specials["pad_token_id"]
        return out

"""Model <-> tokenizer, judged on the live objects: the shapes come from the
modules (``get_input_embeddings()``, the position and token-type tables, the
classifier and output heads), so a model edited in memory is judged as it is.
Each mismatch is the finding `devassert check` gives for the same mismatch in
a model directory: the same rule, cause and fix.
"""

from .._findings import tokenizer as _tokenizer
from .._findings.findings import CROSS_ENTROPY, EMBEDDING, cause, finding, index_bound

# Module names (last component) of learned position tables.
_POSITION_NAMES = ("position_embeddings", "wpe", "embed_positions", "pos_embed", "position_embedding")
_TYPE_NAMES = ("token_type_embeddings",)
_CLASSIFIER_NAMES = ("classifier", "score", "classification_head")
# transformers' "no limit" for model_max_length is int(1e30).
_NO_LIMIT = 10**20
_CONFIG_SPECIALS = ("pad_token_id", "bos_token_id", "eos_token_id", "decoder_start_token_id")


def _rows(module):
    """Rows of an embedding table or output features of a linear head."""
    for attr in ("num_embeddings", "out_features"):
        v = getattr(module, attr, None)
        if isinstance(v, int):
            return v
    w = getattr(module, "weight", None)
    shape = getattr(w, "shape", None)
    return int(shape[0]) if shape is not None and len(shape) == 2 else None


def find_model(obj):
    """The module that owns the input embeddings: `obj` itself, or the first
    submodule with `get_input_embeddings` (an HF model inside a LightningModule)."""
    import torch

    if not isinstance(obj, torch.nn.Module):
        raise TypeError(f"devassert.preflight: model must be a torch.nn.Module, got {type(obj).__name__}")
    for m in obj.modules():
        if callable(getattr(m, "get_input_embeddings", None)):
            try:
                if m.get_input_embeddings() is not None:
                    return m
            except NotImplementedError:
                continue
    return obj


class ModelFacts:
    """What the live modules say: table sizes and where each came from."""

    def __init__(self, model):
        import torch

        self.model = find_model(model)
        names = {id(m): n for n, m in self.model.named_modules()}
        self.embedding = None
        get = getattr(self.model, "get_input_embeddings", None)
        try:
            self.embedding = get() if callable(get) else None
        except NotImplementedError:
            self.embedding = None
        if self.embedding is None:  # a plain model: its first embedding table
            self.embedding = next((m for m in self.model.modules() if isinstance(m, torch.nn.Embedding)), None)
        self.embedding_rows = _rows(self.embedding) if self.embedding is not None else None
        self.embedding_from = names.get(id(self.embedding), "get_input_embeddings()")
        self.positions = []  # (name, rows, offset)
        self.types = None  # (name, rows)
        self.classifier = None  # (name, rows)
        for name, m in self.model.named_modules():
            last = name.rsplit(".", 1)[-1]
            if isinstance(m, torch.nn.Embedding) and last in _POSITION_NAMES:
                self.positions.append((name, m.num_embeddings, _position_offset(m)))
            elif isinstance(m, torch.nn.Embedding) and last in _TYPE_NAMES and self.types is None:
                self.types = (name, m.num_embeddings)
            elif last in _CLASSIFIER_NAMES and self.classifier is None:
                head = m if isinstance(m, torch.nn.Linear) else getattr(m, "out_proj", None)
                if isinstance(head, torch.nn.Linear):
                    self.classifier = (name if head is m else name + ".out_proj", head.out_features)
        self.output_head = None  # (name, rows, tied)
        get_out = getattr(self.model, "get_output_embeddings", None)
        try:
            out = get_out() if callable(get_out) else None
        except NotImplementedError:
            out = None
        if out is not None and _rows(out) is not None:
            tied = self.embedding is not None and getattr(out, "weight", None) is getattr(self.embedding, "weight", 0)
            self.output_head = (names.get(id(out), "get_output_embeddings()"), _rows(out), tied)
        self.config = getattr(self.model, "config", None)

    @property
    def usable_positions(self):
        """(usable rows, from) of the tightest position table, or None
        (rotary / relative positions have no table to run past)."""
        if not self.positions:
            return None
        name, rows, offset = min(self.positions, key=lambda p: p[1] - p[2])
        how = f"{name}: {rows} rows" + (f" less an offset of {offset}" if offset else "")
        return rows - offset, how

    def num_labels(self):
        """(labels the config names, field) or None."""
        c = self.config
        if c is None:
            return None
        id2label = getattr(c, "id2label", None)
        if isinstance(id2label, dict) and id2label:
            return len(id2label), "id2label"
        n = getattr(c, "num_labels", None)
        return (n, "num_labels") if isinstance(n, int) else None

    def label_bound(self):
        """(classes, from, is_lm) labels are checked against: the classifier's
        rows, else the language-model head's (labels are token ids), or None."""
        if self.classifier is not None:
            return self.classifier[1], self.classifier[0], False
        if self.output_head is not None:
            return self.output_head[1], self.output_head[0], True
        return None

    def summary(self):
        usable = self.usable_positions
        return {
            "class": type(self.model).__name__,
            "embedding_rows": {"value": self.embedding_rows, "from": self.embedding_from} if self.embedding_rows is not None else None,
            "position_tables": [{"module": n, "rows": r, "offset": o} for n, r, o in self.positions],
            "usable_positions": {"value": usable[0], "from": usable[1]} if usable else None,
            "type_vocab_size": {"value": self.types[1], "from": self.types[0]} if self.types else None,
            "classifier": {"module": self.classifier[0], "rows": self.classifier[1]} if self.classifier else None,
            "output_head": {"module": self.output_head[0], "rows": self.output_head[1], "tied": self.output_head[2]} if self.output_head else None,
        }


def _position_offset(m):
    """Rows position ids never reach: BART/OPT keep `offset` rows in front;
    RoBERTa-style tables start at padding_idx + 1."""
    offset = getattr(m, "offset", None)
    if isinstance(offset, int):
        return offset
    pad = getattr(m, "padding_idx", None)
    return pad + 1 if isinstance(pad, int) and pad >= 0 else 0


class TokenizerFacts(_tokenizer.Read):
    """What the live tokenizer emits: its size and largest id (added tokens
    included), added tokens and special ids (read as the guard reads them),
    model_max_length, type ids of pairs."""

    def __init__(self, tok):
        super().__init__(tok)
        self.tok = tok
        mml = getattr(tok, "model_max_length", None)
        self.model_max_length = int(mml) if isinstance(mml, (int, float)) and mml < _NO_LIMIT else None
        self.max_type_id = None
        if "token_type_ids" in (getattr(tok, "model_input_names", None) or []):
            try:
                ids = tok("a", "b", return_token_type_ids=True)["token_type_ids"]
                self.max_type_id = max(ids) if ids else None
            except Exception:  # a tokenizer with no pair template
                self.max_type_id = None

    def summary(self):
        return {
            "class": self.cls,
            "size": self.size,
            "base_size": self.base_size,
            "max_id": self.max_id,
            "added_tokens": self.added_count(),
            "special_ids": dict(self.specials),
            "model_max_length": self.model_max_length,
            "max_type_id": self.max_type_id,
        }


def check(model, tok):
    """Findings for the live model and tokenizer (either may be None)."""
    out = []
    if model is not None and model.embedding_rows is not None:
        rows = model.embedding_rows
        if tok is not None:
            _vocab_vs_rows(model, tok, rows, out)
        _config_vocab(model, rows, out)
        _config_specials(model, tok, rows, out)
    if model is not None and tok is not None:
        _positions(model, tok, out)
        _token_types(model, tok, out)
        _output_head(model, tok, out)
    if model is not None:
        _classifier(model, out)
    return out


def _vocab_vs_rows(model, tok, rows, out):
    evidence = {
        "tokenizer.class": tok.cls,
        "tokenizer.size": tok.size,
        "tokenizer.base_size": tok.base_size,
        "tokenizer.max_id": tok.max_id,
        "embedding_rows": rows,
        "embedding_rows_from": model.embedding_from,
    }
    if tok.max_id >= rows:
        past = [(i, t) for i, t in tok.added if i >= rows]
        evidence["missing_rows"] = tok.max_id + 1 - rows
        specials = {k: v for k, v in tok.specials.items() if v >= rows}
        if specials:
            evidence["special_ids_past_rows"] = specials
        if past:
            evidence["added_tokens_past_rows"] = [{"id": i, "content": t} for i, t in past[:10]]
            why = (
                f"the tokenizer has {len(past)} added token(s) with ids {past[0][0]}..={tok.max_id} past the "
                f"embedding's {rows} rows: they were added without resizing the embeddings"
            )
            c = cause(EMBEDDING, "added_tokens_no_resize", why)
            values = [i for i, _ in past]
        else:
            why = f"the tokenizer's vocabulary reaches id {tok.max_id} but the embedding has {rows} rows"
            c = cause(EMBEDDING, "token_id_ge_vocab", why)
            values = [tok.max_id]
        fix = f"model.resize_token_embeddings(len(tokenizer))  # {rows} -> {tok.max_id + 1} rows"
        out.append(finding(EMBEDDING, "error", c, evidence, [fix], values[:24], tok.max_id + 1 - rows, index_bound(0, rows)))
    elif tok.max_id + 1 < rows:
        evidence["unused_rows"] = rows - tok.max_id - 1
        summary = f"the embedding has {rows} rows, {rows - tok.max_id - 1} more than the tokenizer uses (a padded vocabulary is fine)"
        out.append(finding(EMBEDDING, "note", None, evidence, summary=summary))


def _config_vocab(model, rows, out):
    v = getattr(model.config, "vocab_size", None)
    if not isinstance(v, int) or v == rows:
        return
    evidence = {"config.vocab_size": v, "embedding_rows": rows, "embedding_rows_from": model.embedding_from, "difference": v - rows}
    if v > rows:
        why = f"model.config.vocab_size = {v} but {model.embedding_from} has {rows} rows: ids in [{rows}, {v}) that the config allows reach past the table"
        out.append(finding(EMBEDDING, "error", cause(EMBEDDING, "token_id_ge_vocab", why), evidence, [f"model.resize_token_embeddings({v})"], [v - 1], None, index_bound(0, rows)))
    else:
        why = f"model.config.vocab_size = {v} but {model.embedding_from} has {rows} rows: code that takes the vocabulary size from the config builds too small a table or output"
        out.append(finding(EMBEDDING, "warning", cause(EMBEDDING, "token_id_ge_vocab", why), evidence, [f"model.config.vocab_size = {rows}"]))


def _special_values(config):
    for name in _CONFIG_SPECIALS:
        v = getattr(config, name, None)
        for x in v if isinstance(v, (list, tuple)) else [v]:
            if isinstance(x, int) and not isinstance(x, bool):
                yield name, x


def _config_specials(model, tok, rows, out):
    if model.config is None:
        return
    for name, v in _special_values(model.config):
        if 0 <= v < rows:
            continue
        hint = " (-100 is the loss's ignore_index, not a token id)" if v == -100 else " (one past the last row)" if v == rows else ""
        why = f"model.config.{name} = {v}{hint}, outside the embedding's [0, {rows})"
        tok_id = tok.specials.get(name.replace("decoder_start_token_id", "pad_token_id")) if tok is not None else None
        if tok_id is not None and 0 <= tok_id < rows:
            fix = f"model.config.{name} = {tok_id}  # the tokenizer's id for it"
        elif tok_id is not None:
            fix = f"the tokenizer's token for it is id {tok_id}, also outside [0, {rows}): model.resize_token_embeddings(len(tokenizer))"
        else:
            fix = f"set model.config.{name} to a token id below {rows} (e.g. the tokenizer's pad/eos token id)"
        evidence = {f"config.{name}": v, "embedding_rows": rows, "embedding_rows_from": model.embedding_from}
        out.append(finding(EMBEDDING, "error", cause(EMBEDDING, "pad_token_id_out_of_range", why), evidence, [fix], [v], None, index_bound(0, rows)))


def _positions(model, tok, out):
    usable = model.usable_positions
    if usable is None:
        return
    n, how = usable
    evidence = {"tokenizer.model_max_length": tok.model_max_length, "usable_positions": n, "usable_positions_from": how}
    fixes = [f"tokenizer(..., truncation=True, max_length={n})", f"tokenizer.model_max_length = {n}"]
    if tok.model_max_length is not None and tok.model_max_length > n:
        evidence["difference"] = tok.model_max_length - n
        why = f"the tokenizer allows {tok.model_max_length} tokens but the position table takes {n} positions ({how}): longer inputs index past it"
        out.append(finding(EMBEDDING, "error", cause(EMBEDDING, "seq_len_gt_max_positions", why), evidence, fixes, [tok.model_max_length - 1], None, index_bound(0, n)))
    elif tok.model_max_length is None:
        summary = f"the tokenizer sets no model_max_length; inputs longer than {n} tokens would index past the position table"
        out.append(finding(EMBEDDING, "note", None, evidence, fixes[:1], summary=summary))


def _token_types(model, tok, out):
    if model.types is None or tok.max_type_id is None or tok.max_type_id < model.types[1]:
        return
    name, rows = model.types
    why = f"the tokenizer returns token_type_ids up to {tok.max_type_id} for sequence pairs but the token type table has {rows} row(s) ({name})"
    evidence = {"tokenizer.max_type_id": tok.max_type_id, "tokenizer.class": tok.cls, "type_vocab_size": rows, "type_vocab_size_from": name}
    fixes = ["tokenizer(a, b, return_token_type_ids=False), or do not pass token_type_ids to the model", f"a model with type_vocab_size >= {tok.max_type_id + 1}"]
    out.append(finding(EMBEDDING, "warning", cause(EMBEDDING, "type_vocab_size", why), evidence, fixes, [tok.max_type_id], None, index_bound(0, rows)))


def _classifier(model, out):
    labels = model.num_labels()
    if model.classifier is None or labels is None:
        return
    name, rows = model.classifier
    n, field = labels
    if n <= rows:
        return
    why = f"model.config.{field} names {n} classes but {name} has {rows} rows: labels {rows}..{n - 1} reach past the head"
    evidence = {f"config.{field}": n, "classifier_rows": rows, "classifier_module": name, "difference": n - rows}
    fix = f"AutoModelForSequenceClassification.from_pretrained(DIR, num_labels={n}, ignore_mismatched_sizes=True)"
    out.append(finding(CROSS_ENTROPY, "error", cause(CROSS_ENTROPY, "label_ge_num_classes", why), evidence, [fix], list(range(rows, n))[:24], None, index_bound(0, rows)))


def _output_head(model, tok, out):
    if model.output_head is None or model.embedding_rows is None:
        return
    name, rows, tied = model.output_head
    if tied or rows == model.embedding_rows or tok.max_id < rows:
        return
    why = f"{name} has {rows} rows but the tokenizer emits ids up to {tok.max_id}; as language-model labels they reach past the output head"
    evidence = {"output_head_rows": rows, "output_head_module": name, "embedding_rows": model.embedding_rows, "tokenizer.max_id": tok.max_id}
    fix = "model.resize_token_embeddings(len(tokenizer))  # resizes the output head too"
    out.append(finding(CROSS_ENTROPY, "error", cause(CROSS_ENTROPY, "added_tokens_no_resize", why), evidence, [fix], [], None, index_bound(0, rows)))

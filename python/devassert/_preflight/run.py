"""`devassert.preflight`: the mismatches `check` and `scan` name, found on
the live model, tokenizer and data before the first batch."""

from . import data as _preflight_data
from . import model as _preflight_model
from .report import PreflightReport
from .steps import name as _name
from .steps import step as _step


def preflight(model=None, tokenizer=None, data=None, *, num_classes=None, ignore_index=-100, label_key="labels", max_rows=None):
    """Check a model, its tokenizer and training data against each other.

    - `model`: a torch module (a Hugging Face model, or any module holding
      one, e.g. a LightningModule); its tables are read from the modules.
    - `tokenizer`: a Hugging Face tokenizer (``len(tokenizer)``, its added and
      special tokens, ``model_max_length``, the type ids it gives pairs), or
      a bare ``tokenizers.Tokenizer`` (its vocabulary size with added
      tokens, its added tokens, its padding's pad id).
    - `data`: a ``datasets.Dataset`` (or ``DatasetDict``), a numpy array or
      tensor (token ids, or labels when only `num_classes` bounds them), a
      dict of them by column, a torch ``Dataset`` or ``DataLoader``, or a
      list of these. Columns checked: ``input_ids`` / ``decoder_input_ids``
      against the embedding (and row lengths against the positions),
      ``token_type_ids`` against the type table, `label_key` against
      `num_classes`, else the classifier head, else the language-model head,
      with `ignore_index` allowed.
    - `max_rows`: at most this many samples drawn from a torch Dataset or
      DataLoader (None: all). Arrays and ``datasets`` are read whole.

    Returns a :class:`PreflightReport`: ``.ok``, ``.findings``, ``.to_json()``.
    """
    model_facts = _preflight_model.ModelFacts(model) if model is not None else None
    tok_facts = None
    if tokenizer is not None:
        with _step(f"reading the tokenizer ({_name(tokenizer)})"):
            tok_facts = _preflight_model.TokenizerFacts(tokenizer)
    findings = _preflight_model.check(model_facts, tok_facts)
    data_summary, scans = [], []
    if data is not None:
        checked = _preflight_data.check(data, bounds(model_facts, tok_facts, num_classes, ignore_index, label_key), max_rows)
        findings += checked.findings
        data_summary, scans = checked.sources, checked.sections
    return PreflightReport(
        findings,
        model=model_facts.summary() if model_facts else None,
        tokenizer=tok_facts.summary() if tok_facts else None,
        data=data_summary,
        scans=scans,
    )


def bounds(model, tok, num_classes, ignore_index, label_key):
    """The valid ranges data is checked against, from the live objects."""
    b = _preflight_data.Bounds(ignore_index=ignore_index, label_key=label_key)
    if model is not None and model.embedding_rows is not None:
        b.vocab, b.vocab_from = model.embedding_rows, model.embedding_from
    elif tok is not None:
        b.vocab, b.vocab_from = tok.max_id + 1, "len(tokenizer)"
    if tok is not None:
        # What the cause engine weighs the data's ids against, the facts
        # the guard measures too (one story with the model's findings and
        # the guard's): len(tokenizer), its added tokens, its pad id.
        b.tokenizer_facts = tok.facts()
    if model is not None:
        usable = model.usable_positions
        b.positions = usable[0] if usable else None
        if model.types is not None:
            b.types_from, b.types = model.types
    if num_classes is not None:
        b.labels, b.labels_from = int(num_classes), "num_classes"
    elif model is not None and model.label_bound() is not None:
        b.labels, b.labels_from, b.labels_lm = model.label_bound()
    return b

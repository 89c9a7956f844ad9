"""``devassert.preflight``: the live model, tokenizer and data checked
against each other before training (`run.py`): the model's tables against
the tokenizer (`model.py`), data against the tables (`data.py`), drawn from
DataLoaders as they draw it (`loaders.py`), screened as numpy columns
(`columns.py`) and scanned by the bundled binary (`scanner.py`); the
result as text, JSON and HTML (`report.py`). Uses `_findings` only."""

"""What one call of a guarded op runs, wherever it runs (an eager wrapper in
`_guard`, a compiled region in `_compiled`): the op table (`ops.py`), each
op's check (`embedding.py`, `index.py`, `loss.py`, `values.py`), what a
violation is and how it is described (`violation.py`), raising exactly what
torch raises (`faithful.py`, `errors.py`), the async level's sync-free check
(`deferred.py`), the dataset samples a bad tensor came from (`samples.py`),
the user's line and the reports for `devassert run` (`caller.py`,
`report.py`), and one-time notes (`notes.py`)."""

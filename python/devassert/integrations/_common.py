"""What both callbacks do: preflight, log every finding, stop on an error
(unless warn_only), and hold the guard on until training ends."""

from .._checks import splits as _splits
from .._guard.level import LEVELS, guard
from .._preflight.report import PreflightError, finding_lines
from .._preflight.run import preflight

_LOG = {"error": "error", "warning": "warning", "note": "info"}


class Session:
    """One training run seen by a callback: its report and its guard."""

    def __init__(self, options):
        self.options = options
        self.report = None
        self._guard = None

    def begin(self, logger, model, tokenizer, data, who):
        o = self.options
        report = preflight(model, tokenizer, data or None, num_classes=o["num_classes"], ignore_index=o["ignore_index"], label_key=o["label_key"], max_rows=o["max_rows"])
        self.report = report
        for line in report.read_lines():
            logger.info("devassert preflight read: %s", line)
        for f in report.findings:
            getattr(logger, _LOG.get(f.get("severity"), "warning"))("devassert preflight: %s", "\n".join(finding_lines(f)))
        if report.ok:
            logger.info("devassert preflight: no error found (%s)", repr(report))
        elif not o["warn_only"]:
            raise PreflightError(report, f"devassert preflight ({who})")
        if o["guard"] not in (None, False, "off"):
            _name_splits(data)
            level = o["guard"] if isinstance(o["guard"], str) else "on"
            self._guard = guard(level, on_bad_batch=o.get("on_bad_batch"), quarantine=o.get("quarantine"), max_skips=o.get("max_skips"))
        return report

    def end(self, logger=None):
        """Put the guard back as it was before the run; say what was skipped."""
        if logger is not None and self._guard is not None:
            from .._policy import state as _policy

            if _policy.skipping:
                logger.warning("%s", _policy.summary())
        if self._guard is not None:
            self._guard.__exit__(None, None, None)
            self._guard = None
            _splits.forget()


def _name_splits(data):
    """The run's datasets by split, for the quarantine file and the findings:
    {"train_dataset": ..., "eval_dataset[a]": ..., "val": ...} names
    "train", "eval[a]", "val"."""
    for key, source in (data or {}).items():
        _splits.name(source, key.replace("_dataset", ""))


def options(warn_only, guard, num_classes, ignore_index, label_key, max_rows, on_bad_batch=None, quarantine=None, max_skips=None):
    if guard not in (None, False, True) and guard not in LEVELS:
        raise ValueError(f"DevassertCallback: guard must be one of {LEVELS} or None, got {guard!r}")
    if on_bad_batch not in (None, "raise", "skip"):
        raise ValueError(f"DevassertCallback: on_bad_batch must be 'raise' or 'skip', got {on_bad_batch!r}")
    return {
        "warn_only": warn_only,
        "guard": guard,
        "num_classes": num_classes,
        "ignore_index": ignore_index,
        "label_key": label_key,
        "max_rows": max_rows,
        "on_bad_batch": on_bad_batch,
        "quarantine": quarantine,
        "max_skips": max_skips,
    }


def tokenizer_of(obj):
    """A tokenizer, or the tokenizer a processor holds."""
    if obj is None:
        return None
    if callable(getattr(obj, "convert_tokens_to_ids", None)) and hasattr(obj, "__len__"):
        return obj
    return tokenizer_of(getattr(obj, "tokenizer", None)) if getattr(obj, "tokenizer", None) is not obj else None

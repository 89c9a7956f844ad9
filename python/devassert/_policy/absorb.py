"""A bad value at a guarded op in training, under ``on_bad_batch="skip"``.

The op runs on values made safe (what the async level does: `found.replace`
puts a valid value where the mask is set), the finding is kept and the
samples it names go to the quarantine file, and the step is marked bad: the
optimizer step will change nothing (`step.py`). Outside training (no grad:
evaluation, inference) and in a DataLoader worker there is no step to skip,
so the guard raises as under "raise".
"""

import os
import time

import torch

from .._checks import caller as _caller
from .._checks import faithful as _faithful
from .._checks import report as _report
from .._checks import samples as _samples
from . import state as _state
from . import step as _step

# index_put's indices: at most this many bad arguments are made safe in turn.
_MAX_ARGUMENTS = 8


def applies():
    """Whether a violation now is absorbed: the policy is "skip" and a
    training step is being computed. Not in a DataLoader worker: its process
    takes no optimizer step, so nothing would skip the batch it makes."""
    return _state.skipping and torch.is_grad_enabled() and not _in_worker()


def _in_worker():
    try:
        from torch.utils.data import get_worker_info

        return get_worker_info() is not None
    except Exception:  # noqa: BLE001 - no data package: no worker
        return False


def run(original, check, args, kwargs, found, caller, strict):
    """The op of `found`, run on safe values; the finding kept. Raises as under
    "raise" when no valid value exists, or the op fails whatever the values are."""
    error = None if found.cpu_undefined else _faithful._attempt(original, args, kwargs)
    if _faithful._fails_anyway(original, args, kwargs, found, error):
        return _caller.call(caller, original, args, kwargs)  # the op's own shape error
    safe = _made_safe(check, args, kwargs, found, strict)
    if safe is None:
        _faithful.stop(original, check, args, kwargs, found)
        return _caller.call(caller, original, args, kwargs)
    exc = _faithful.build(found, error, _report.caller_frames())
    keep(exc, rows=_bad_rows(found, exc.finding))
    return _caller.call(caller, original, *safe)


def made_safe(check, args, kwargs, found):
    """(args, kwargs) with every bad argument's bad values made valid, or None."""
    return _made_safe(check, args, kwargs, found, True)


def keep_found(original, args, kwargs, found, frames):
    """Keep the finding of `found` (its op will run on values made safe by the
    caller: a compiled region's boundary), located at `frames`."""
    error = None if found.cpu_undefined else _faithful._attempt(original, args, kwargs)
    exc = _faithful.build(found, error, frames)
    keep(exc, rows=_bad_rows(found, exc.finding))


def _bad_rows(found, finding):
    """(bad rows, rows) of the batch when its rows are dataset samples (the
    guard mapped them to the batch for certain), else None."""
    t = found.tensor
    if not finding.get("samples_certain") or t.dim() == 0 or t.size(0) < 2:
        return None
    try:
        return len(_samples._rows(found, cap=t.size(0))), t.size(0)
    except Exception:  # noqa: BLE001 - the count is a safeguard, never a new failure
        return None


def _made_safe(check, args, kwargs, found, strict):
    """(args, kwargs) with every bad argument's bad values made valid, or None."""
    for _ in range(_MAX_ARGUMENTS):
        if found.replace is None:
            return None
        safe = found.replace(args, kwargs, found)
        if safe is None:
            return None
        args, kwargs = safe
        found = check.before(args, kwargs, strict)
        if found is None:
            return args, kwargs
    return None


def keep(exc, emitted=False, rows=None):
    """Record the guard exception `exc` (its op already ran on safe values):
    the report (unless `emitted` already), the quarantine file, the bad mark.
    `rows`: (bad, all) rows of its batch; most of them bad ends skipping at
    the step (a bug in the code, not bad samples)."""
    finding = exc.finding
    finding["evidence"]["skipped"] = True
    exc.args = (exc.args[0] + "\n  on_bad_batch=skip: the op ran on these values made valid; this step's update is skipped",) + tuple(exc.args[1:])
    if not emitted:
        _report.emit(finding)
    _state.mark(finding, exc)
    if rows is not None and 2 * rows[0] > rows[1]:
        _state.fatal = (
            f"{rows[0]} of the {rows[1]} samples of this batch hold bad values: "
            "most of a batch bad is more likely a bug in the code (or the data's preprocessing) than bad samples"
        )
    rank = _report.rank()
    base = {
        "split": finding["evidence"].get("split") or "unknown",
        "rank": rank,
        "pid": os.getpid(),
        "step": _step.current_step(),
        "op": finding["evidence"].get("op"),
        "argument": finding["evidence"].get("argument"),
        "rule": finding.get("rule"),
        "values": finding.get("values"),
        "bound": finding.get("bound"),
        "location": finding.get("location"),
        "certain": bool(finding.get("samples_certain")),
        "time": round(time.time(), 3),
        "message": str(exc.args[0]),
    }
    samples = finding.get("samples") or [{"dataset_index": None, "row": None}]
    for s in samples:
        _state.quarantine_line({"dataset_index": s.get("dataset_index"), "row": s.get("row"), **base})


def sink(exc):
    """The async level's later report of a violation (its op already ran on
    safe values): kept instead of raised when the policy applies."""
    if not _state.skipping:
        return False
    keep(exc, emitted=True)
    return True

"""The policy's settings and what it met; the summary at exit.

A violation marks the step bad (`mark`); the optimizer step consumes the mark
(`step.py`). One counter of bad marks for the process, and for each optimizer
the count it has consumed: with several optimizers (a GAN) each skips the step
once, and with gradient accumulation the mark waits for the next step.
"""

import atexit
import json
import os
import sys
import threading

POLICIES = ("raise", "skip")
DEFAULT_MAX_SKIPS = 10

skipping = False  # read by the wrappers on the violation path only
path = None  # the quarantine file, or None
max_skips = DEFAULT_MAX_SKIPS

_lock = threading.Lock()
marks = 0  # violations met in training, ever
findings = []  # (finding, exception) of the marks not yet consumed by any decision
skipped_steps = 0  # optimizer steps decided bad (every rank agrees on this count)
steps = 0  # optimizer steps decided
samples = []  # dataset indices quarantined (this rank)
fatal = None  # why skipping must end at the next step (a batch mostly bad), or None
_exit_hooked = False
last_skipped = {}  # id(optimizer) -> whether its last step was skipped (read by accelerated.py)
_held = threading.local()  # .verdict: what the engine step running in this thread decided


def configure(on_bad_batch, quarantine, max_skips_):
    """Set the policy (``guard()``'s keywords; None: the environment's)."""
    global skipping, path, max_skips
    # A guard() without the keywords (a nested level change, the pytest
    # plugin) keeps the policy set before, unless the environment names one.
    if on_bad_batch is None:
        on_bad_batch = os.environ.get("DEVASSERT_ON_BAD_BATCH", "").strip().lower() or current()
    if on_bad_batch not in POLICIES:
        raise ValueError(f"devassert.guard: on_bad_batch must be one of {POLICIES}, got {on_bad_batch!r}")
    if quarantine is None:
        quarantine = os.environ.get("DEVASSERT_QUARANTINE") or path
    if max_skips_ is None:
        raw = os.environ.get("DEVASSERT_MAX_SKIPS", "").strip()
        try:
            max_skips_ = int(raw) if raw else max_skips
        except ValueError:
            raise ValueError(f"DEVASSERT_MAX_SKIPS must be a whole number, got {raw!r}") from None
    if isinstance(max_skips_, bool) or not isinstance(max_skips_, int) or max_skips_ < 0:
        raise ValueError(f"devassert.guard: max_skips must be a whole number >= 0, got {max_skips_!r}")
    skipping = on_bad_batch == "skip"
    path = os.fspath(quarantine) if quarantine is not None else None
    max_skips = max_skips_
    if skipping:
        _hook_exit()


def hold(verdict):
    """An engine's step (`engines.py`) decided: the torch optimizer steps it
    runs take `verdict` (True: skip) without deciding again; None: it ended."""
    _held.verdict = verdict


def held():
    """The verdict of the engine step running in this thread, or None."""
    return getattr(_held, "verdict", None)


def current():
    return "skip" if skipping else "raise"


def mark(finding, exc):
    """A violation in training: the next optimizer step is bad."""
    global marks
    with _lock:
        marks += 1
        findings.append((finding, exc))
        for s in finding.get("samples") or ():
            i = s.get("dataset_index")
            if i is not None and i not in samples:
                samples.append(i)


def reset():
    """Forget what was met (tests, and a new ``guard(on_bad_batch=...)``)."""
    global marks, skipped_steps, steps, fatal
    with _lock:
        marks = skipped_steps = steps = 0
        fatal = None
        findings.clear()
        samples.clear()


def summary():
    """One line: how many steps were skipped, and which samples, on this rank."""
    rank = os.environ.get("RANK")
    where = f" on rank {rank}" if rank is not None else ""
    shown = ", ".join(str(i) for i in samples[:20]) + (", ..." if len(samples) > 20 else "")
    which = f"; samples quarantined here: dataset indices {shown}" if samples else ""
    to = f" (in {path})" if path and samples else ""
    return f"devassert: skipped {skipped_steps} of {steps} optimizer steps{where} (on_bad_batch=skip, max_skips={max_skips}){which}{to}"


def _hook_exit():
    global _exit_hooked
    if not _exit_hooked:
        _exit_hooked = True
        atexit.register(_at_exit)


def _at_exit():
    if skipping and (steps or skipped_steps):
        try:
            sys.stderr.write(summary() + "\n")
        except Exception:  # noqa: BLE001 - a closed stderr at exit
            pass


def quarantine_line(record):
    """Append one JSON line to the quarantine file; never raises (the run goes on)."""
    if not path:
        return
    try:
        with _lock, open(path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(record, allow_nan=False, default=str) + "\n")
    except (OSError, ValueError, TypeError) as e:
        try:
            sys.stderr.write(f"devassert: could not append to the quarantine file {path}: {e}\n")
        except Exception:  # noqa: BLE001
            pass

"""Raising exactly what torch raises, with the guard's details added.

The exception type and torch's own message come from running the op on CPU
copies of the arguments (on CPU tensors the op itself already raised them), so
``except IndexError`` and ``assertRaisesRegex`` keep working. Whether the bad
values are what the op objects to is decided by running it once more with
every bad value replaced by a valid one: if it still fails the same way, a
shape or dtype check failed first, and that error is left to the op. On
large arguments that repeat first runs on meta tensors; when its outputs
would be large, meta's answer stands (a failing op must not cost what the valid one would). Copies
keep expanded dimensions expanded, so a view costs what its storage costs.
"""

import os
import warnings

import torch

from . import plain as _plain
from . import report as _report
from . import samples as _samples
from . import violation as _violation
from .errors import DeviceAssertPrevented, prevented_class as _prevented_class

# Tensors larger than this are not copied to CPU for the repeat: an
# uninitialised stand-in of the same shape and dtype takes their place (only
# the guarded argument's values matter, and it is never that large).
_COPY_LIMIT = 1 << 30

# A repeat with valid values on arguments (as views) larger than this runs on
# meta tensors first, and only there when its outputs would be this large too:
# a failing op must not cost what the valid one would (x[idx.expand(2**31)]).
# Meta is not the default: its first use imports torch's meta registrations
# (about 0.4 s).
_RERUN_LIMIT = 64 << 20


def _on_cpu(x):
    if isinstance(x, torch.Tensor):
        return _violation.cpu_view(x, _COPY_LIMIT)
    if type(x) in (list, tuple):
        return type(x)(_on_cpu(v) for v in x)
    return x


def _on_meta(x):
    if isinstance(x, torch.Tensor):
        return torch.empty_strided(x.shape, x.stride(), dtype=x.dtype, device="meta")
    if type(x) in (list, tuple):
        return type(x)(_on_meta(v) for v in x)
    return x


def _nbytes(x):
    """Bytes of the tensors in `x` as views (their logical size)."""
    if isinstance(x, torch.Tensor):
        return x.numel() * x.element_size()
    if isinstance(x, (list, tuple)):
        return sum(_nbytes(v) for v in x)
    return 0


def _on_meta_run(original, args, kwargs):
    """The bytes of what `original` returns on meta copies of the arguments
    (shapes and dtypes, no values), or the exception it raised there."""
    try:
        a = tuple(_on_meta(v) for v in args)
        k = {n: _on_meta(v) for n, v in kwargs.items()}
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return _nbytes(original(*a, **k))
    except Exception as e:  # noqa: BLE001 - an op meta cannot run is an answer too
        return e


def _attempt(original, args, kwargs):
    """The exception `original` raises on CPU copies of the arguments, or None.
    Returned without its traceback: that holds this frame and, through it,
    every caller's frame with the user's model and batch, and the caller
    keeps the exception in a local, a cycle only the garbage collector would
    free (a DDP model kept so is torn down during interpreter exit, where
    gloo aborts); nothing reads that traceback."""
    try:
        a = tuple(_on_cpu(v) for v in args)
        k = {n: _on_cpu(v) for n, v in kwargs.items()}
    except Exception as e:  # noqa: BLE001 - a copy that fails is an answer too
        return e.with_traceback(None)
    try:
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            original(*a, **k)
    except Exception as e:  # noqa: BLE001
        return e.with_traceback(None)
    return None


def _same(a, b):
    return a is not None and b is not None and type(a) is type(b) and str(a) == str(b)


def _fails_anyway(original, args, kwargs, found, error):
    """True when the op fails with `error` whatever the bad values are (a shape
    or dtype check), so the op's own error must win."""
    if error is None or found.replace is None:
        return False
    safe = found.replace(args, kwargs, found)
    if safe is None:
        return True  # no valid value exists: the empty dimension is the problem
    if _nbytes(safe[0]) + _nbytes(list(safe[1].values())) > _RERUN_LIMIT:
        meta = _on_meta_run(original, *safe)
        if isinstance(meta, int):
            if meta > _RERUN_LIMIT:
                return False  # shapes and dtypes pass: the values are the problem
        else:
            # Meta's shape error stands; an op it cannot run (no meta kernel,
            # a data-dependent shape) leaves the values to blame.
            return not isinstance(meta, NotImplementedError)
    return _same(_attempt(original, *safe), error)


def stop(original, check, args, kwargs, found, frames=None, views=None):
    """A check found bad values before the op ran (an accelerator tensor, or
    strict): raise what the op raises on CPU, or return and let the op raise
    its own shape error. `frames`: where the op is (a compiled region's node:
    the user's line dynamo recorded); the calling frames when None. `views`:
    what the plain arguments stand for, when the op got tensor subclasses."""
    # Values the CPU kernel does not check: its answer on them varies (with
    # the thread count, memory contents), so the guard's own message stands alone.
    error = None if found.cpu_undefined else _attempt(original, args, kwargs)
    if _fails_anyway(original, args, kwargs, found, error):
        return
    _raise(found, error, frames, views)


def explain(original, check, args, kwargs, error, strict):
    """The op raised `error`: when bad values caused it, raise it again with
    the details; otherwise return (the caller re-raises it unchanged)."""
    if isinstance(error, DeviceAssertPrevented):
        return
    try:
        found, args, kwargs, views = _plain.after(check, args, kwargs, strict)
        if found is None or _fails_anyway(original, args, kwargs, found, error):
            return
    except Exception:  # noqa: BLE001 - never replace torch's error by the guard's
        return
    _raise(found, error, None, views)


def _raise(found, error, frames=None, views=None):
    exc = build(found, error, _report.caller_frames() if frames is None else frames, views=views)
    _report.emit(exc.finding)
    try:
        raise exc from None
    finally:
        # Its traceback holds this frame: a local naming it would be a cycle
        # that keeps the user's frames (a DataLoader iterator, its workers)
        # alive until the garbage collector runs.
        del exc


def build(found, error, frames, samples=None, views=None):
    """The exception for `found`: a DeviceAssertPrevented subclass of the type
    of torch's `error` (None: the RuntimeError an unchecked op dies of on an
    accelerator), located at `frames`; `samples` as _samples.find gives them
    (found here when None); `views` (_plain.Views): what the checked plain
    tensor stands for when the op got a tensor subclass."""
    location, inner = _report.locate(frames)
    desc = _violation.describe(found)
    subclass = None
    if views is not None:
        desc = found.desc = views.locate(found, desc)
        subclass = views.evidence(found)
    causes, fixes = found.explain(desc, frames)
    found_samples = _samples.find(found) if samples is None else samples
    samples, certain, worker = found_samples
    note = getattr(found_samples, "note", None)
    evidence = {"pid": os.getpid(), "raise_id": _report.next_raise_id()}
    rank = _report.rank()
    if subclass is not None:
        evidence["tensor"] = subclass
        if rank is None:
            rank = subclass.get("rank")
    if rank is not None:
        evidence["rank"] = rank
        evidence["ranks"] = [rank]
    if worker is not None:
        evidence["worker"] = worker
    if _report.inherited is not None:
        evidence["guard_inherited"] = dict(_report.inherited)
    if samples and not certain and note:
        evidence["samples_note"] = note
    split = getattr(found_samples, "split", None)
    if split is not None:
        evidence["split"] = split
    if inner is not None and inner != location:
        evidence["inner_frame"] = inner
    where = {"location": location, "evidence": evidence, "samples": samples, "samples_certain": certain}
    finding = _violation.finding(found, desc, causes, fixes, where)
    text = _violation.message(found, desc, finding, str(error) if error is not None else "")
    # On an accelerator an unchecked op dies of a device assert: a RuntimeError.
    base = type(error) if error is not None else RuntimeError
    cls = _prevented_class(base)
    if cls is not None:
        exc = cls(text)
    else:
        # A type we have no subclass for: torch's own exception, annotated.
        exc = error
        exc.args = (text,)
    exc.finding = finding
    exc.rule = found.rule
    return exc

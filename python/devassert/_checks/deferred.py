"""The sync-free check (level "async", and every check inside a CUDA graph capture).

The exact path asks the device whether an index is bad (one sync) before the
op launches. Here nothing waits for the device on the happy path:
- the check runs with `_violation.deferring` set, so a range check returns its
  Found with the device mask of bad elements, never asking if it is empty;
- the op is launched on arguments made safe: `found.replace` puts a valid
  value (0, or the low bound) where the mask is set (`torch.where`, on the
  device); on valid inputs that is the user's own values, so results are
  bit-identical. Not when a replaced argument shares memory with a tensor the
  op writes: torch rejects that overlap only if it sees the user's own
  tensors, so the exact path runs;
- the count of bad elements is computed on the device and copied
  `non_blocking` into pinned host memory behind a CUDA event; the launch line
  is noted (code objects and line numbers up to the user's frame: frames
  themselves change);
- later guarded ops and the exit poll the events (`event.query()`: never
  blocking; at exit they are waited for) and raise DeviceAssertPrevented for a
  nonzero count: the launch line, the values, the bound, and that the op ran on
  substituted values.
The happy path costs a handful of kernel launches (the mask, the substitution,
the count, the copy), so the values are described only on the violation path,
from the checked tensor and the mask kept with the entry (exact while the
tensor is unchanged since the launch). The entry keeps no other tensor of the
user alive: a loss's logits can be most of the memory a training step has;
torch's own message is reproduced with same-shaped stand-ins for them.
Inside a capture no event is recorded (the graph replays the copy): the
count's host memory is read when the guard is next called outside it. It is
one aligned int64, so a read while a replay runs sees the last count or the
new one, never a torn value; a stale zero is caught at a later poll.

Checks that need a sync (BCE / multinomial values, embedding_bag offsets,
CTC) take the exact path, or are skipped with a note inside a capture.

`FAKE_DEVICE` (tests, benchmarks) runs this path on CPU tensors: a plain copy
stands for the pinned copy, and the "event" is done at once.
"""

import atexit
import collections
import sys
import threading

import torch

from . import caller as _caller
from . import faithful as _faithful
from . import notes as _notes
from . import report as _report
from . import violation as _violation

FAKE_DEVICE = False

_queue = collections.deque()  # launched, not yet polled: oldest first
_captured = []  # entries recorded inside a CUDA graph capture: read at every poll
armed = False  # True while there is anything to poll (read by the wrappers)
# Other sync-free queues polled with this one (compiled regions' counters,
# `_compiled/inside.py`): poll(wait) raises or returns whether any is left.
pollers = []
_exit_hooked = False
# ``on_bad_batch="skip"`` (`_policy/absorb.py`): given a finding's exception,
# returns True when it kept it instead (its op already ran on safe values).
sink = None


class _Frame:
    """What `_report.where` reads of a frame, kept at launch."""

    __slots__ = ("f_code", "f_lineno")

    def __init__(self, code, lineno):
        self.f_code = code
        self.f_lineno = lineno


_kinds = {}  # code object -> 0 torch/devassert, 1 installed library, 2 user code


def _launch_frames():
    """The calling frames outside torch and devassert, innermost first, up to
    and including the user's innermost frame: what `_report.locate` needs."""
    out = []
    f = sys._getframe(2)
    while f is not None:
        code = f.f_code
        kind = _kinds.get(code)
        if kind is None:
            name = code.co_filename
            kind = 0 if _report._is_internal(name) else 1 if _report._is_library(name) else 2
            if len(_kinds) > 50000:
                _kinds.clear()
            _kinds[code] = kind
        if kind:
            out.append(_Frame(code, f.f_lineno))
            if kind == 2:
                break
        f = f.f_back
    return out


def on_device(t):
    """Whether `t` is a tensor this path handles (a CUDA tensor; CPU when faked)."""
    if not isinstance(t, torch.Tensor):
        return False
    return t.is_cuda or (FAKE_DEVICE and t.is_cpu)


_REAL_PROBE = torch.cuda.is_current_stream_capturing


def capturing():
    """Whether the current CUDA stream is capturing a graph: asked only when a
    CUDA context exists (or a test replaced the probe), so CPU runs pay nothing."""
    probe = torch.cuda.is_current_stream_capturing
    if probe is _REAL_PROBE and not torch.cuda.is_initialized():
        return False
    try:
        return bool(probe())
    except Exception:  # noqa: BLE001 - no CUDA driver: nothing captures
        return False


class _Entry:
    __slots__ = ("captured", "check", "event", "found", "frames", "host", "original", "reported", "spec", "strict", "valid", "version")

    def done(self, wait):
        if self.event is None:
            return True
        if wait:
            self.event.synchronize()
            return True
        return self.event.query()


class _Standin:
    """The shape and dtype of a tensor the entry does not keep alive."""

    __slots__ = ("shape", "dtype")

    def __init__(self, t):
        self.shape, self.dtype = tuple(t.shape), t.dtype


def _spec(x, keep):
    """`x` with every tensor but the index-like ones (integer or bool: the
    values the op objects to) replaced by a `_Standin`."""
    if isinstance(x, torch.Tensor):
        return x if keep(x) else _Standin(x)
    if type(x) in (list, tuple):
        return type(x)(_spec(v, keep) for v in x)
    return x


def _index_like(t):
    return not t.is_floating_point() and not t.is_complex()


def _materialize(x):
    """A `_spec` made whole again, stand-ins as uninitialised CPU tensors (only
    the index values matter for the message torch gives)."""
    if isinstance(x, _Standin):
        return torch.empty(x.shape, dtype=x.dtype)
    if type(x) in (list, tuple):
        return type(x)(_materialize(v) for v in x)
    return x


def _count(found):
    """The number of bad elements as an int64 device tensor; no host sync."""
    return found.mask.sum(dtype=torch.int64)


def _enqueue(found, frames, check, original, args, kwargs, strict, valid, capture):
    """Queue the entry that polls `found`'s count; returns it."""
    global armed
    count = _count(found)
    e = _Entry()
    e.found, e.frames, e.check, e.original, e.strict, e.valid = found, frames, check, original, strict, valid
    e.version = found.tensor._version
    e.captured = capture
    e.reported = False
    e.event = None
    if count.is_cpu:
        e.host = count
    else:
        e.host = torch.empty((), dtype=torch.int64, pin_memory=True)
        e.host.copy_(count, non_blocking=True)
        if not capture:
            e.event = torch.cuda.Event()
            e.event.record(torch.cuda.current_stream(count.device))
    # The graph may replay long after a capture: keep nothing of its arguments.
    e.spec = None if capture else (_spec(args, _index_like), _spec(kwargs, _index_like))
    if capture:
        _captured.append(e)
    else:
        _queue.append(e)
    armed = True
    _hook_exit()
    return e


def _forget(entries):
    """Unqueue entries whose op raised before it launched: torch's error stands."""
    global armed
    for e in entries:
        for queue in (_queue, _captured):
            try:
                queue.remove(e)
            except ValueError:
                pass
    armed = bool(_queue or _captured)


def _written(original, args, kwargs):
    """The tensors the op writes: `out=`, and self of an in-place op."""
    out = kwargs.get("out")
    written = list(out) if isinstance(out, (list, tuple)) else [out]
    name = getattr(original, "__name__", "")
    if args and (name == "__setitem__" or (name.endswith("_") and not name.endswith("__"))):
        written.append(args[0])
    return [t for t in written if isinstance(t, torch.Tensor)]


def _aliased(founds, written):
    """Whether an argument about to be replaced shares memory with a tensor the
    op writes: torch rejects that overlap, and a replaced copy would hide it."""
    return any(_overlaps(f.tensor, w) for f in founds if isinstance(f.tensor, torch.Tensor) for w in written)


def _overlaps(a, b):
    try:
        return bool(torch._C._overlaps(a, b))
    except Exception:  # noqa: BLE001 - a private API: compare storages instead
        try:
            return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()
        except Exception:  # noqa: BLE001 - no storage to compare: the exact path decides
            return True


def call(original, check, args, kwargs, strict, capture, caller):
    """Run the op through the sync-free path. Returns (True, result), or
    (False, None) when the exact path must run instead (a check that needs a
    sync, outside a capture). The op is launched from `caller`'s line."""
    if not check.deferrable:
        if capture:
            _notes.capture_skipped(getattr(original, "__name__", "an op"))
            return True, _caller.call(caller, original, args, kwargs)
        return False, None
    try:
        founds = find_all(check, args, kwargs, strict)
    except Exception:  # noqa: BLE001 - fake/meta/functorch tensors go unchecked
        founds = []
    if not founds:
        return True, _caller.call(caller, original, args, kwargs)
    written = _written(original, args, kwargs)
    if written and _aliased(founds, written):
        # The exact path runs the op on the user's own tensors: torch's
        # overlap check sees them (rare: it syncs once).
        if capture:
            _notes.capture_skipped(founds[0].op)
            return True, _caller.call(caller, original, args, kwargs)
        return False, None
    safe_args, safe_kwargs = args, kwargs
    for found in founds:
        safe = found.replace(safe_args, safe_kwargs, found) if found.replace is not None else None
        if safe is None:
            # No valid value exists (an empty dimension): the exact path
            # raises what torch raises; inside a capture, no check.
            if capture:
                _notes.capture_skipped(found.op)
                return True, _caller.call(caller, original, args, kwargs)
            return False, None
        safe_args, safe_kwargs = safe
    entries = []
    try:
        frames = _launch_frames()
        for found in founds:
            entries.append(_enqueue(found, frames, check, original, args, kwargs, strict, _valid_of(found), capture))
    except Exception:  # noqa: BLE001 - e.g. no pinned memory inside a capture
        _forget(entries)
        if capture:
            _notes.capture_skipped(founds[0].op)
            return True, _caller.call(caller, original, args, kwargs)
        return False, None
    try:
        return True, _caller.call(caller, original, safe_args, safe_kwargs)
    except Exception:
        # A shape or dtype error, raised before any launch: it is the error
        # the op gives whatever the values are, so it stands alone.
        _forget(entries)
        raise


def find_all(check, args, kwargs, strict):
    """Every Found of `check` (one per bad argument), each with its device
    mask, never asking the device whether it is empty: no host sync."""
    skip, founds = set(), []
    _violation.deferring.skip = skip
    try:
        while True:
            found = check.before(args, kwargs, strict)
            # A repeat: an index given as a list is a new tensor at every call.
            if found is None or any(f.argument == found.argument for f in founds):
                break
            founds.append(found)
            skip.add(id(found.tensor))
            skip.add(found.argument)
            if not check.multi:
                break
    finally:
        _violation.deferring.skip = None
    return founds


def _valid_of(found):
    low = found.bound.get("low") if isinstance(found.bound, dict) else None
    return 0 if not isinstance(low, int) or low <= 0 else low


# --- polling ---------------------------------------------------------------------


_busy = threading.local()  # set while polling: the report's own tensor ops poll no more


def poll(wait=False):
    """Raise for the oldest finished summary that holds a bad value. Never
    blocks unless `wait` (at exit); never touches the device while capturing."""
    if getattr(_busy, "on", False) or (not wait and capturing()):
        return
    _busy.on = True
    try:
        _poll(wait)
    finally:
        _busy.on = False


def _poll(wait):
    global armed
    while _queue:
        e = _queue[0]
        if not e.done(wait):
            break
        try:
            _queue.popleft()
        except IndexError:  # another thread took it
            break
        if _host_count(e):
            armed = bool(_queue or _captured)
            exc = _exception(e)
            if sink is not None and sink(exc):
                continue
            raise exc from None
    for e in _captured:
        if not e.reported and _host_count(e):
            e.reported = True  # each captured check is reported once
            raise _exception(e) from None
    left = False
    for other in pollers:
        left = other(wait) or left
    armed = bool(_queue or _captured) or left


def _host_count(e):
    """The bad-element count the device copied to host memory: read through
    numpy, which is a plain memory read, never a device sync."""
    return int(e.host.numpy())


def _describe(e):
    """The finding's facts, exact while the checked tensor is unchanged since
    the launch; else only the count the device gave."""
    found = e.found
    if found.tensor._version == e.version:
        return found, True
    t = found.tensor
    repeat = max(t.numel(), 1) // max(found.mask.numel(), 1)
    found.desc = {"values": [], "value_counts": [], "count": _host_count(e) * repeat, "value_min": None, "value_max": None, "locations": []}
    return found, False


def explain_tolerantly(found):
    """Make `found.explain` give no causes instead of raising: described
    after the launch, a cause that needs the values again (or, from a
    compiled region, the values themselves) is not established."""
    explain = found.explain

    def tolerant(desc, frames):
        try:
            return explain(desc, frames)
        except Exception:  # noqa: BLE001 - see above
            return [], []

    found.explain = tolerant


def _exception(e):
    found, exact = _describe(e)
    error = None
    if e.spec is not None:
        args, kwargs = (_materialize(x) for x in e.spec)
        error = _faithful._attempt(e.original, args, kwargs)
    explain_tolerantly(found)
    samples = (None, False, None)
    if exact:
        try:
            from . import samples as _samples

            samples = _samples.find(found)
        except Exception:  # noqa: BLE001
            pass
    exc = _faithful.build(found, error, e.frames, samples)
    noticed, _ = _report.locate(_report.caller_frames())
    f = exc.finding
    f["noticed_at"] = noticed if noticed != f["location"] else None
    f["evidence"]["async"] = True
    launch = f["location"]
    at = f" at {launch['file']}:{launch['line']}" if launch else ""
    note = (
        f"  async: {found.op} was launched{at} with these values replaced by {e.valid} "
        f"(checked on the device{', inside a CUDA graph' if e.captured else ''}); its results, and everything computed from them, "
        "are not to be trusted"
    )
    if not exact:
        note += "; the argument was changed in place after the launch, so only the count is known"
    exc.args = (exc.args[0] + "\n" + note,) + tuple(exc.args[1:])
    _report.emit(f)
    return exc


# --- exit ---------------------------------------------------------------------------


def _hook_exit():
    global _exit_hooked
    if not _exit_hooked:
        _exit_hooked = True
        atexit.register(_at_exit)


def _at_exit():
    """Wait for what is still queued, and raise for the first violation (Python
    prints it); it counts as uncaught for `devassert run`."""
    if not armed:
        return
    try:
        poll(wait=True)
    except Exception as exc:
        ids = _report._raise_ids(exc)
        if ids:
            _report._uncaught.extend(ids)
            _report._write_exit_record()
        raise


def reset():
    """Forget everything queued (tests)."""
    global armed
    _queue.clear()
    _captured.clear()
    armed = False

"""The guard's level: ``devassert.guard()`` / ``unguard()``, the levels and
``DEVASSERT_GUARD``. Importing this never imports torch: the wrappers
(`intercept.py`) are imported when a level is set."""

import os
import sys

LEVELS = ("off", "on", "async", "strict")


def env_level():
    raw = os.environ.get("DEVASSERT_GUARD", "on").strip().lower()
    if raw in ("", "1", "true", "yes"):
        return "on"
    if raw in ("0", "false", "no", "none"):
        return "off"
    return raw if raw in LEVELS else "on"


class _Guard:
    """Returned by guard(): already active; as a context manager, undone at exit."""

    def __init__(self, previous, policy=None):
        self._previous = previous
        self._policy = policy

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        from . import intercept as _intercept

        _intercept.set_level(self._previous)
        if self._policy is not None:
            from .._policy import setup as _policy

            _policy.apply(*self._policy, level=self._previous)
        return False

    def __repr__(self):
        from . import intercept as _intercept

        return f"<devassert guard level={_intercept.current_level()!r}>"


def guard(level=None, *, on_bad_batch=None, quarantine=None, max_skips=None):
    """Check every catalogued op from now on, in every thread of this process.

    `level` is "on" (default, or the DEVASSERT_GUARD variable), "async" (on
    a CUDA tensor the check runs on the device with no host sync and the op
    runs on values made safe; a violation is raised at a later guarded op or
    at exit, naming the line that launched it; on CPU tensors as "on"), "strict" (also
    ops with no device assert on current PyTorch: CTC targets equal to
    blank; and checks CPU tensors before the op, as on a GPU)
    or "off". Returns a handle; ``with devassert.guard():`` restores the
    previous state at the end of the block.

    `on_bad_batch`: "raise" (default, or DEVASSERT_ON_BAD_BATCH) or "skip": a
    violation in training runs the op on values made safe, and the next
    optimizer step changes nothing, on every rank; the samples go to the
    `quarantine` file (DEVASSERT_QUARANTINE), one JSON line each; past
    `max_skips` skipped steps (DEVASSERT_MAX_SKIPS, default 10) it raises.
    See `_policy/` and docs/skip.md.
    """
    if level is None:
        level = env_level()
    if level is True:
        level = "on"
    if level is False:
        level = "off"
    if level not in LEVELS:
        raise ValueError(f"devassert.guard: level must be one of {LEVELS}, got {level!r}")
    _intercept = _wrappers("guard")
    from .._policy import state as _state
    from .._policy import setup as _policy

    previous = _intercept.current_level()
    policy = (_state.current(), _state.path, _state.max_skips)
    _policy.apply(on_bad_batch, quarantine, max_skips, level)
    fresh = not _intercept._installed
    _intercept.set_level(level)
    if fresh and _intercept._installed:
        # Turned on after the program's imports: what they bound of torch's
        # own functions is not checked; say so, as pytest's plugin does.
        from . import captured as _captured

        _captured.note(_intercept._installed)
    return _Guard(previous, policy)


def unguard():
    """Stop checking (same as guard("off"))."""
    _intercept = _wrappers("unguard")
    from .._policy import setup as _policy

    _policy.off()
    _intercept.set_level("off")


def _wrappers(caller):
    """The wrappers' module, which imports torch; without torch, an
    ImportError that says so in one sentence instead of torch's own from
    deep inside the guard."""
    try:
        import torch  # noqa: F401
    except ModuleNotFoundError as e:
        if e.name != "torch":
            raise
        raise ModuleNotFoundError(
            f"devassert.{caller}() needs PyTorch, and torch is not installed in this Python ({sys.executable}): install torch, then call it again",
            name="torch",
        ) from None
    from . import intercept

    return intercept

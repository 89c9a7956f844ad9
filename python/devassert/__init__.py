"""devassert guard: stops PyTorch ops that would fail a CUDA device-side assert.

Before an op in the catalog runs (embedding, cross_entropy, gather, x[idx], ...)
the guard checks its index-like argument against the valid range with one small
reduction. A violation raises :class:`DeviceAssertPrevented` at the caller's
line, with the offending values, their positions and the valid range, while the
CUDA context stays healthy.

    import devassert
    devassert.guard()              # from now on, in this thread
    with devassert.guard():        # only inside the block
        ...

``DEVASSERT_GUARD=off|on|strict`` sets the level ``devassert run`` installs and
the default of ``guard()``. Importing this package never imports torch.
"""

import os

__all__ = ["guard", "unguard", "DeviceAssertPrevented", "LEVELS"]

LEVELS = ("off", "on", "strict")


class DeviceAssertPrevented(Exception):
    """An op was stopped before launch because an input would fail its device assert.

    Raised as a subclass of the exception the op raises on CPU for the same input
    (``IndexError`` or ``RuntimeError``), so ``except IndexError`` keeps working.
    ``finding`` holds the facts as a devassert/1 finding (a dict); ``rule`` the rule id.
    """

    finding = None
    rule = None


_CLASSES = {}


def _prevented_class(base):
    """The DeviceAssertPrevented subclass that is also a `base` (cached)."""
    cls = _CLASSES.get(base)
    if cls is None:
        if base is Exception or base is DeviceAssertPrevented:
            cls = DeviceAssertPrevented
        else:
            # A module-level name of its own keeps it picklable (DataLoader
            # workers and multiprocessing send exceptions to the parent).
            name = "DeviceAssertPrevented" + base.__name__
            cls = type(name, (DeviceAssertPrevented, base), {"__module__": "devassert"})
            globals()[name] = cls
        _CLASSES[base] = cls
    return cls


def _env_level():
    raw = os.environ.get("DEVASSERT_GUARD", "on").strip().lower()
    if raw in ("", "1", "true", "yes"):
        return "on"
    if raw in ("0", "false", "no", "none"):
        return "off"
    return raw if raw in LEVELS else "on"


class _Guard:
    """Returned by guard(): already active; as a context manager, undone at exit."""

    def __init__(self, previous):
        self._previous = previous

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        from . import _mode

        _mode.set_level(self._previous)
        return False

    def __repr__(self):
        from . import _mode

        return f"<devassert guard level={_mode.current_level()!r}>"


def guard(level=None):
    """Check every catalogued op from now on (in this thread).

    `level` is "on" (default, or the DEVASSERT_GUARD variable), "strict" (also
    ops with no device assert on current PyTorch: take_along_dim values, CTC
    targets equal to blank) or "off". Returns a handle; ``with devassert.guard():``
    restores the previous state at the end of the block.
    """
    if level is None:
        level = _env_level()
    if level is True:
        level = "on"
    if level is False:
        level = "off"
    if level not in LEVELS:
        raise ValueError(f"devassert.guard: level must be one of {LEVELS}, got {level!r}")
    from . import _mode

    previous = _mode.current_level()
    _mode.set_level(level)
    return _Guard(previous)


def unguard():
    """Stop checking (same as guard("off"))."""
    from . import _mode

    _mode.set_level("off")

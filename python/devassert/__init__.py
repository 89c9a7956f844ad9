"""devassert guard: stops PyTorch ops that would fail a CUDA device-side assert.

The guard wraps the entry points of the ops in the catalog (embedding,
cross_entropy, gather, x[idx], ...) and nothing else. On an accelerator it
checks the index-like argument against the valid range before the op launches;
on CPU, where these ops check their own inputs, it lets the op run and only
explains the error the op raises. A violation raises
:class:`DeviceAssertPrevented` at the caller's line, with torch's own message
followed by the offending values, their positions and the valid range, while
the CUDA context stays healthy.

    import devassert
    devassert.guard()              # from now on, in this process
    with devassert.guard():        # only inside the block
        ...

Before training, ``devassert.preflight(model, tokenizer, data)`` names the
mismatches between them that would fail a device assert later.

``DEVASSERT_GUARD=off|on|async|strict`` sets the level ``devassert run`` installs and
the default of ``guard()``. Importing this package never imports torch.

In IPython / Jupyter, ``%load_ext devassert`` turns the guard on in the
kernel and adds the ``%devassert`` magic (``_notebook.py``); under pytest,
``pytest --devassert`` guards every test (``pytest_plugin.py``).
"""

import os

__all__ = ["guard", "unguard", "preflight", "PreflightError", "DeviceAssertPrevented", "LEVELS"]

LEVELS = ("off", "on", "async", "strict")


class DeviceAssertPrevented(Exception):
    """An op was stopped before launch because an input would fail its device assert.

    Raised as a subclass of the exception the op raises on CPU for the same input
    (``IndexError`` or ``RuntimeError``), so ``except IndexError`` keeps working.
    ``finding`` holds the facts as a devassert/1 finding (a dict); ``rule`` the rule id.
    """

    finding = None
    rule = None

    def __reduce__(self):
        # Pickled as (class, message) plus the finding: DataLoader workers and
        # multiprocessing send exceptions to a parent that has devassert too.
        return (type(self), self.args, {"finding": self.finding, "rule": self.rule})


# One class per exception type the guarded ops raise on CPU, each a
# module-level name so that a parent process can unpickle what a worker raised.
class DeviceAssertPreventedIndexError(DeviceAssertPrevented, IndexError):
    pass


class DeviceAssertPreventedRuntimeError(DeviceAssertPrevented, RuntimeError):
    pass


class DeviceAssertPreventedValueError(DeviceAssertPrevented, ValueError):
    pass


class DeviceAssertPreventedTypeError(DeviceAssertPrevented, TypeError):
    pass


class DeviceAssertPreventedNotImplementedError(DeviceAssertPrevented, NotImplementedError):
    pass


_CLASSES = {
    IndexError: DeviceAssertPreventedIndexError,
    RuntimeError: DeviceAssertPreventedRuntimeError,
    ValueError: DeviceAssertPreventedValueError,
    TypeError: DeviceAssertPreventedTypeError,
    NotImplementedError: DeviceAssertPreventedNotImplementedError,
}


def _prevented_class(base):
    """The DeviceAssertPrevented subclass that is also a `base`, or None when
    `base` has none (the caller then raises torch's own exception, annotated)."""
    return _CLASSES.get(base)


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
        from . import _intercept

        _intercept.set_level(self._previous)
        return False

    def __repr__(self):
        from . import _intercept

        return f"<devassert guard level={_intercept.current_level()!r}>"


def guard(level=None):
    """Check every catalogued op from now on, in every thread of this process.

    `level` is "on" (default, or the DEVASSERT_GUARD variable), "async" (on
    a CUDA tensor the check runs on the device with no host sync and the op
    runs on values made safe; a violation is raised at a later guarded op or
    at exit, naming the line that launched it; on CPU tensors as "on"), "strict" (also
    ops with no device assert on current PyTorch: take_along_dim values, CTC
    targets equal to blank; and checks CPU tensors before the op, as on a GPU)
    or "off". Returns a handle; ``with devassert.guard():`` restores the
    previous state at the end of the block.
    """
    if level is None:
        level = _env_level()
    if level is True:
        level = "on"
    if level is False:
        level = "off"
    if level not in LEVELS:
        raise ValueError(f"devassert.guard: level must be one of {LEVELS}, got {level!r}")
    from . import _intercept

    previous = _intercept.current_level()
    _intercept.set_level(level)
    return _Guard(previous)


def unguard():
    """Stop checking (same as guard("off"))."""
    from . import _intercept

    _intercept.set_level("off")


def preflight(model=None, tokenizer=None, data=None, *, num_classes=None, ignore_index=-100, label_key="labels", max_rows=None):
    """Check a model, its tokenizer and data against each other before
    training: every mismatch `devassert check` and `devassert scan` would
    name, found on the live objects. Returns a report (``.ok``,
    ``.findings``, ``.to_json()``). See ``devassert._preflight.preflight``."""
    from ._preflight import preflight as run

    return run(model, tokenizer, data, num_classes=num_classes, ignore_index=ignore_index, label_key=label_key, max_rows=max_rows)


def __getattr__(name):
    # PreflightError without importing the preflight modules at `import devassert`.
    if name == "PreflightError":
        from ._preflight_report import PreflightError

        return PreflightError
    raise AttributeError(f"module 'devassert' has no attribute {name!r}")


def load_ipython_extension(ipython):
    """``%load_ext devassert``: the guard on in this kernel, and the ``%devassert`` magic."""
    from . import _notebook

    _notebook.load(ipython)


def unload_ipython_extension(ipython):
    """``%unload_ext devassert``: the guard off, the magic gone."""
    from . import _notebook

    _notebook.unload(ipython)

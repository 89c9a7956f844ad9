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
mismatches between them that would fail a device assert later. In a long
run, ``devassert.guard(on_bad_batch="skip", quarantine=PATH)`` skips a bad
batch's update on every rank instead of raising, and
``devassert.quarantine.exclude(dataset, PATH)`` leaves its samples out of the
resumed run (docs/skip.md).

``DEVASSERT_GUARD=off|on|async|strict`` sets the level ``devassert run`` installs and
the default of ``guard()``. Importing this package never imports torch.

In IPython / Jupyter, ``%load_ext devassert`` turns the guard on in the
kernel and adds the ``%devassert`` magic (``integrations/notebook.py``); under
pytest, ``pytest --devassert`` guards every test (``pytest_plugin.py``).

This module is the public API and imports the subpackages, never the other
way round: docs/python.md has the map of the package.
"""

from ._checks.errors import DeviceAssertPrevented
from ._guard.level import LEVELS, guard, unguard

# The subclasses the guard raises live here too: tracebacks name them
# `devassert.…` and pickle looks them up here (see `_checks/errors.py`).
from ._checks.errors import DeviceAssertPreventedIndexError as DeviceAssertPreventedIndexError
from ._checks.errors import DeviceAssertPreventedNotImplementedError as DeviceAssertPreventedNotImplementedError
from ._checks.errors import DeviceAssertPreventedRuntimeError as DeviceAssertPreventedRuntimeError
from ._checks.errors import DeviceAssertPreventedTypeError as DeviceAssertPreventedTypeError
from ._checks.errors import DeviceAssertPreventedValueError as DeviceAssertPreventedValueError

__all__ = ["guard", "unguard", "preflight", "PreflightError", "PreflightReadError", "DeviceAssertPrevented", "LEVELS"]


def preflight(model=None, tokenizer=None, data=None, *, num_classes=None, ignore_index=-100, label_key="labels", max_rows=None):
    """Check a model, its tokenizer and data against each other before
    training: every mismatch `devassert check` and `devassert scan` would
    name, found on the live objects. Returns a report (``.ok``,
    ``.findings``, ``.to_json()``). See ``devassert._preflight.run.preflight``."""
    from ._preflight.run import preflight as run

    return run(model, tokenizer, data, num_classes=num_classes, ignore_index=ignore_index, label_key=label_key, max_rows=max_rows)


def __getattr__(name):
    # PreflightError and PreflightReadError without importing the preflight
    # modules at `import devassert`; the version without reading metadata at
    # every import.
    if name == "PreflightError":
        from ._preflight.report import PreflightError

        return PreflightError
    if name == "PreflightReadError":
        # What a user's object raised while preflight read it, named with
        # the object and the step (`_preflight/steps.py`).
        from ._preflight.steps import PreflightReadError

        return PreflightReadError
    if name == "quarantine":
        # `devassert.quarantine.exclude(...)` after a plain `import devassert`
        # (`from . import` would ask this function again).
        import importlib

        return importlib.import_module(".quarantine", __name__)
    if name == "__version__":
        from ._version import version

        return version()
    raise AttributeError(f"module 'devassert' has no attribute {name!r}")


def load_ipython_extension(ipython):
    """``%load_ext devassert``: the guard on in this kernel, and the ``%devassert`` magic."""
    from .integrations import notebook

    notebook.load(ipython)


def unload_ipython_extension(ipython):
    """``%unload_ext devassert``: the guard off, the magic gone."""
    from .integrations import notebook

    notebook.unload(ipython)

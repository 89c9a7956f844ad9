"""Turning the policy on and off (``guard()`` calls `apply`; imports torch)."""

from .._checks import deferred as _async
from .._checks import violation as _violation
from . import absorb as _absorb
from . import accelerated as _accelerated
from . import engines as _engines
from . import loaded as _loaded
from . import state as _state
from . import step as _step

_precheck = None  # PRECHECK_CPU before "skip" set it


def apply(on_bad_batch=None, quarantine=None, max_skips=None, level="on"):
    """Set the policy; None: the environment's (DEVASSERT_ON_BAD_BATCH,
    DEVASSERT_QUARANTINE, DEVASSERT_MAX_SKIPS)."""
    global _precheck
    was = _state.skipping
    _state.configure(on_bad_batch, quarantine, max_skips)
    if _state.skipping and level != "off":
        if not was:
            _state.reset()
            _step.reset()
        # On CPU the check runs before the op (as on an accelerator), so the
        # op can run on safe values instead of raising.
        if _precheck is None:
            _precheck = _violation.PRECHECK_CPU
        _violation.PRECHECK_CPU = True
        _async.sink = _absorb.sink
        _step.install()
        _engines.watch_deepspeed()
        _accelerated.watch()
    else:
        off()


def off():
    """The policy off ("raise"), and every hook it set removed."""
    global _precheck
    _state.skipping = False
    if _precheck is not None:
        _violation.PRECHECK_CPU = _precheck
        _precheck = None
    if _async.sink is _absorb.sink:
        _async.sink = None
    _step.uninstall()
    _loaded.unwatch_all()
    _engines.unwrap_all()
    _accelerated.unwrap()

"""accelerate's ``AcceleratedOptimizer``: a step the policy skipped reads as
skipped there too (``step_was_skipped``, ``accelerator.optimizer_step_was_skipped``),
as a step AMP's scaler skips does, so accelerate's ``AcceleratedScheduler``
and the transformers ``Trainer`` leave the LR schedule where it was.

The property is patched, not ``step``: torch's LR schedulers put a counting
wrapper of ``optimizer.step`` on the instance when they are made (before a
callback turns the guard on, in the Trainer), and that wrapper calls the
class's step as it was then.
"""

from . import loaded as _loaded
from . import state as _state

MODULE, CLASS, NAME = "accelerate.optimizer", "AcceleratedOptimizer", "step_was_skipped"

_wrapped = []  # (class, original property)


def watch():
    _loaded.watch(MODULE, _wrap)


def unwrap():
    while _wrapped:
        cls, original = _wrapped.pop()
        setattr(cls, NAME, original)


def _wrap(module):
    cls = getattr(module, CLASS, None)
    original = vars(cls).get(NAME) if isinstance(cls, type) else None
    if not isinstance(original, property) or original.fget is None or _wrapped or not _state.skipping:
        return

    def step_was_skipped(self):
        if original.fget(self):
            return True
        # The last step of the optimizer it wraps, as the policy decided it.
        return _state.skipping and _state.last_skipped.get(id(getattr(self, "optimizer", None)), False)

    step_was_skipped.__doc__ = original.__doc__
    _wrapped.append((cls, original))
    setattr(cls, NAME, property(step_was_skipped))

"""accelerate's ``AcceleratedOptimizer``: a step the policy skipped reads as
skipped there too (``step_was_skipped``, ``accelerator.optimizer_step_was_skipped``),
as a step AMP's scaler skips does, so accelerate's ``AcceleratedScheduler``
and the transformers ``Trainer`` leave the LR schedule where it was.

With a GradScaler accelerate finds the skip itself (the scaler never called
the optimizer's step); without one it would not, so the wrapped step says so.
"""

from . import loaded as _loaded
from . import state as _state

MODULE, CLASS = "accelerate.optimizer", "AcceleratedOptimizer"

_wrapped = []  # (class, original step)


def watch():
    _loaded.watch(MODULE, _wrap)


def unwrap():
    while _wrapped:
        cls, original = _wrapped.pop()
        cls.step = original


def _wrap(module):
    cls = getattr(module, CLASS, None)
    original = vars(cls).get("step") if isinstance(cls, type) else None
    if original is None or getattr(original, "__devassert_original__", None) is not None or not _state.skipping:
        return

    def step(self, *args, **kwargs):
        if not _state.skipping:
            return original(self, *args, **kwargs)
        inner = getattr(self, "optimizer", None)
        _state.skipped_now.discard(id(inner))
        if self.__dict__.pop("_devassert_skipped", False):
            self._is_overflow = False  # set by the last step here, not by a scaler
        result = original(self, *args, **kwargs)
        if id(inner) in _state.skipped_now:
            _state.skipped_now.discard(id(inner))
            self._is_overflow = True
            self._devassert_skipped = True
        return result

    step.__devassert_original__ = original
    step.__wrapped__ = original
    step.__name__ = "step"
    step.__qualname__ = getattr(original, "__qualname__", "step")
    _wrapped.append((cls, original))
    cls.step = step

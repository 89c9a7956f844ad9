"""Engines that wrap a torch optimizer in a step of their own: DeepSpeed's
ZeRO, fp16 and bf16 optimizers (and any class of that shape, through `wrap`).

Such a step checks overflow and updates its own dynamic loss scaler first,
then calls the wrapped torch optimizer's ``step()`` (once per parameter group
or sub-group), so the global pre-hook alone would skip the update but let the
loss scaler count the step: its iteration count and, every ``scale_window``
steps, its scale would move. Here the engine's step decides once, before it
runs (one agreement across ranks, as for a torch optimizer); every torch
optimizer step inside it takes that verdict without deciding again, and on a
skipped step the engine's loss-scale state (the attributes named by `state`)
is put back as it was when the step began, and the step reads as an
overflow (`overflow` True until the next step), so DeepSpeed's engine counts
it in ``skipped_steps`` and does not step its LR scheduler, as after an fp16
overflow.
"""

import copy

from . import loaded as _loaded
from . import state as _state
from . import step as _step

# DeepSpeed's optimizer wrappers (module, class): each one's step() updates
# its loss scaler before it calls the wrapped torch optimizer's step().
DEEPSPEED = (
    ("deepspeed.runtime.zero.stage_1_and_2", "DeepSpeedZeroOptimizer"),
    ("deepspeed.runtime.zero.stage3", "DeepSpeedZeroOptimizer_Stage3"),
    ("deepspeed.runtime.fp16.fused_optimizer", "FP16_Optimizer"),
    ("deepspeed.runtime.fp16.unfused_optimizer", "FP16_UnfusedOptimizer"),
    ("deepspeed.runtime.bf16_optimizer", "BF16_Optimizer"),
)
# Where those keep their loss-scale state: the scaler object (ZeRO), or its
# config (the fp16 optimizers of newer releases).
LOSS_SCALE_STATE = ("loss_scaler", "loss_scale_config")

_wrapped = []  # (class, original step)


def wrap(cls, state=LOSS_SCALE_STATE):
    """Make ``cls.step`` decide the step for the torch optimizers it calls, and
    put back the attributes `state` names on a skipped step. Undone by
    `unwrap_all` (the policy turned off)."""
    original = vars(cls).get("step")
    if original is None or getattr(original, "__devassert_original__", None) is not None:
        return

    def step(self, *args, **kwargs):
        if not _state.skipping or _state.held() is not None:
            return original(self, *args, **kwargs)
        if "_devassert_overflow" in vars(self):
            # The last step was skipped here and reported as an overflow: put
            # the flag back, for a wrapper that does not compute it each step.
            self.overflow = vars(self).pop("_devassert_overflow")
        skip = _step.decide(self)
        saved = _save(self, state) if skip else None
        _state.hold(skip)
        try:
            return original(self, *args, **kwargs)
        finally:
            _state.hold(None)
            if saved is not None:
                _restore(saved)
                _report_overflow(self)

    step.__devassert_original__ = original
    step.__wrapped__ = original
    step.__name__ = getattr(original, "__name__", "step")
    step.__qualname__ = getattr(original, "__qualname__", "step")
    step.__doc__ = getattr(original, "__doc__", None)
    _wrapped.append((cls, original))
    cls.step = step


def _report_overflow(engine):
    """Tell the engine the step was skipped, in its own words: DeepSpeed's
    engine reads its optimizer's `overflow` after the step, counts the step in
    `skipped_steps` and leaves its LR scheduler, as after an fp16 overflow."""
    if "overflow" in vars(engine):
        engine._devassert_overflow = engine.overflow
        engine.overflow = True


def unwrap_all():
    while _wrapped:
        cls, original = _wrapped.pop()
        cls.step = original


def _save(engine, names):
    """[(object, its attributes copied)] for each loss-scale object `engine` holds."""
    saved = []
    for name in names:
        obj = getattr(engine, name, None)
        if obj is not None and hasattr(obj, "__dict__"):
            saved.append((obj, {k: _copy(v) for k, v in vars(obj).items()}))
    return saved


def _copy(value):
    clone = getattr(value, "clone", None)
    if callable(clone) and type(value).__module__.startswith("torch"):
        return value.clone()  # a scale kept as a tensor: its value now
    if isinstance(value, (list, dict, set)):
        return copy.copy(value)
    return value


def _restore(saved):
    for obj, attrs in saved:
        now = vars(obj)
        for k in [k for k in now if k not in attrs]:
            del now[k]
        for k, v in attrs.items():
            current = now.get(k)
            if current is not v and getattr(current, "copy_", None) is not None and type(current) is type(v) and getattr(current, "shape", None) == v.shape:
                current.copy_(v)  # in place: others may hold the tensor
            else:
                now[k] = v


def watch_deepspeed():
    """Wrap DeepSpeed's optimizer classes now if loaded, else when they load."""
    for module, name in DEEPSPEED:
        _loaded.watch(module, lambda m, name=name: _wrap_named(m, name))


def _wrap_named(module, name):
    cls = getattr(module, name, None)
    if isinstance(cls, type) and _state.skipping:
        wrap(cls)

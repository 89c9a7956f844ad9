"""The TorchFunctionMode that runs the checks before the guarded ops.

The mode sits on the torch-function mode stack of the thread that installed it
(the mode stack is per thread). Every other op passes straight through.
Compiled and traced regions (torch.compile / dynamo, torch.jit.trace, FX) go
unchecked: the checks need real values, and tracing must see the plain op.
"""

import threading

import torch
from torch.overrides import TorchFunctionMode

from . import _checks, _report

_CHECKS = _checks.table()
_is_compiling = getattr(getattr(torch, "compiler", None), "is_compiling", None) or (lambda: False)
_is_tracing = torch.jit.is_tracing


class GuardMode(TorchFunctionMode):
    def __init__(self, level="on"):
        super().__init__()
        self.level = level

    def __torch_function__(self, func, types, args=(), kwargs=None):
        if kwargs is None:
            kwargs = {}
        try:
            check = _CHECKS.get(func)
        except TypeError:
            check = None
        if check is None or self.level == "off" or _is_compiling() or _is_tracing():
            return func(*args, **kwargs)
        try:
            err = check(args, kwargs, {"level": self.level, "frames": _report.caller_frames()})
        except Exception:
            # A check must never break the program: fake / meta / functorch
            # tensors and unusual arguments simply go unchecked.
            err = None
        if err is not None:
            raise err
        return func(*args, **kwargs)


_local = threading.local()


def _stack_top():
    n = torch._C._len_torch_function_stack()
    return torch._C._get_function_stack_at(n - 1) if n else None


def current_level():
    mode = getattr(_local, "mode", None)
    return mode.level if mode is not None else "off"


def set_level(level):
    """Install, re-level or remove the guard of this thread."""
    mode = getattr(_local, "mode", None)
    if level == "off":
        if mode is None:
            return
        if _stack_top() is mode:
            mode.__exit__(None, None, None)
            _local.mode = None
        else:
            # Another mode was pushed after ours: leave ours in place, disabled.
            mode.level = "off"
        return
    if mode is None:
        mode = GuardMode(level)
        mode.__enter__()
        _local.mode = mode
    mode.level = level

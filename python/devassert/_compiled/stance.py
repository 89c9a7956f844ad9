"""torch.compiler's stance, set while the guard is on.

A stance that skips guard evaluation (``torch.compiler.set_stance(...,
skip_guard_eval_unsafe=True)``) has dynamo ask no guard of its cache entries
but those that tell them apart: an entry compiled while the guard was off,
which `cache._off` would have had compiled again with the guard's checks,
runs unchecked until the stance is lifted (compiling it again under the
stance would be an error). A stance is seen only as it is set: each public
form (the function, the context manager, the decorator) sets it through
``torch._dynamo.decorators._set_stance``, which is wrapped while the guard is
on. Setting such a stance while entries compiled while the guard was off may
still run says so once; the stance is set as asked, its errors unchanged.
"""

import functools
import sys

from .._checks import caller as _caller
from .._checks import notes as _notes

_hooked = None  # (module, original, wrapper) while the setter is wrapped


def watch(unchecked):
    """Wrap dynamo's stance setter; `unchecked()` counts the entries that
    may run unchecked. Nothing on a torch without stances."""
    global _hooked
    if _hooked is not None:
        return
    module = sys.modules.get("torch._dynamo.decorators")
    original = getattr(module, "_set_stance", None)
    if original is None or hasattr(original, "__devassert_original__"):
        return

    @functools.wraps(original)  # its `_dynamo_forbidden` mark too
    def _set_stance(stance):
        try:
            prior = original(stance)
        except BaseException as error:
            _caller.trim(error)
            raise
        if getattr(stance, "skip_guard_eval_unsafe", False):
            _skipping(unchecked)
        return prior

    _set_stance.__devassert_original__ = original
    module._set_stance = _set_stance
    _hooked = (module, original, _set_stance)


def unwatch():
    """Put dynamo's stance setter back (unless another hook replaced ours)."""
    global _hooked
    if _hooked is None:
        return
    module, original, wrapper = _hooked
    _hooked = None
    if getattr(module, "_set_stance", None) is wrapper:
        module._set_stance = original


def _skipping(unchecked):
    try:
        count = unchecked()
    except Exception:  # noqa: BLE001 - a note must never break the program
        return
    if count:
        _notes.once(
            "stance-unchecked",
            f"devassert: {count} compiled region(s) were compiled while the guard was off and may run unchecked under "
            "this stance: torch.compiler's stance skips guard evaluation (skip_guard_eval_unsafe), so dynamo cannot compile "
            "them again with the guard's checks; call them once before setting the stance, or lift it",
        )

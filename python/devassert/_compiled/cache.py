"""Dynamo's cache of compiled code and the guard going on and off.

- A region compiled while the guard was off (before it was first installed:
  a notebook's first compile, ``%load_ext devassert`` late, the pytest
  plugin) has no checks, and dynamo would reuse it for every later call
  of its code object, a new instance of the model class included. When the
  guard goes on, the code objects dynamo compiled while it was off are
  reset once (``reset_code``), with a one-line note: their next call
  compiles them again, checked.
- A region compiled while the guard is on serves both states: dynamo's
  guards on the names that hold the guard's wrappers accept torch's own ops
  too (`identity.py`) and its checks follow the guard (`inside.set_on`,
  the boundary's level), so turning the guard off and on again recompiles
  nothing. Its code object is therefore not reset when the guard goes on
  again: only code compiled while the guard was off, and never with it on,
  is, and each code object once at most (a region the program compiles
  while the guard is off, beside guarded ones, is not recompiled at every
  toggle).
"""

import sys
import weakref

import torch

from .._checks import notes as _notes

# What dynamo had compiled when the guard last went off: the compiled code of
# every cache entry, by id (weakly held: an id is reused once its code is
# freed; empty: never on). An entry made since was compiled unchecked.
_compiled_while_on = weakref.WeakValueDictionary()
# Code objects reset so far (by id, weakly held): each is reset once at most.
_reset = weakref.WeakValueDictionary()


def _dynamo():
    """(convert_frame, eval_frame C module) when dynamo is imported, else None."""
    convert_frame = sys.modules.get("torch._dynamo.convert_frame")
    ef = getattr(getattr(torch._C, "_dynamo", None), "eval_frame", None)
    if convert_frame is None or ef is None or not hasattr(convert_frame, "input_codes"):
        return None
    return convert_frame, ef


def invalidate_unchecked():
    """Reset the code objects dynamo compiled while the guard was off; says
    so once. Returns how many."""
    found = _dynamo()
    if found is None:
        return 0  # dynamo never ran: nothing was compiled
    convert_frame, ef = found
    entries = getattr(ef, "_debug_get_cache_entry_list", None)
    reset = getattr(ef, "reset_code", None)
    if entries is None or reset is None:
        return 0
    done = 0
    with convert_frame.compile_lock:
        for ref in list(convert_frame.input_codes.seen):
            code = ref()
            if code is None or _reset.get(id(code)) is code:
                continue  # reset once at most: a region kept unguarded is not recompiled at every toggle
            made = [_was_on(getattr(e, "code", None)) for e in entries(code)]
            if made and not any(made):  # compiled while off only
                reset(code)
                _reset[id(code)] = code
                done += 1
    if done:
        _notes.once(
            "recompile-unchecked",
            f"devassert: {done} compiled code object(s) were compiled before the guard went on and ran unchecked: "
            "dynamo compiles them again, with the guard's checks, at their next call",
        )
    return done


def went_off():
    """The guard is off: what dynamo compiles from now on is unchecked."""
    global _compiled_while_on
    found = _dynamo()
    if found is None:
        return
    entries = getattr(found[1], "_debug_get_cache_entry_list", None)
    codes = [ref() for ref in found[0].input_codes.seen]
    if entries is None:
        return
    _compiled_while_on = weakref.WeakValueDictionary()
    for c in codes:
        for e in entries(c) if c is not None else ():
            compiled = getattr(e, "code", None)
            if compiled is not None:
                _compiled_while_on[id(compiled)] = compiled


def _was_on(compiled):
    return compiled is not None and _compiled_while_on.get(id(compiled)) is compiled

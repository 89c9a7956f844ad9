"""Dynamo's cache of compiled code and the guard going on and off.

- A region compiled while the guard is off (before it was first installed:
  a notebook's first compile, ``%load_ext devassert`` late, the pytest
  plugin; or after ``unguard()``: a new region, or a new shape of a region
  compiled guarded) has no checks, and dynamo would reuse its cache entry
  for every later call of its code object, a new instance of the model
  class included, once the guard is on again. Method and operator forms
  (``x.gather``, ``x[idx]``) leave dynamo no guard on a name the guard
  changes, so nothing of dynamo's own would fail it. When the guard goes
  on, each entry compiled while it was off gets one guard more (`_off`):
  it serves while the guard is off, as compiled, and fails while it is on,
  so the region's next call with the guard on compiles it again, checked,
  once (a one-line note says so). The entry compiled then serves both
  states: turning the guard off and on again recompiles nothing.
- A region compiled while the guard is on serves both states: dynamo's
  guards on the names that hold the guard's wrappers accept torch's own ops
  too (`identity.py`) and its checks follow the guard (`inside.set_on`, the
  boundary's level). Its entries are left as they are.

On a torch whose guard managers take no guard added later, the code objects
that hold an entry compiled while off are reset (``reset_code``) instead:
each compiles again at its next call, its checked entries too. Under a stance
that skips guard evaluation (``skip_guard_eval_unsafe``) neither works: dynamo
asks only the guards that tell a code's entries apart (`_off` among them
once a later compile re-derived them, and it passes then), and a recompile
is an error. The entries run unchecked, as they would without the guard,
and a note says so, whether the stance was set before the guard went on or
after (`stance.py`, for the entries no checked one has replaced yet); `_off`
still has each compiled again, checked, once the stance is lifted.
"""

import sys
import weakref

import torch

from .._checks import notes as _notes
from . import stance as _stance

# The compiled code of every cache entry that was there when the guard last
# went off: what was compiled while it was on (weakly held: an id is reused
# once its code is freed; empty: never on).
_compiled_while_on = weakref.WeakValueDictionary()
# The compiled code of the entries given the `_off` guard (each once).
_off_only = weakref.WeakValueDictionary()
# The ids of those whose `_off` guard failed: every other guard of the entry
# passed (it runs last), so dynamo served those inputs from another entry, or
# compiled one, with the guard on: checked, and ahead of it in the cache.
_replaced = set()
_on = False

_REASON = "devassert: compiled while the guard was off, without its checks"


def _off_guard(key):
    """The guard that the entry of compiled code `key` (an id), compiled
    while the guard was off, passes only while the guard is off."""

    def _off(_frame):
        if not _on:
            return True
        if _guards_skipped():
            # Dynamo asks it under that stance once it re-derived the
            # entry's guards that tell entries apart (a later compile of
            # the code): failing would be a recompile, an error there. It
            # runs as it would without the guard, unchecked (`stance.py`).
            return True
        _replaced.add(key)
        return False

    return _off


def _dynamo():
    """(convert_frame, eval_frame C module) when dynamo is imported, else None."""
    convert_frame = sys.modules.get("torch._dynamo.convert_frame")
    ef = getattr(getattr(torch._C, "_dynamo", None), "eval_frame", None)
    if convert_frame is None or ef is None or not hasattr(convert_frame, "input_codes"):
        return None
    return convert_frame, ef


def _entries(found):
    """(code object, its cache entries) of every code object dynamo compiled."""
    convert_frame, ef = found
    entries = getattr(ef, "_debug_get_cache_entry_list", None)
    if entries is None:
        return []
    codes = [ref() for ref in list(convert_frame.input_codes.seen)]
    return [(code, entries(code)) for code in codes if code is not None]


def _held(registry, compiled):
    return compiled is not None and registry.get(id(compiled)) is compiled


def _only_while_off(entry, key):
    """Add the `_off` guard to `entry`, run after its other guards (an
    epilogue: its failure means the entry would have served the call);
    False when its guard manager takes none."""
    root = getattr(getattr(entry, "guard_manager", None), "root", None)
    add = getattr(root, "add_epilogue_lambda_guard", None)
    if add is None:
        return False
    off = _off_guard(key)
    try:
        add(off, [_REASON], None)  # torch >= 2.10: the user's stack, none here
    except TypeError:
        try:
            add(off, [_REASON])  # torch 2.9
        except Exception:  # noqa: BLE001 - another torch: the code is reset instead
            return False
    except Exception:  # noqa: BLE001
        return False
    return True


def _guards_skipped():
    """Dynamo's stance skips guard evaluation (``torch.compiler.set_stance(...,
    skip_guard_eval_unsafe=True)``): `_off` is not asked, and recompiling is
    an error, until the stance is lifted."""
    ef = sys.modules.get("torch._dynamo.eval_frame")
    return bool(getattr(getattr(ef, "_stance", None), "skip_guard_eval_unsafe", False))


def went_on():
    """The guard is on: every cache entry compiled while it was off stops
    serving (`_off`); its region compiles again, checked, at its next call.
    Says so once. Returns how many entries."""
    global _on
    _on = True
    found = _dynamo()
    if found is None:
        return 0  # dynamo never ran: nothing was compiled
    _stance.watch(runnable_unchecked)
    skipped = _guards_skipped()
    # Under that stance a reset code's next call would be an error.
    reset = None if skipped else getattr(found[1], "reset_code", None)
    done = 0
    with found[0].compile_lock:
        for code, entries in _entries(found):
            unchecked = False
            for e in entries:
                compiled = getattr(e, "code", None)
                if compiled is None or _held(_compiled_while_on, compiled) or _held(_off_only, compiled):
                    continue
                if _only_while_off(e, id(compiled)):
                    _off_only[id(compiled)] = compiled
                    _replaced.discard(id(compiled))  # an id freed and reused
                    done += 1
                else:
                    unchecked = True
            if unchecked and reset is not None:
                reset(code)
                done += 1
            elif unchecked and skipped:
                done += 1
    if done and skipped:
        # The program is left to run as it does, and the user told.
        _notes.once(
            "recompile-unchecked",
            f"devassert: {done} compiled region(s) were compiled while the guard was off and run unchecked: "
            "torch.compiler's stance skips guard evaluation (skip_guard_eval_unsafe), so dynamo cannot compile them "
            "again with the guard's checks; turn the guard on before compiling, or lift the stance",
        )
    elif done:
        _notes.once(
            "recompile-unchecked",
            f"devassert: {done} compiled region(s) were compiled while the guard was off and ran unchecked: "
            "dynamo compiles each again, with the guard's checks, at its next call",
        )
    return done


def went_off():
    """The guard is off: what dynamo compiles from now on is unchecked; what
    it holds now was compiled while the guard was on (or is `_off_only`)."""
    global _on, _compiled_while_on
    _on = False
    _stance.unwatch()
    found = _dynamo()
    if found is None:
        return
    _compiled_while_on = weakref.WeakValueDictionary()
    for _code, entries in _entries(found):
        for e in entries:
            compiled = getattr(e, "code", None)
            if compiled is not None and not _held(_off_only, compiled):
                _compiled_while_on[id(compiled)] = compiled


def runnable_unchecked():
    """How many cache entries compiled while the guard was off dynamo may
    still run when it asks no guard: each given `_off` and not replaced by
    a checked entry ahead of it (dynamo tries a code's entries in order,
    the newest and the last used first)."""
    found = _dynamo()
    if found is None or not _on:
        return 0
    count = 0
    for _code, entries in _entries(found):
        checked_ahead = False
        for e in entries:
            compiled = getattr(e, "code", None)
            if not _held(_off_only, compiled):
                checked_ahead = True
            elif not (checked_ahead and id(compiled) in _replaced):
                count += 1
    return count

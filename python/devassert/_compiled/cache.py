"""Dynamo's cache of compiled code and the guard going on and off.

- A region compiled while the guard was off (before it was first installed:
  a notebook's first compile, ``%load_ext devassert`` late, the pytest
  plugin) has no checks, and dynamo would reuse it for every later call
  of its code object, a new instance of the model class included. When the
  guard goes on, the code objects dynamo compiled while it was off are
  reset once (``reset_code``), with a one-line note: their next call
  compiles them again, checked.
- Dynamo guards the identity of what a compiled frame looked up:
  ``torch.gather`` is the guard's wrapper while it is on and torch's
  builtin while it is off, so each toggle would fail that guard and
  recompile. Every ``torch.compile`` made while the guard is installed gets
  a ``guard_filter_fn`` (chained after the user's own) that drops the guards
  whose value is a guarded entry point, its wrapper or the wrapper's code:
  the compiled graph does not call them (the op is in the graph, checked
  by the boundary and in-region checks, which read the level at each call),
  so the compiled code is right in both states and nothing recompiles.
"""

import sys

import torch

from .._checks import notes as _notes

# How many code objects dynamo had seen when the guard last went off (0:
# never on). Those seen later were compiled unchecked.
_off_since = 0
_identities = frozenset()
_optimize = None  # (torch._dynamo module, its original optimize)


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
        for ref in list(convert_frame.input_codes.seen[_off_since:]):
            code = ref()
            if code is not None and entries(code):
                reset(code)
                done += 1
    if done:
        try:
            _filter_existing()
        except ImportError:
            pass
        _notes.once(
            "recompile-unchecked",
            f"devassert: {done} compiled code object(s) were compiled before the guard went on and ran unchecked: "
            "dynamo compiles them again, with the guard's checks, at their next call",
        )
    return done


def went_off():
    """The guard is off: what dynamo compiles from now on is unchecked."""
    global _off_since
    found = _dynamo()
    _off_since = len(found[0].input_codes.seen) if found is not None else 0


def _drop_guarded(entries):
    """False for each dynamo guard on a guarded entry point's identity."""
    ids = _identities
    return [not (e.has_value and id(e.value) in ids) for e in entries]


def _chained(user):
    if user is None or getattr(user, "__devassert_filter__", False):
        return _drop_guarded

    def both(entries):
        return [a and b for a, b in zip(user(entries), _drop_guarded(entries))]

    both.__devassert_filter__ = True
    return both


_drop_guarded.__devassert_filter__ = True


def _filter_existing():
    """Chain the filter into the hooks of every torch.compile made before
    the guard went on (their code is compiled again: `invalidate_unchecked`).
    A heap walk, done only when dynamo has compiled something."""
    import gc

    from torch._dynamo.hooks import Hooks

    for obj in gc.get_objects():
        if type(obj) is Hooks and not getattr(obj.guard_filter_fn, "__devassert_filter__", False):
            try:
                obj.guard_filter_fn = _chained(obj.guard_filter_fn)
            except (AttributeError, TypeError):  # a frozen Hooks on another torch
                return


def keep_identities(identities):
    """`identities`: ids of the wrapped entry points, their wrappers and the
    wrappers' code objects (what the filter drops guards on)."""
    global _identities
    _identities = frozenset(identities)


def hook_optimize():
    """Give every torch.compile made from now on the guard filter (called by
    the guard's torch.compile hook, which imports dynamo anyway). False on a
    torch without ``guard_filter_fn``."""
    global _optimize
    if _optimize is not None:
        return True
    try:
        import inspect

        import torch._dynamo as dynamo
        from torch._dynamo import eval_frame

        if "guard_filter_fn" not in inspect.signature(eval_frame._optimize).parameters:
            return False
    except (AttributeError, ImportError, TypeError, ValueError):
        return False
    original = getattr(dynamo, "optimize", None)
    if original is None:
        return False

    def optimize(*args, **kwargs):
        kwargs["guard_filter_fn"] = _chained(kwargs.get("guard_filter_fn"))
        return original(*args, **kwargs)

    optimize.__devassert_original__ = original
    optimize.__wrapped__ = original
    dynamo.optimize = optimize
    _optimize = (dynamo, original)
    return True


def unhook_optimize():
    global _optimize
    if _optimize is not None:
        dynamo, original = _optimize
        dynamo.optimize = original
        _optimize = None

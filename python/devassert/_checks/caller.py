"""Calling an op as if from the caller's line, and leaving no guard frame in
tracebacks.

Warnings. A C op's warnings (TORCH_WARN) are attributed to the innermost
Python frame, which would be the guard's wrapper: the file and line printed,
the module a filter matches and the registry that shows a "default" warning
once per location would all be the guard's, so warnings from different call
sites would merge into one. The wrapper therefore calls the op through a
one-line function made per call site, whose code carries the caller's file and
line and whose globals are the caller's: to Python's warnings machinery the op
is called from the user's line.

Tracebacks. An exception that leaves a wrapper has the guard's frames removed
(`trim`) and is re-raised with a bare ``raise``, which on Python 3.11+ adds no
entry for the wrapper's own frame: the traceback ends at the user's line, as
with plain torch (on 3.8-3.10 one wrapper frame stays).
"""

import os
import types

# The devassert package's folder (this module is in its `_checks/`).
_HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
MARK = "<devassert: op called from this line>"
_TEMPLATE = lambda op, args, kwargs: op(*args, **kwargs)  # noqa: E731 - one line: the call sits on co_firstlineno
sites = {}  # (id(code), lasti) -> (function, code); the code is kept so its id stays unique
_LIMIT = 4096


def call(frame, op, args, kwargs):
    """`op(*args, **kwargs)`, run from a frame that looks like `frame`'s line."""
    hit = sites.get((id(frame.f_code), frame.f_lasti)) or site(frame)
    return hit[0](op, args, kwargs)


def site(frame):
    """(the call-site function for `frame`'s current line, its code): made
    once per call site (the wrappers look `sites` up first)."""
    if len(sites) >= _LIMIT:
        sites.clear()
    code = frame.f_code
    line = frame.f_lineno or code.co_firstlineno
    fields = {"co_filename": code.co_filename, "co_firstlineno": line, "co_name": MARK}
    if hasattr(code, "co_qualname"):
        fields["co_qualname"] = MARK
    fn = types.FunctionType(_TEMPLATE.__code__.replace(**fields), frame.f_globals, MARK)
    hit = sites[(id(code), frame.f_lasti)] = (fn, code)
    return hit


def is_ours(code):
    """A frame of the guard: its package's files, or a call-site function above."""
    return code.co_name == MARK or code.co_filename.startswith(_HERE)


def trim(error):
    """Drop the guard's frames from `error`'s traceback (the rest is kept: a
    user's __index__ or __torch_function__ that raised inside the op)."""
    kept = []
    tb = error.__traceback__
    while tb is not None:
        if not is_ours(tb.tb_frame.f_code):
            kept.append(tb)
        tb = tb.tb_next
    nxt = None
    for tb in reversed(kept):
        tb.tb_next = nxt
        nxt = tb
    error.__traceback__ = nxt

"""A call that a ``__torch_function__`` redispatched one level down
(``torch.overrides.redispatch_function``, torch 2.15+).

A subclass (or a mode) that redispatches calls ``func`` again with a flag
set that the next torch call's argument parser consumes: that call skips
``__torch_function__`` once. ``func`` is what the subclass was handed, the
guard's wrapper, so the call reaches the wrapper with the flag set, and any
torch call the check made would consume it: the op would then dispatch to
the subclass again, which redispatches to the wrapper, without end. So the
wrapper consumes the flag itself, reads the values with every
``__torch_function__`` off (no subclass or mode sees the check's reads; a
wrapper subclass is read through its plain tensors, `_checks/plain.py`),
and calls the op with the flag set again, through the function
``redispatch_function`` calls: the op consumes it as in plain torch, and
its result, and what the subclass sees, are unchanged. Bad values are
stopped, or explained once the op raised, as in any other call; as with a
wrapper subclass's, the check is synchronous at every level, and under
``on_bad_batch="skip"`` the call is stopped, not run on values made safe.
"""

import torch

from .._checks import caller as _caller
from .._checks import faithful as _faithful
from .._checks import plain as _plain

_hop = getattr(torch._C, "_skip_one_hop_torch_function", None)
_peek = getattr(torch._C, "_peek_should_skip_torch_function", None)
# A torch call that consumes the flag and does nothing else.
_consume = torch._C._has_torch_function_unary
_no_tf = torch._C.DisableTorchFunction

supported = _hop is not None and _peek is not None


def call(original, check, args, kwargs, caller, strict):
    """`original(*args, **kwargs)` as redispatched, checked; `caller`: the
    frame that called the wrapper (the op runs from its line)."""
    _consume(None)
    if _peek():  # a torch whose cheap call leaves it: the op consumes it, unchecked
        return _caller.call(caller, original, args, kwargs)
    with _no_tf():
        try:
            found, plain_args, plain_kwargs, views = _plain.before(check, args, kwargs, strict)
        except Exception:  # noqa: BLE001 - a check must never break the program
            found = None
        if found is not None:
            _faithful.stop(original, check, plain_args, plain_kwargs, found, views=views)
    site = _caller.sites.get((id(caller.f_code), caller.f_lasti)) or _caller.site(caller)
    try:
        return _hop(site[0], (), (original, args, kwargs), {})
    except Exception as error:
        with _no_tf():
            _faithful.explain(original, check, args, kwargs, error, strict)
        raise

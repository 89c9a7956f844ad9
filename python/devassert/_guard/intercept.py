"""Wrapping the guarded entry points, and only those.

Each guarded entry point (``torch.gather``, ``Tensor.__getitem__``,
``torch.embedding``, ``torch._C._nn.cross_entropy_loss``, ...) is replaced by a
wrapper that runs the op's check. Every other op is left untouched, so it pays
nothing, its warnings keep the user's line, and no ``TorchFunctionMode`` is
active (an active mode turns off the Transformer inference fast path).

The wrapper:
- on an accelerator tensor, checks the argument before the op launches (one
  amin/amax pair and one sync), because a bad value would fail a device assert
  and poison the CUDA context;
- on a CPU tensor, lets the op run: CPU kernels check these values themselves
  and raise. Only when they raise does the guard look at the values, and then
  it re-raises torch's exception with the details appended. Valid CPU code pays
  the wrapper and the call-site function that keeps warnings at the user's
  line (`_checks/caller.py`);
- at level "async" on a CUDA tensor, and at every level while a CUDA graph
  is being captured, checks on the device with no host sync and launches the
  op on values made safe (`_checks/deferred.py`); the finding is raised at a later
  guarded op or at exit;
- under torch.compile / FX / TorchScript tracing calls the op unchanged;
  compiled regions are checked at their boundary instead (`_compiled/boundary.py`:
  the inputs that reach a guarded op's index, before the kernels launch).

Python-level functionals (``F.cross_entropy``, ``F.embedding``) are not wrapped
themselves: the C ops they call are, so their own warnings keep their
stacklevel.

Python must not tell the wrappers are there: Tensor keeps no sequence slots
(`slots.py`), ``__torch_function__`` overrides get what the user called, once,
before any of their attributes is read, tracebacks hold no guard frame, and
``set_level("off")`` puts every original object back.
"""

import functools
import sys

import torch

from .._checks import caller as _caller
from .._checks import deferred as _async
from .._checks import faithful as _faithful
from .._checks import notes as _notes
from .._checks import ops as _ops
from .._checks import plain as _plain
from .._checks import samples as _samples
from .._checks import violation as _violation
from .._compiled import boundary as _compiled
from .._compiled import identity as _identity
from .._policy import absorb as _skip
from . import inherit as _inherit
from . import redispatch as _redispatch
from . import slots as _slots

OFF, ON, STRICT, ASYNC = 0, 1, 2, 3
_NAMES = {"off": OFF, "on": ON, "strict": STRICT, "async": ASYNC}

# The level of the whole process (one global read on the fast path).
_level = OFF
_installed = []  # (owner, attribute, original, owned) for uninstall(); owned: it was in owner.__dict__

_is_compiling = getattr(getattr(torch, "compiler", None), "is_compiling", None) or (lambda: False)
# Constant True while dynamo traces, `return False` in eager: the cheap test
# that keeps dynamo out of what it cannot trace (sys._getframe).
_is_dynamo = getattr(getattr(torch, "compiler", None), "is_dynamo_compiling", None) or _is_compiling
_is_tracing = torch._C._get_tracing_state
_has_tf = torch._C._has_torch_function
# Set by torch.overrides.redispatch_function (torch 2.15+): skip the next
# __torch_function__. The op's own parser must consume it, as in plain torch;
# `_has_tf` would (answering False), and the op would then dispatch to the
# subclass again, which redispatches to the wrapper: endless recursion
# (`redispatch.py` checks such a call and hands the op the flag again).
_skip_next = getattr(torch._C, "_peek_should_skip_torch_function", None) or (lambda: False)
_handle_tf = torch.overrides.handle_torch_function
_getframe = sys._getframe
_sites = _caller.sites


def current_level():
    for name, value in _NAMES.items():
        if value == _level:
            return name
    return "off"


def set_level(level):
    """Install the wrappers when the guard goes on, remove them when it goes
    off (every original object is back), and set the level of the process."""
    global _level
    value = _NAMES[level]
    if value != OFF and not _installed:
        install()
    _level = value
    if value == OFF and _installed:
        uninstall()


def _checked(original, check, args, kwargs, caller):
    """The path of an op whose values are checked before it runs."""
    level = _level
    if (check.strict_only and level != STRICT) or _is_compiling() or _is_tracing():
        return _caller.call(caller, original, args, kwargs)
    if _async.armed:
        _async.poll()
    strict = level == STRICT
    first = args[0] if args else None
    if _async.on_device(first):
        capture = _async.capturing()
        # Subclasses are checked on their plain tensors, synchronously.
        if (level == ASYNC or capture) and not _plain.wrapped(args, kwargs):
            done, result = _async.call(original, check, args, kwargs, strict, capture, caller)
            if done:
                return result
    try:
        # Tensor subclasses (DTensor, nested, wrappers) are checked on their
        # plain tensors (`_checks/plain.py`).
        found, plain_args, plain_kwargs, views = _plain.before(check, args, kwargs, strict)
    except Exception:
        # A check must never break the program: fake, meta and
        # functorch tensors and unusual arguments go unchecked.
        found = None
    if found is not None:
        # The skip policy runs the op on values made safe: plain tensors
        # only (a subclass's finding is on its local values).
        if views is None and _skip.applies():
            return _skip.run(original, check, args, kwargs, found, caller, strict)
        _faithful.stop(original, check, plain_args, plain_kwargs, found, views=views)
    try:
        return _caller.call(caller, original, args, kwargs)
    except Exception as error:
        _explain(original, check, args, kwargs, error, strict)
        raise


def _redispatched(original, check, args, kwargs, caller):
    """A call a __torch_function__ redispatched (`redispatch.py`); where no
    check runs, the op consumes the flag itself."""
    if (check.strict_only and _level != STRICT) or _is_compiling() or _is_tracing() or not _redispatch.supported:
        return _caller.call(caller, original, args, kwargs)
    return _redispatch.call(original, check, args, kwargs, caller, _level == STRICT)


def _explain(original, check, args, kwargs, error, strict):
    """The op raised `error`: raise it again with the guard's details when its
    values caused it (returns otherwise)."""
    if not _is_compiling():
        _faithful.explain(original, check, args, kwargs, error, strict)


def _relevant(args, kwargs):
    """The arguments torch's own dispatch looks at for __torch_function__:
    tensors, and the items of tensor lists."""
    out = []
    for v in (*args, *kwargs.values()):
        if type(v) in (list, tuple):
            out.extend(v)
        else:
            out.append(v)
    return out


class _ParsedFirst(torch.overrides.TorchFunctionMode):
    """The original op parses the arguments first, as plain torch does (a
    call no signature of it accepts raises torch's TypeError, before any
    __torch_function__ sees it); a call it accepts reaches this mode first,
    which dispatches it with what the user called as `func`."""

    def __init__(self, guarded, relevant):
        super().__init__()
        self.guarded = guarded
        self.relevant = relevant

    def __torch_function__(self, func, types, args=(), kwargs=None):
        return _handle_tf(self.guarded, self.relevant, *args, **(kwargs or {}))


def _dispatch(guarded, args, kwargs, original=None):
    """torch.overrides' dispatch, failing with the message torch's C dispatch
    gives; `original`: a C op whose parser sees the arguments first."""
    relevant = _relevant(args, kwargs)
    try:
        if original is not None and type(original) is _BUILTIN:
            with _ParsedFirst(guarded, relevant):
                return original(*args, **kwargs)
        return _handle_tf(guarded, relevant, *args, **kwargs)
    except TypeError as error:
        if not str(error).startswith("no implementation found for"):
            raise
        handlers = [f"  - tensor subclass {type(a)}" for a in torch.overrides._get_overloaded_args(relevant)]
        mode = torch.overrides._get_current_function_mode() if torch._C._is_torch_function_mode_enabled() else None
        if mode is not None:
            handlers.insert(0, f"  - mode object {mode}")
        error.args = (
            f"Multiple dispatch failed for 'torch.{guarded.__name__}'; all __torch_function__ handlers returned NotImplemented:\n\n"
            + "\n".join(handlers)
            + "\n\nFor more information, try re-running with TORCH_LOGS=not_implemented",
        )
        raise


# Each wrapper below ends the same way. The fast path (a CPU tensor at "on" or
# "async": the op checks its own values) runs the op from the caller's line
# and explains only what it raises. Whatever leaves the wrapper has the
# guard's frames removed and goes on with a bare `raise` (no frame added).


class _Standin(functools.partial):
    """A module's guarded function (``torch.gather``, ``F.one_hot``): it calls
    the wrapper and compares and hashes as the op it stands for.

    In plain torch ``torch.scatter`` is ``torch._C._VariableFunctions.scatter``
    (one object): a ``__torch_function__`` table keyed by either, built before
    the guard was installed or after it, matches what ``__torch_function__`` is
    handed, and torch's own tables keyed by the builtin
    (``annotated_fn_args``, ``torch.overrides``' caches) hold the name the user
    calls. Equal to its original and hashed as it, the wrapper keeps every such
    lookup as it was. A partial: called from C, it adds no frame (the
    wrapper's caller is still the user's line), dynamo traces it through, and
    like a builtin it does not bind as a method; about 70 ns a call more than
    a bare function. Tensor's methods stay functions: they must bind."""

    __slots__ = ()

    def __eq__(self, other):
        return True if other is self or other is self.__devassert_original__ else NotImplemented

    def __hash__(self):
        return hash(self.__devassert_original__)

    def __reduce__(self):
        # Pickled (and copied) by name, as a function: `module.qualname`.
        return self.__qualname__

    def __repr__(self):
        return f"<devassert guard of {self.__devassert_original__!r}>"


def _wrap(original, check, dispatch_here, standin):
    """The wrapper of one entry point. `dispatch_here`: torch's dispatch would
    hand __torch_function__ the original function (torch.* functions are
    looked up on torch._C._VariableFunctions), so the wrapper dispatches itself
    and hands over what the user called, as plain torch does. `standin`: the
    wrapper is a `_Standin` (a module's function, not a method)."""
    lists = check.multi  # index_put's indices: a list whose items count too
    cpu_checks = check.cpu_checks and not check.strict_only

    def guarded(*args, **kwargs):
        # Dynamo reads no level here: a change of level recompiles nothing.
        if _is_dynamo() or _level == OFF:
            return original(*args, **kwargs)
        caller = _getframe(1)
        fast = False
        try:
            if _skip_next():
                return _redispatched(original, check, args, kwargs, caller)
            if _has_tf(args) or (kwargs and _has_tf(tuple(kwargs.values()))) or (lists and _has_tf(_relevant(args, kwargs))):
                # Subclasses, duck types and modes: one __torch_function__
                # call, before any attribute of theirs is read, with what the
                # user called as `func`.
                return _dispatch(called, args, kwargs, original) if dispatch_here else original(*args, **kwargs)
            first = args[0] if args else None
            fast = cpu_checks and type(first) in _TENSOR_TYPES and _level != STRICT and first.is_cpu and not _violation.PRECHECK_CPU
            if fast:
                site = _sites.get((id(caller.f_code), caller.f_lasti)) or _caller.site(caller)
                return site[0](original, args, kwargs)
            return _checked(original, check, args, kwargs, caller)
        except Exception as error:
            try:
                if fast:
                    _explain(original, check, args, kwargs, error, False)
            except Exception as replaced:
                _caller.trim(replaced)
                raise
            _caller.trim(error)
            raise

    # What the user calls, and __torch_function__ is handed.
    called = _Standin(guarded) if standin else guarded
    _name_like(called, original, guarded)
    return called


def _subscript_has_tf(self, key, value):
    # What torch's indexing dispatch looks at: the tensor, the key (or the
    # items of a tuple key) and the value.
    if type(key) is tuple:
        return _has_tf((self, *key, *value))
    return _has_tf((self, key, *value))


def _wrap_getitem(original, check):
    """Tensor.__getitem__ / __setitem__: an int, slice, None or Ellipsis key
    (the common case) returns before anything else is looked at."""

    def guarded(self, key, *value):
        if type(key) in _SIMPLE_KEYS or _level == OFF or _is_dynamo():
            return original(self, key, *value)
        redispatched = _skip_next()
        if not redispatched and _subscript_has_tf(self, key, value):
            # torch's indexing dispatch finds this wrapper on torch.Tensor and
            # hands it to __torch_function__ as `func`.
            return original(self, key, *value)
        caller = _getframe(1)
        args = (self, key, *value)
        fast = False
        try:
            if redispatched:
                return _redispatched(original, check, args, {}, caller)
            fast = _level != STRICT and self.is_cpu and not _violation.PRECHECK_CPU and (type(self) in _TENSOR_TYPES or not _plain.wrapped((self,), {}))
            if fast:
                site = _sites.get((id(caller.f_code), caller.f_lasti)) or _caller.site(caller)
                return site[0](original, args, {})
            return _checked(original, check, args, {}, caller)
        except Exception as error:
            try:
                if fast:
                    _explain(original, check, args, {}, error, False)
            except Exception as replaced:
                _caller.trim(replaced)
                raise
            _caller.trim(error)
            raise

    _name_like(guarded, original, guarded)
    return guarded


def _name_like(wrapper, original, function):
    """`wrapper` named as `original`; `function`: the Python function it runs."""
    try:
        functools.update_wrapper(wrapper, original)
    except (AttributeError, TypeError):
        pass
    wrapper.__devassert_original__ = original
    _compiled.never_compiled(function)


_SIMPLE_KEYS = (int, slice, type(None), type(Ellipsis))
_BUILTIN = type(torch._C._get_tracing_state)
# Exact types for the fast test; subclasses (Parameter, ...) take the full path.
_TENSOR_TYPES = (torch.Tensor, torch.nn.Parameter)


def install():
    """Replace every guarded entry point by its wrapper (once per process)."""
    if _installed:
        return
    _samples.install()
    original = _notes.hook_compile(torch)
    if original is not None:
        _installed.append((torch, "compile", original, True))
    _slots.save()
    for owner, attr, check in _ops.entry_points():
        original = getattr(owner, attr, None)
        if original is None or hasattr(original, "__devassert_original__"):
            continue
        wrapper = _wrapper(owner, attr, original, check)
        owned = attr in vars(owner)
        try:
            setattr(owner, attr, wrapper)
        except (AttributeError, TypeError):
            continue
        _installed.append((owner, attr, original, owned))
        _register_for_torchscript(wrapper, original)
    _slots.keep()
    _notes.boundary = _compiled.install(_boundary_level)
    # Spawned and forkserver children: guarded at the level they start at.
    _inherit.install(current_level)


_wrappers = {}  # id(original) -> wrapper: the same object every time the guard goes on


def _wrapper(owner, attr, original, check):
    key = id(original)  # one wrapper for one function (F.one_hot is torch._C._nn.one_hot)
    if key in _wrappers:
        return _wrappers[key]
    if attr in ("__getitem__", "__setitem__"):
        wrapper = _wrap_getitem(original, check)
    else:
        wrapper = _wrap(original, check, owner is torch, not isinstance(owner, type))
    # Found again under the name it replaces (pickle looks functions up by
    # module and qualified name).
    if isinstance(owner, type):
        wrapper.__module__, wrapper.__qualname__ = owner.__module__, f"{owner.__qualname__}.{attr}"
    else:
        wrapper.__module__, wrapper.__qualname__ = owner.__name__, attr
    _wrappers[key] = wrapper
    _identity.register(original, wrapper, attr)
    return wrapper


def _boundary_level():
    """For compiled regions' boundary checks: 0 off, 2 async (no sync on an
    accelerator), 1 on / strict."""
    return 0 if _level == OFF else 2 if _level == ASYNC else 1


def uninstall():
    """Put every original object back: attributes, Tensor's slots, TorchScript's table."""
    global _level
    _level = OFF
    _compiled.uninstall()
    _inherit.uninstall()
    while _installed:
        owner, attr, original, owned = _installed.pop()
        wrapper = getattr(owner, attr, None)
        if owned:
            setattr(owner, attr, original)
        else:
            delattr(owner, attr)  # inherited (Tensor.__getitem__ from its C base): inherited again
        _unregister_for_torchscript(wrapper)
    _slots.restore()
    _samples.uninstall()


def _register_for_torchscript(wrapper, original):
    """TorchScript maps C ops to schemas by the identity of the Python object;
    give the wrapper the original's schema name."""
    try:
        from torch.jit import _builtins

        table = _builtins._get_builtin_table()
        name = table.get(id(original))
        if name is not None:
            _builtins._register_builtin(wrapper, name)
    except Exception:
        pass


def _unregister_for_torchscript(wrapper):
    try:
        from torch.jit import _builtins

        _builtins._get_builtin_table().pop(id(wrapper), None)
    except Exception:
        pass

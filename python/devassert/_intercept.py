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
  one Python call;
- at level "async" on a CUDA tensor, and at every level while a CUDA graph
  is being captured, checks on the device with no host sync and launches the
  op on values made safe (`_async.py`); the finding is raised at a later
  guarded op or at exit;
- under torch.compile / FX / TorchScript tracing calls the op unchanged (a
  hook on torch.compile says once that compiled regions are unchecked).

Python-level functionals (``F.cross_entropy``, ``F.embedding``) are not wrapped
themselves: the C ops they call are, so their own warnings keep their
stacklevel.
"""

import functools

import torch

from . import _async, _faithful, _notes, _ops, _samples, _violation

OFF, ON, STRICT, ASYNC = 0, 1, 2, 3
_NAMES = {"off": OFF, "on": ON, "strict": STRICT, "async": ASYNC}

# The level of the whole process (one global read on the fast path).
_level = OFF
_installed = []  # (owner, attribute, original) for uninstall()

_is_compiling = getattr(getattr(torch, "compiler", None), "is_compiling", None) or (lambda: False)
_is_tracing = torch._C._get_tracing_state


def current_level():
    for name, value in _NAMES.items():
        if value == _level:
            return name
    return "off"


def set_level(level):
    """Install the wrappers on first use and set the level of the process."""
    global _level
    value = _NAMES[level]
    if value != OFF and not _installed:
        install()
    _level = value


def _checked(original, check, args, kwargs, level, first):
    """The path of an op whose values are checked before it runs."""
    if _is_compiling() or _is_tracing():
        return original(*args, **kwargs)
    if _async.armed:
        _async.poll()
    strict = level == STRICT
    if _async.on_device(first):
        capture = _async.capturing()
        if level == ASYNC or capture:
            done, result = _async.call(original, check, args, kwargs, strict, capture)
            if done:
                return result
    try:
        found = check.before(args, kwargs, strict)
    except Exception:
        # A check must never break the program: fake, meta and
        # functorch tensors and unusual arguments go unchecked.
        found = None
    if found is not None:
        _faithful.stop(original, check, args, kwargs, found)
    return _run(original, check, args, kwargs, strict)


def _run(original, check, args, kwargs, strict):
    try:
        return original(*args, **kwargs)
    except Exception as error:
        if not _is_compiling():
            _faithful.explain(original, check, args, kwargs, error, strict)
        raise


def _wrap(original, check):
    """The wrapper of one entry point."""
    strict_only = check.strict_only
    cpu_checks = check.cpu_checks

    def guarded(*args, **kwargs):
        level = _level
        if level == OFF or (strict_only and level != STRICT):
            return original(*args, **kwargs)
        # The kernel runs where the first tensor argument lives. On CPU at
        # level "on" or "async" the op checks its own values: nothing to do
        # before it (written out here, not via _run: one frame less per op).
        first = args[0] if args else None
        if level != STRICT and cpu_checks and type(first) in _TENSOR_TYPES and first.is_cpu and not _violation.PRECHECK_CPU:
            try:
                return original(*args, **kwargs)
            except Exception as error:
                if not _is_compiling():
                    _faithful.explain(original, check, args, kwargs, error, False)
                raise
        return _checked(original, check, args, kwargs, level, first)

    try:
        functools.update_wrapper(guarded, original)
    except (AttributeError, TypeError):
        pass
    guarded.__devassert_original__ = original
    return guarded


def _wrap_getitem(original, check):
    """Tensor.__getitem__ / __setitem__: an int, slice, None or Ellipsis key
    (the common case) returns before anything else is looked at."""

    def guarded(self, key, *value):
        level = _level
        if level == OFF or type(key) in _SIMPLE_KEYS:
            return original(self, key, *value)
        args = (self, key, *value)
        if level != STRICT and self.is_cpu and not _violation.PRECHECK_CPU:
            try:
                return original(self, key, *value)
            except Exception as error:
                if not _is_compiling():
                    _faithful.explain(original, check, args, {}, error, False)
                raise
        return _checked(original, check, args, {}, level, self)

    functools.update_wrapper(guarded, original)
    guarded.__devassert_original__ = original
    return guarded


_SIMPLE_KEYS = (int, slice, type(None), type(Ellipsis))
# Exact types for the fast test; subclasses (Parameter, ...) take the full path.
_TENSOR_TYPES = (torch.Tensor, torch.nn.Parameter)


def install():
    """Replace every guarded entry point by its wrapper (once per process)."""
    if _installed:
        return
    _samples.install()
    original = _notes.hook_compile(torch)
    if original is not None:
        _installed.append((torch, "compile", original))
    for owner, attr, check in _ops.entry_points():
        original = getattr(owner, attr, None)
        if original is None or hasattr(original, "__devassert_original__"):
            continue
        wrap = _wrap_getitem if attr in ("__getitem__", "__setitem__") else _wrap
        wrapper = wrap(original, check)
        # Found again under the name it replaces (pickle looks functions up by
        # module and qualified name).
        if isinstance(owner, type):
            wrapper.__module__, wrapper.__qualname__ = owner.__module__, f"{owner.__qualname__}.{attr}"
        else:
            wrapper.__module__, wrapper.__qualname__ = owner.__name__, attr
        try:
            setattr(owner, attr, wrapper)
        except (AttributeError, TypeError):
            continue
        _installed.append((owner, attr, original))
        _register_for_torchscript(wrapper, original)


def uninstall():
    """Put every original entry point back (for tests and benchmarks)."""
    global _level
    _level = OFF
    while _installed:
        owner, attr, original = _installed.pop()
        setattr(owner, attr, original)


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

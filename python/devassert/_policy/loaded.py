"""Calling a function once a module has loaded: now if it already has, else
right after its body runs (a sys.meta_path finder). The policy wraps
classes of libraries that are usually imported after the guard is on
(DeepSpeed's optimizers, accelerate's AcceleratedOptimizer)."""

import sys

from .._after_import import spec_then

_watched = {}  # module name -> function(module)


class _Finder:
    def find_spec(self, name, path=None, target=None):
        if name not in _watched:
            return None
        return spec_then(self, name, path, target, lambda: _call(name))


_FINDER = _Finder()


def watch(name, fn):
    """fn(module) once the module `name` is loaded (now, or when it loads)."""
    _watched[name] = fn
    _call(name)
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)


def unwatch_all():
    _watched.clear()
    try:
        sys.meta_path.remove(_FINDER)
    except ValueError:
        pass


def _call(name):
    module = sys.modules.get(name)
    fn = _watched.get(name)
    if module is not None and fn is not None:
        fn(module)

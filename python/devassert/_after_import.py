"""Running code right after a module's body has run: a sys.meta_path finder
asks `spec_then` for the module's spec (the guard installs itself after
torch loads; the skip policy wraps DeepSpeed's optimizers after theirs)."""

import sys


def spec_then(finder, name, path, target, then):
    """The spec the other finders give for `name`, its loader made to call
    `then()` once the module's body has run; None when none can load it, or
    its loader cannot be told (the module then loads as usual)."""
    for other in sys.meta_path:
        if other is finder or not hasattr(other, "find_spec"):
            continue
        spec = other.find_spec(name, path, target)
        if spec is not None:
            break
    else:
        return None
    exec_module = getattr(spec.loader, "exec_module", None)
    if exec_module is None:
        return None

    def exec_then(module):
        exec_module(module)
        then()

    try:
        spec.loader.exec_module = exec_then
    except (AttributeError, TypeError):
        return None
    return spec

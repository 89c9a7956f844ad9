"""Guarded entry points that a module bound before the guard was installed.

``from torch import gather`` run before the guard holds torch's own
function: calls through that name are not checked. A ``__torch_function__``
table keyed by ``torch.gather`` still matches (the wrapper of a module's
function compares and hashes as the op, `intercept._Standin`), but one keyed
by a Tensor method (``torch.Tensor.gather``: its wrapper must bind, so it is a
plain function) does not match what ``__torch_function__`` is handed while
the guard is on (the wrapper, as plain torch hands over what the user
called). The guard does not rebind the user's names; it names them, so that
the user can import them after it is on.
"""

import sys

# Modules that hold torch's own functions on purpose.
_OWN = ("torch", "devassert", "functorch", "_pytest", "pytest", "pluggy", "numpy", "typing", "builtins")
# A table larger than this is not searched (a vocabulary, not a dispatch table).
_TABLE_LIMIT = 50_000


# What each module held at its last reading: id(module) -> (its number of
# globals, the entry points it was read for, what it bound). A module whose
# number of globals did not change is not read again: `with devassert.guard():` in a loop
# installs the wrappers each time, and reading every module of a large
# program (3,600 with transformers) takes about 0.2 s.
_read = {}
# Entry points already named by `note`, each named once per process; and
# what the last reading saw (the number of modules, and of __main__'s
# globals, where a notebook binds names): unchanged, `note` reads nothing.
_named = set()
_last = [None]


def _entry_points(installed):
    """(id(original) -> its name, the same for the methods alone: the keys a
    table can miss); of one function installed under several owners, the
    public name (`torch.nn.functional.one_hot`, not `torch._C._nn.one_hot`)."""
    names, methods = {}, {}
    for owner, attr, original, _owned in installed:
        owner_name = getattr(owner, "__qualname__", None) if isinstance(owner, type) else getattr(owner, "__name__", None)
        name = f"{owner_name}.{attr}"
        if id(original) not in names or ("._" in names[id(original)] and "._" not in name):
            names[id(original)] = name
        if isinstance(owner, type):
            methods[id(original)] = name
    return names, methods


def _bound(mod_name, values, names, methods):
    out = []
    for name, value in values:
        what = names.get(id(value))
        if what is not None:
            out.append((f"{mod_name}.{name}", what))
        elif methods and type(value) is dict and 0 < len(value) <= _TABLE_LIMIT:
            for key in list(value)[:_TABLE_LIMIT]:
                what = methods.get(id(key))
                if what is not None:
                    out.append((f"{mod_name}.{name}[{what}]", what))
                    break
    return out


def found(installed):
    """[(where, what)] for the module globals holding an original entry point
    of `installed` (intercept's (owner, attr, original, owned) rows): `where`
    is "module.name", or "module.name[...]" for a dict keyed by a Tensor
    method's; `what` the entry point ("torch.gather"). A module under two names
    (`__main__` and multiprocessing's `__mp_main__`) is read once."""
    names, methods = _entry_points(installed)
    key = frozenset(names)
    out = []
    seen = set()
    for mod_name, module in list(sys.modules.items()):
        if module is None or id(module) in seen or mod_name.split(".")[0] in _OWN:
            continue
        seen.add(id(module))
        try:
            values = vars(module)
        except TypeError:
            continue
        last = _read.get(id(module))
        if last is not None and last[0] == len(values) and last[1] == key:
            out += last[2]
            continue
        hits = _bound(mod_name, list(values.items()), names, methods)
        _read[id(module)] = (len(values), key, hits)
        out += hits
    return out


def warning(installed, hits=None):
    """One line naming what `found` found (or `hits`), or None."""
    hits = found(installed) if hits is None else hits
    if not hits:
        return None
    shown = ", ".join(f"{where} ({what})" for where, what in hits[:5])
    more = f" and {len(hits) - 5} more" if len(hits) > 5 else ""
    tables = any(where.endswith("]") for where, _ in hits)
    what = "calls through these names are not checked" + (
        " and __torch_function__ tables keyed by a Tensor method do not match the guarded op" if tables else ""
    )
    return f"devassert: {shown}{more} bound before the guard was installed: {what}; import them after the guard is on"


def note(installed):
    """`devassert.guard()` has just installed the wrappers (a script or a
    notebook that turns the guard on after its imports, outside pytest's
    plugin, which says it in its header): the warning on stderr, naming
    each binding once per process."""
    main = sys.modules.get("__main__")
    seen = (len(sys.modules), len(getattr(main, "__dict__", ())))
    if _last[0] == seen:
        return
    _last[0] = seen
    hits = [h for h in found(installed) if h not in _named]
    if not hits:
        return
    _named.update(hits)
    try:
        sys.stderr.write(warning(installed, hits) + "\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass

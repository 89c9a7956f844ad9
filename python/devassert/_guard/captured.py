"""Guarded entry points that a module bound before the guard was installed.

``from torch import gather`` (or a ``__torch_function__`` table keyed by
``torch.gather``) run before the guard holds torch's own function: calls
through that name are not checked, and the table does not match what
``__torch_function__`` is handed while the guard is on (the wrapper, as plain
torch hands over what the user called). The guard does not rebind the user's
names; it names them, so that the user can import them after it is on.
"""

import sys

# Modules that hold torch's own functions on purpose.
_OWN = ("torch", "devassert", "functorch", "_pytest", "pytest", "pluggy", "numpy", "typing", "builtins")
# A table larger than this is not searched (a vocabulary, not a dispatch table).
_TABLE_LIMIT = 50_000


def found(installed):
    """[(where, what)] for the module globals holding an original entry point
    of `installed` (intercept's (owner, attr, original, owned) rows): `where`
    is "module.name" or "module.name[...]" for a dict keyed by one; `what`
    the entry point ("torch.gather")."""
    names = {}
    for owner, attr, original, _owned in installed:
        owner_name = getattr(owner, "__qualname__", None) if isinstance(owner, type) else getattr(owner, "__name__", None)
        names.setdefault(id(original), f"{owner_name}.{attr}")
    out = []
    for mod_name, module in list(sys.modules.items()):
        if module is None or mod_name.split(".")[0] in _OWN:
            continue
        try:
            values = list(vars(module).items())
        except TypeError:
            continue
        for name, value in values:
            what = names.get(id(value))
            if what is not None:
                out.append((f"{mod_name}.{name}", what))
            elif type(value) is dict and 0 < len(value) <= _TABLE_LIMIT:
                for key in list(value)[:_TABLE_LIMIT]:
                    what = names.get(id(key))
                    if what is not None:
                        out.append((f"{mod_name}.{name}[{what}]", what))
                        break
    return out


def warning(installed):
    """One line naming what `found` found, or None."""
    hits = found(installed)
    if not hits:
        return None
    shown = ", ".join(f"{where} ({what})" for where, what in hits[:5])
    more = f" and {len(hits) - 5} more" if len(hits) > 5 else ""
    return (
        f"devassert: {shown}{more} bound before the guard was installed: calls through these names are not checked and "
        "__torch_function__ tables keyed by them do not match the guarded op; import them after the guard is on"
    )

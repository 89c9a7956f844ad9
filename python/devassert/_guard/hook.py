"""Install the guard right after `torch` finishes importing, and only then.

`devassert run` calls install() from its generated sitecustomize. A program that
never imports torch pays one finder lookup per top-level import and never
imports torch.
"""

import sys

from .._after_import import spec_then


class _TorchImportHook:
    """A sys.meta_path finder that lets the real finders load torch, then
    installs the guard when torch's module body has run."""

    def find_spec(self, name, path=None, target=None):
        if name != "torch":
            return None

        def then():
            remove()
            _on_torch_imported()

        return spec_then(self, name, path, target, then)


_HOOK = _TorchImportHook()

# The level install() was given; None: DEVASSERT_GUARD's.
_level = None


def remove():
    """Forget the hook (a no-op once torch is imported: it removed itself)."""
    try:
        sys.meta_path.remove(_HOOK)
    except ValueError:
        pass


def _on_torch_imported():
    from .level import env_level as _env_level, guard

    level = _level or _env_level()
    if level == "off":
        return
    try:
        guard(level)
    except Exception as e:  # never stop the user's program because of the guard
        sys.stderr.write(f"devassert: guard not installed: {e}\n")


def install(level=None):
    """Guard at `level` (None: DEVASSERT_GUARD's) now if torch is already
    imported, else as soon as it is."""
    global _level
    _level = level
    if "torch" in sys.modules:
        _on_torch_imported()
    elif _HOOK not in sys.meta_path:
        sys.meta_path.insert(0, _HOOK)

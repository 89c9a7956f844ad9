"""The guard follows the process tree: children started by spawn or
forkserver (``multiprocessing``, ``torch.multiprocessing.spawn`` /
``start_processes``, DataLoader workers with a spawn context) run guarded at
the parent's level, without ``devassert run``.

A forked child inherits the guard with the rest of the parent's memory. A
spawned or forkserver child is a new interpreter that first unpickles the
"preparation data" the parent's ``multiprocessing.spawn.get_preparation_data``
returns, before it imports the parent's ``__main__`` and the function it
runs. While the guard is on, that data carries one more entry whose
unpickling, in the child, turns the guard on at the parent's level (at once
if torch is imported, else when it is). The entry is a call of ``exec`` on a
few lines of this module's text, not a reference to a devassert function:
the child may not find the package on its path yet (the parent's
``sys.path`` is applied after the data is read), and a child that cannot
import it must still start, with one line on stderr.
"""

import os
import sys

_installed = None  # the original get_preparation_data while patched
_KEY = "devassert_guard"

# Run in the child while its preparation data is unpickled.
_RESUME = """
import sys
try:
    if {root!r} not in sys.path:
        sys.path.append({root!r})
    from devassert._guard import child
    child.resume({level!r}, {pid!r})
except Exception as e:
    sys.stderr.write("devassert: the guard did not follow into this child process: %s: %s\\n" % (type(e).__name__, e))
"""


class _Resume:
    """Pickled as exec(_RESUME, {}) with the parent's level."""

    def __init__(self, level):
        self.level = level

    def __reduce__(self):
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        return (exec, (_RESUME.format(root=root, level=self.level, pid=os.getpid()), {}))


def install(level):
    """Patch multiprocessing's preparation data (once); `level()` gives the
    level at the moment a child starts ("off": nothing is added)."""
    global _installed
    import multiprocessing.spawn as spawn

    if _installed is not None:
        return
    original = spawn.get_preparation_data

    def get_preparation_data(name):
        data = original(name)
        current = level()
        if current != "off":
            data[_KEY] = _Resume(current)
        return data

    get_preparation_data.__wrapped__ = original
    spawn.get_preparation_data = get_preparation_data
    _installed = original


def uninstall():
    global _installed
    if _installed is None:
        return
    spawn = sys.modules.get("multiprocessing.spawn")
    if spawn is not None:
        spawn.get_preparation_data = _installed
    _installed = None

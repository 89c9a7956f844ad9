"""In a child process started by spawn or forkserver from a guarded
parent: the guard at the parent's level (`inherit.py` has the child run
`resume` while it reads its preparation data)."""

import sys

# In the child: where the guard came from, for its findings' evidence.
parent = None


def resume(level, pid):
    """In a spawned child: the guard at the parent's `level`."""
    global parent
    from .._checks import report as _report
    from . import hook as _hook

    # A forkserver child is forked from the server, which imported it.
    method = "forkserver" if "multiprocessing.forkserver" in sys.modules else "spawn"
    parent = {"pid": pid, "start_method": method, "level": level}
    _report.inherited = parent
    _hook.install(level)

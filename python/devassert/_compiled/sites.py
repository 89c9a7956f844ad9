"""The in-region check calls of the graphs compiled so far, as attributes
named as each graph's code calls them (`inside._caller`), and the key that
names them.

AOTAutograd's cache key pickles a graph's code with an import of every
function it calls: each must be found under its module and name. A name
stands for one kind of site (`key`); the latest function of that name is
kept.
"""

import hashlib
import os

from .._checks import deferred as _async
from .._checks import violation as _violation

_source_digest = None


def _sources():
    """A digest of the guard's own code: what a check traces into changes with it."""
    global _source_digest
    if _source_digest is None:
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        h = hashlib.sha256()
        for folder, dirs, files in sorted(os.walk(root)):
            dirs.sort()
            for name in sorted(files):
                if name.endswith(".py"):
                    with open(os.path.join(folder, name), "rb") as f:
                        h.update(name.encode() + b"\0" + f.read())
        _source_digest = h.hexdigest()
    return _source_digest


def key(node, call, row, rows, width):
    """What decides the aten ops a site's check traces into: the guarded op
    and its form, the rows it writes, the counter's width, the guard's code
    and the modes that change what a check computes. AOTAutograd's cache keys
    a graph by its code, where each site's call is named by this key, so
    only a graph checked alike is found there."""
    # A builtin's repr holds its address: its module and name say it.
    name = getattr(call, "__qualname__", None) or str(call)
    what = (node.op, getattr(call, "__module__", None), name, row, rows, width,
            _violation.PRECHECK_CPU, _async.FAKE_DEVICE, _sources())
    return hashlib.sha256(repr(what).encode()).hexdigest()[:16]

"""The torch versions the guard supports, and what each leaves out.

The eager guard (every wrapped op, every level) needs torch >= EAGER (2.2:
`make test-oldest` runs the suites on 2.2.2, scripts/requirements-oldest.in).
The checks of torch.compile regions (`_compiled/`)
need torch >= COMPILED: before 2.3 torch cannot say that dynamo is tracing
(`torch.compiler.is_compiling`), and on 2.3 Inductor's graphs differ enough
that 10 of 16 compiled cases went unchecked (one aborted in the kernel's own
assert); on 2.9.1 every compiled case is checked as in eager code. Below
COMPILED the guard leaves compiled regions alone (they run unchecked; an op
dynamo breaks the graph on is still guarded eagerly) and the compiled suites
skip, saying why.
"""

import torch

EAGER = (2, 2)
COMPILED = (2, 9)


def _version():
    """(major, minor) of the running torch ("2.15.0+cu132" -> (2, 15))."""
    parts = []
    for piece in torch.__version__.split("+")[0].split(".")[:2]:
        digits = "".join(c for c in piece if c.isdigit())
        parts.append(int(digits) if digits else 0)
    return tuple(parts)


def _name(v):
    return ".".join(str(p) for p in v)


def eager():
    return _version() >= EAGER


def compiled():
    """Whether compiled regions are checked with this torch."""
    return _version() >= COMPILED and hasattr(getattr(torch, "compiler", None), "is_compiling")


def compiled_skip_reason():
    """Why the torch.compile checks are off here (None when they are on)."""
    if compiled():
        return None
    return f"the torch.compile checks need torch >= {_name(COMPILED)} (this is {torch.__version__}): compiled regions run unchecked"


def describe():
    """One line: the running torch and what the guard does with it."""
    if not eager():
        return f"torch {torch.__version__} is older than the guard supports (torch >= {_name(EAGER)})"
    reason = compiled_skip_reason()
    return f"torch {torch.__version__}: eager guard on" + (f"; {reason}" if reason else "; torch.compile checks on")

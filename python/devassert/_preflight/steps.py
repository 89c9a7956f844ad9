"""Preflight calls the user's objects (a dataset's ``__len__`` and
``__getitem__``, a sampler, a ``collate_fn``) and reads their tensors; what
they raise is raised again naming the object and the step, so that the
message says what preflight was doing, and the user's exception stays
attached (``__cause__``)."""

import contextlib


_PREFIX = "devassert.preflight: "


class PreflightReadError(RuntimeError):
    """A user's object failed while preflight read the data."""


@contextlib.contextmanager
def step(what):
    """Run the block; an exception from it becomes a PreflightReadError that
    names `what` (the object and the step); an inner step's error gets
    `what` in front (the outer step, then the inner one)."""
    try:
        yield
    except PreflightReadError as e:
        inner = str(e).removeprefix(_PREFIX)
        e.args = (f"{_PREFIX}{what}: {inner}",)
        raise
    except Exception as e:  # noqa: BLE001 - every user object's failure is named
        if str(e).startswith(_PREFIX):
            raise  # preflight's own answer about the data: already says it
        raise PreflightReadError(f"{_PREFIX}{what} raised {type(e).__name__}: {e}") from e


def name(obj):
    """A short name for a user's object: its class, or a function's name."""
    fn = getattr(obj, "__qualname__", None) if callable(obj) and not isinstance(obj, type) and hasattr(obj, "__code__") else None
    return fn or type(obj).__name__

"""What the one-story tests compare across commands: the guard's finding
for a callable, and a finding's first cause and first fix."""

import devassert


def guarded(fn):
    """The guard's finding for `fn`, or None when it runs clean."""
    with devassert.guard():
        try:
            fn()
        except Exception as e:  # noqa: BLE001 - the finding is what is compared
            if isinstance(getattr(e, "finding", None), dict):
                return e.finding
            raise
    return None


def first(f):
    return (f["causes"][0]["id"] if f["causes"] else None), (f["fixes"][0] if f["fixes"] else None)

"""The exceptions the guard raises: DeviceAssertPrevented, and one subclass
per exception type a guarded op raises on CPU.

Each class says it is `devassert`'s (``__module__``): tracebacks print
``devassert.DeviceAssertPreventedIndexError`` (what `devassert explain` and
the docs read), and pickle finds the class there, where the package
re-exports it.
"""


class DeviceAssertPrevented(Exception):
    """An op was stopped before launch because an input would fail its device assert.

    Raised as a subclass of the exception the op raises on CPU for the same input
    (``IndexError`` or ``RuntimeError``), so ``except IndexError`` keeps working.
    ``finding`` holds the facts as a devassert/1 finding (a dict); ``rule`` the rule id.
    """

    finding = None
    rule = None

    def __reduce__(self):
        # Pickled as (class, message) plus the finding: DataLoader workers and
        # multiprocessing send exceptions to a parent that has devassert too.
        return (type(self), self.args, {"finding": self.finding, "rule": self.rule})


# One class per exception type the guarded ops raise on CPU, each a
# module-level name so that a parent process can unpickle what a worker raised.
class DeviceAssertPreventedIndexError(DeviceAssertPrevented, IndexError):
    pass


class DeviceAssertPreventedRuntimeError(DeviceAssertPrevented, RuntimeError):
    pass


class DeviceAssertPreventedValueError(DeviceAssertPrevented, ValueError):
    pass


class DeviceAssertPreventedTypeError(DeviceAssertPrevented, TypeError):
    pass


class DeviceAssertPreventedNotImplementedError(DeviceAssertPrevented, NotImplementedError):
    pass


_CLASSES = {
    IndexError: DeviceAssertPreventedIndexError,
    RuntimeError: DeviceAssertPreventedRuntimeError,
    ValueError: DeviceAssertPreventedValueError,
    TypeError: DeviceAssertPreventedTypeError,
    NotImplementedError: DeviceAssertPreventedNotImplementedError,
}

for _cls in (DeviceAssertPrevented, *_CLASSES.values()):
    _cls.__module__ = "devassert"
del _cls


def prevented_class(base):
    """The DeviceAssertPrevented subclass that is also a `base`, or None when
    `base` has none (the caller then raises torch's own exception, annotated)."""
    return _CLASSES.get(base)

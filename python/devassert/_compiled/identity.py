"""The guard's wrappers and torch's ops are one to dynamo's guards, for the
regions compiled while the guard is on.

Dynamo guards the identity of each function a compiled frame looked up by
name: ``torch.gather`` is the guard's wrapper while the guard is on and
torch's builtin after ``unguard()`` (which puts every original back). A
region compiled while the guard is on is right in both states: dynamo
traced the wrapper to the op it calls, the boundary checks read the guard's
level at each call, and the in-region checks read a flag the guard sets
(`inside.py`). So, in such a region, each identity guard on a name that
holds one of the wrappers (or a type guard on it: a module function's
wrapper is a partial) is replaced by one that accepts the wrapper or its
original: turning the guard off and on again recompiles nothing. Any
other value still fails it (a patch of the user's own recompiles, as
without the guard). A region compiled while the guard is off keeps dynamo's
own guard: when the guard goes on, it compiles again, checked (`cache.py`).

(Dynamo's ``guard_filter_fn`` could drop such guards too, but it builds the
guards twice, which fails on numpy inputs in torch 2.15; and leaving the
wrappers in place while off breaks the promise that ``unguard()`` gives
plain torch back.)
"""

import functools

import torch

_pairs = {}  # id of a wrapper or of its original -> (original, wrapper)
_names = set()  # the attribute names the wrappers are installed under
# Dynamo's identity guards (`torch._dynamo.guards.GuardBuilder`), and the
# type guard it puts on a partial (a module function's wrapper is one,
# `intercept._Standin`: its original is a builtin).
_IDENTITY = frozenset(("CLOSURE_MATCH", "FUNCTION_MATCH", "ID_MATCH", "BUILTIN_MATCH", "TYPE_MATCH"))

# Identity guards replaced so far (for tests).
stats = {"replaced": 0}


def register(original, wrapper, name):
    """`wrapper` stands for `original`, installed as attribute `name`."""
    _pairs[id(original)] = _pairs[id(wrapper)] = (original, wrapper)
    _names.add(name)


def _last_name(source):
    """The attribute or global name a source ends with (``G['torch'].gather``: gather)."""
    name = getattr(source, "member", None)
    if name is None:
        name = getattr(source, "global_name", None)
    return name if isinstance(name, str) else None


def loosen():
    """While dynamo compiles a frame with the guard on (its backend is
    called): the guards on a name that holds a wrapper, and on what dynamo
    read through it (the wrapper's closure: the original it calls), become
    one guard that the wrapper or its original passes (`_either`). Returns
    how many guards changed; 0 when dynamo's internals are not as expected
    (the region then compiles once more after the guard goes off)."""
    if not _names:
        return 0
    try:
        ctx = torch._guards.TracingContext.try_get()
        guards = ctx.guards_context.dynamo_guards if ctx is not None else None
        if guards is None:
            return 0
        changed, roots, identity = [], set(), set()
        for g in list(guards):
            if getattr(g.create_fn, "func", None) in (_either, _unless_wrapper):
                continue  # changed at an earlier graph of this frame
            root = _root(g.originating_source)
            if root is None:
                continue
            roots.add(root)
            if g.originating_source == root:
                if _kind(g) not in _IDENTITY:
                    continue
                identity.add(root)
                changed.append((g, _wrapping(_either, None, g.create_fn)))
            else:
                changed.append((g, _wrapping(_unless_wrapper, root, g.create_fn)))
        for g, create in changed:
            _replace(guards, g, g.originating_source, create)
        for root in roots - identity:
            _replace(guards, None, root, _wrapping(_either, None, None))
    except Exception:  # noqa: BLE001 - another torch: dynamo's own guards stay
        return 0
    stats["replaced"] += len(changed)
    return len(changed)


def _root(source):
    """The source a wrapper may be read from that `source` is, or is read
    through (``G['torch'].gather.__closure__[5]``: ``G['torch'].gather``):
    a global or an attribute of one (the user's own objects, reached from
    locals, are left to dynamo)."""
    found = None
    while source is not None:
        if _last_name(source) in _names:
            found = source
        base = getattr(source, "base", None)
        if base is None and type(source).__name__ != "GlobalSource":
            return None
        source = base
    return found


def _wrapping(fn, root, inner):
    """A create_fn that calls `fn(root, inner's function, inner's
    arguments, builder, guard)`, with inner's keywords kept on the partial
    (dynamo reads some of them back: a HASATTR guard's `attr`)."""
    if isinstance(inner, functools.partial):
        return functools.partial(fn, root, inner.func, inner.args, **inner.keywords)
    return functools.partial(fn, root, inner, ())


def _kind(guard):
    fn = guard.create_fn
    fn = fn.func if isinstance(fn, functools.partial) else fn
    return getattr(fn, "__name__", None)


def _replace(guards, old, source, create):
    """Put a guard of `source` made by `create` in place of `old` (None: add it)."""
    new = torch._guards.Guard(source, create)
    if old is not None:
        new.stack, new.user_stack = old.stack, old.user_stack
        guards.inner.discard(old)
        by_source = getattr(guards, "source_to_guards", None)  # torch >= 2.10
        same = by_source.get(source) if by_source is not None else None
        if same is not None and old in same:
            same.remove(old)
    guards.add(new, collect_debug_stack=False)


def _name(source):
    name = source.name
    return name() if callable(name) else name  # a method in torch 2.9


def _wrapped(builder, source):
    """The value at `source` when it is a wrapper or a wrapped original: (original, wrapper)."""
    try:
        try:
            value = builder.get(source)  # torch >= 2.10: a guard or a source
        except (TypeError, AttributeError):
            value = builder.get(_name(source))  # torch 2.9: a name
    except Exception:  # noqa: BLE001 - not a value we can read: dynamo's own guard
        return None
    pair = _pairs.get(id(value))
    return pair if pair is not None and (value is pair[0] or value is pair[1]) else None


def _unless_wrapper(root, inner, args, builder, guard, **kw):
    """Dynamo's guard on what it read through `root`, unless `root` holds a
    wrapper or its original (each wrapper is one object, its closure fixed)."""
    if _wrapped(builder, root) is None:
        return inner(*args, builder, guard, **kw)
    return None


def _either(_root, inner, args, builder, guard, **kw):
    """The value is the wrapper or its original; dynamo's own guard (`inner`,
    None: none) when the name holds neither."""
    pair = _wrapped(builder, guard.originating_source)
    if pair is None:
        return inner(*args, builder, guard, **kw) if inner is not None else None
    original, wrapper = pair

    def wrapper_or_original(v):
        return v is wrapper or v is original

    parts = [f"devassert: {guard.name} is torch's {getattr(original, '__name__', 'op')} or the guard's wrapper of it"]
    manager = builder.get_guard_manager(guard)
    try:
        manager.add_lambda_guard(wrapper_or_original, parts, guard.user_stack)
    except TypeError:  # torch 2.9: no user stack
        manager.add_lambda_guard(wrapper_or_original, parts)
    return None

"""The one table of guarded ops the compiled checks read, keyed by ATen op
name, and the match of a dynamo graph node's target against it.

A node calls a guarded op in whatever form the user spelled it: a torch
function (``torch.gather``: the builtin, or the guard's wrapper when dynamo
recorded the name torch.gather holds now), a Tensor method (``x.gather``: a
``call_method`` node), an operator (``x[idx]``, ``x[idx] = v``), an F-level
function dynamo keeps whole (``F.embedding``, ``F.cross_entropy``), or an
ATen overload (``torch.ops.aten.gather.default``). Each form is reduced to
the ATen op's name and its arguments to those of the op's check (`entry`),
so the boundary (`boundary.py`) and the in-region checks (`inside.py`) check
every form of an op alike. The names are those the catalog lists
(`catalog/*.toml`, ``aten = [...]``): `test_compiled_forms.py` checks that
every catalogued op a Python program can call is here.
"""

import inspect
import operator

import torch
import torch.nn.functional as F

from .._checks import ops as _ops

# Entry points whose ATen op has another name.
_ATEN_NAME = {"__getitem__": "index", "__setitem__": "index_put_"}


def _functional_adapters():
    """F-level functions dynamo keeps in its graphs: (the function, the C op
    it calls as (owner, attribute), how its arguments become the C op's)."""

    def embedding(b):
        return (b["weight"], b["input"]), {}

    def cross_entropy(b):
        return (b["input"], b["target"], b.get("weight"), 1, b.get("ignore_index", -100), b.get("label_smoothing", 0.0)), {}

    def nll_loss(b):
        return (b["input"], b["target"], b.get("weight"), 1, b.get("ignore_index", -100)), {}

    def multi_margin_loss(b):
        return (b["input"], b["target"], b["p"], b["margin"], b["weight"], 1), {}

    def embedding_bag(b):
        # F.embedding_bag flattens a 2-D input into bags itself: only the
        # 1-D form (ids and offsets) is the C op's.
        ids = b["input"]
        example = ids.meta.get("example_value") if isinstance(ids, torch.fx.Node) else None
        if not isinstance(example, torch.Tensor) or example.dim() != 1:
            return None
        mode = {"sum": 0, "mean": 1, "max": 2}.get(b["mode"])
        if mode is None:
            return None
        return (b["weight"], ids, b["offsets"], b["scale_grad_by_freq"], mode, b["sparse"], b["per_sample_weights"], b["include_last_offset"], b["padding_idx"]), {}

    def binary_cross_entropy(b):
        # The weight only scales the loss: the check and torch's error read input and target.
        return (b["input"], b["target"], None, 1), {}

    nn = torch._C._nn
    return [
        (F.embedding, torch, "embedding", embedding),
        (F.embedding_bag, torch, "embedding_bag", embedding_bag),
        (F.cross_entropy, nn, "cross_entropy_loss", cross_entropy),
        (F.nll_loss, nn, "nll_loss_nd", nll_loss),
        (F.multi_margin_loss, nn, "multi_margin_loss", multi_margin_loss),
        (F.binary_cross_entropy, nn, "binary_cross_entropy", binary_cross_entropy),
    ]


def _index_key(args, kwargs):
    """aten.index(self, indices) as x[key]: a None item is a full slice."""
    args, kwargs = _positional_self(args, kwargs)
    indices = args[1] if len(args) > 1 else kwargs["indices"]
    return (args[0], tuple(slice(None) if i is None else i for i in indices)), {}


class Entry:
    """A guarded op: its ATen name, the original callable of each form (for
    torch's own error), the check, and an adapter of a form's arguments to
    the check's (None: the same arguments)."""

    __slots__ = ("aten", "function", "method", "check")

    def __init__(self, aten, check):
        self.aten, self.check = aten, check
        self.function = self.method = None


class _Table:
    def __init__(self):
        self.by_aten = {}  # ATen name -> Entry
        self.by_id = {}  # id of a torch-level callable -> ATen name
        self.functional = {}  # id of an F function -> (aten name, original C op, signature, adapter)
        for owner, attr, check in _ops.entry_points():
            if check.strict_only:
                continue
            fn = getattr(owner, attr, None)
            original = getattr(fn, "__devassert_original__", fn)
            if original is None:
                continue
            name = _ATEN_NAME.get(attr, attr)
            e = self.by_aten.setdefault(name, Entry(name, check))
            if owner is torch.Tensor:
                e.method = e.method or original
            else:
                e.function = e.function or original
            self.by_id.setdefault(id(original), name)
        for fn, owner, attr, adapt in _functional_adapters():
            if attr in self.by_aten and self.by_aten[attr].function is not None:
                self.functional[id(fn)] = (attr, self.by_aten[attr].function, inspect.signature(fn), adapt)


_table = None


def table():
    """The table (made once, after the guard's entry points are known)."""
    global _table
    if _table is None:
        _table = _Table()
    return _table


def guarded_aten_ops():
    """The ATen names of every op checked in compiled regions."""
    return sorted(table().by_aten)


def _aten_of(target):
    """An ATen overload or packet's op name (aten namespace only), or None."""
    if isinstance(target, torch._ops.OpOverload):
        ns, _, name = target._schema.name.partition("::")
    elif isinstance(target, torch._ops.OpOverloadPacket):
        ns, _, name = target._qualified_op_name.partition("::")
    else:
        return None
    return name if ns == "aten" else None


def match(node):
    """(aten name, original, check, adapter) for a node that calls a guarded
    op, in any form; None otherwise. `adapter(args, kwargs)` gives the
    check's arguments (and the original's: torch's error comes from it), or
    None when that call is left unchecked; TypeError when they do not bind."""
    t = table()
    op = node.op
    if op == "call_method":
        e = t.by_aten.get(_ATEN_NAME.get(node.target, node.target))
        if e is None or e.method is None:
            return None
        return e.aten, e.method, e.check, _same
    if op != "call_function":
        return None
    target = node.target
    if target is operator.getitem or target is operator.setitem:
        e = t.by_aten.get("index" if target is operator.getitem else "index_put_")
        return (e.aten, e.method, e.check, _same) if e is not None and e.method is not None else None
    found = t.functional.get(id(target))
    if found is not None:
        name, original, sig, adapt = found
        return name, original, t.by_aten[name].check, lambda args, kwargs: adapted_args(sig, adapt, args, kwargs)
    name = _aten_of(target)
    if name is not None:
        if name == "index":
            e = t.by_aten.get("index")
            return (name, e.method, e.check, _index_key) if e is not None else None
        e = t.by_aten.get(name)
        if e is None:
            return None
        original = e.function or e.method
        return name, original, e.check, _positional_self
    # A torch function: the builtin, or the guard's wrapper of it.
    name = t.by_id.get(id(getattr(target, "__devassert_original__", target)))
    if name is None:
        return None
    e = t.by_aten[name]
    return name, e.function or e.method, e.check, _same


def _same(args, kwargs):
    return tuple(args), dict(kwargs)


def _positional_self(args, kwargs):
    """An ATen overload's `self=` keyword as the torch function's first argument."""
    if "self" in kwargs:
        kwargs = dict(kwargs)
        args = (kwargs.pop("self"), *args)
    return tuple(args), dict(kwargs)


def adapted_args(sig, adapt, args, kwargs):
    """An F-level function's arguments as its C op's (what the check reads),
    or None when the adapter leaves the call unchecked; TypeError when they
    do not bind."""
    bound = sig.bind(*args, **kwargs)
    bound.apply_defaults()
    return adapt(bound.arguments)


def entry(node):
    """(original, check, args, kwargs) of a node that calls a guarded op, its
    arguments as the check reads them, or None."""
    found = match(node)
    if found is None:
        return None
    _, original, check, adapt = found
    try:
        adapted = adapt(node.args, dict(node.kwargs))
    except (TypeError, ValueError):
        return None
    if adapted is None:
        return None
    return original, check, adapted[0], adapted[1]


def callable_of(node, original):
    """What an in-region check calls for `node`: the node's own op, never the
    guard's wrapper (its checks are the region's own)."""
    target = node.target if node.op == "call_function" else original
    return getattr(target, "__devassert_original__", target)

"""Reading dynamo's FX graph for the guard: which node calls a guarded op
(`entry`: its target matched on the one table of guarded ATen ops,
`table.py`, in any form), where each argument comes from (`at_boundary`: a graph input
through views and integer casts, a constant, or a tensor computed in the
region, of static shape), and the user's frames dynamo recorded for it.
The boundary check (`boundary.py`) and the in-region checks (`inside.py`)
both read graphs through here.
"""

import re
import types

import torch

from .._checks import report as _report
from .._checks import violation as _violation
from . import table as _table

# Ops that give the same values in another shape: checking their input checks their output.
_VIEWS = frozenset(
    ("view", "reshape", "unsqueeze", "squeeze", "flatten", "contiguous", "expand", "expand_as", "t", "transpose", "permute", "clone", "detach", "view_as", "reshape_as", "ravel", "movedim")
)
# Integer casts: same values from an integer tensor.
_CASTS = frozenset(("long", "int", "short", "to", "type"))


# Seconds spent reading graphs (bench/guard reports it as the compile-time cost).
analysis_seconds = 0.0


class _Frame:
    """A frame of the user's code as dynamo recorded it: what `_report.where`
    and the checks' hints read of a frame."""

    __slots__ = ("f_code", "f_lineno", "f_back")

    def __init__(self, filename, line, name):
        self.f_code = types.SimpleNamespace(co_filename=filename, co_name=name)
        self.f_lineno = line
        self.f_back = None


_FRAME_LINE = re.compile(r'File "(.+)", line (\d+), in (\S+)')


def _frames(stack_trace):
    """The frames of a node's stack trace, innermost first, without torch's
    and the guard's own (dynamo traced through the guard's wrappers)."""
    found = _FRAME_LINE.finditer(stack_trace or "")
    out = [_Frame(m[1], int(m[2]), m[3]) for m in found if not _report._is_internal(m[1])]
    out.reverse()
    return out


class _Input:
    """A graph input, with the views that lead from it to an op's argument."""

    __slots__ = ("index", "chain", "integer")

    def __init__(self, index, chain, integer):
        self.index = index
        self.chain = chain  # [(method name, args)] applied in order
        self.integer = integer  # an integer tensor: an index the check may read

    def value(self, inputs, device=None):
        return _apply(inputs[self.index], self.chain)


def _apply(t, chain):
    for name, args in chain:
        t = getattr(t, name)(*args)
    return t


class _Const:
    """A tensor the graph builds from constants (`torch.tensor([...])`, a
    numpy scalar): made once, when the graph is read."""

    __slots__ = ("tensor", "integer")

    def __init__(self, tensor):
        self.tensor = tensor
        self.integer = _violation.int_tensor(tensor)

    def value(self, inputs, device=None):
        return self.tensor if device is None else self.tensor.to(device)


# Constructors whose result depends on their arguments alone (no random
# draw): a node calling one on constants is evaluated when the graph is read.
_CONSTRUCTORS = frozenset((torch.tensor, torch.as_tensor, torch.arange))


def _constant(node):
    """The value of a node built from constants only, or None."""
    target = node.target
    numpy_scalar = type(target).__name__ == "numpy_to_tensor_wrapper"  # np.int64(255) in a graph
    if node.op != "call_function" or not (target in _CONSTRUCTORS or numpy_scalar):
        return None
    parts = list(node.args) + list(node.kwargs.values())
    if _has_node(parts):
        return None
    try:
        value = target(*node.args, **node.kwargs)
    except Exception:  # noqa: BLE001 - left as a stand-in
        return None
    return _Const(value) if isinstance(value, torch.Tensor) and not value.is_meta else None


def _has_node(a):
    if isinstance(a, torch.fx.Node):
        return True
    if isinstance(a, (list, tuple)):
        return any(_has_node(x) for x in a)
    if isinstance(a, dict):
        return any(_has_node(x) for x in a.values())
    return False


class _StandIn:
    """A tensor computed inside the region: only its (static) shape is used."""

    __slots__ = ("shape", "dtype", "meta")

    def __init__(self, shape, dtype):
        self.shape, self.dtype = shape, dtype
        self.meta = None  # made once: the shape is static

    def value(self, inputs, device=None):
        if device is None:
            if self.meta is None:
                self.meta = torch.empty(self.shape, dtype=self.dtype, device="meta")
            return self.meta
        return torch.empty(self.shape, dtype=self.dtype, device=device)


class _NotStatic(Exception):
    pass


def _example(node):
    v = node.meta.get("example_value")
    return v if isinstance(v, torch.Tensor) else None


def _trace(node, placeholders):
    """An argument node as an _Input (through views and integer casts) or a _StandIn."""
    chain = []
    n = node
    while True:
        if n.op == "placeholder":
            if n in placeholders:
                chain.reverse()
                v = _example(n)
                return _Input(placeholders[n], chain, v is not None and _violation.int_tensor(v))
            break
        name = n.target if n.op == "call_method" else getattr(n.target, "__name__", None) if n.op == "call_function" else None
        if name in _VIEWS or name in _CASTS:
            src = n.args[0] if n.args else None
            src_value = _example(src) if isinstance(src, torch.fx.Node) else None
            if name in _CASTS:
                # Only an integer-to-integer cast keeps the values.
                out = _example(n)
                if src_value is None or out is None or not _violation.int_tensor(src_value) or not _violation.int_tensor(out):
                    break
            elif any(isinstance(a, torch.fx.Node) for a in list(n.args[1:]) + list(n.kwargs.values())):
                break
            elif n.kwargs:
                break
            else:
                chain.append((name, tuple(n.args[1:])))
            n = src
            if not isinstance(n, torch.fx.Node):
                break
            continue
        break
    const = _constant(n) if isinstance(n, torch.fx.Node) else None
    if const is not None:
        chain.reverse()
        return _Const(_apply(const.tensor, chain))
    v = _example(node)
    if v is None:
        raise _NotStatic
    shape = tuple(v.shape)
    if not all(type(s) is int for s in shape):
        raise _NotStatic
    return _StandIn(shape, v.dtype)


def _resolve(a, placeholders):
    """A node argument as a template: nodes become _Input / _StandIn."""
    if isinstance(a, torch.fx.Node):
        return _trace(a, placeholders)
    if isinstance(a, (list, tuple)):
        return type(a)(_resolve(x, placeholders) for x in a)
    if isinstance(a, slice):
        parts = (a.start, a.stop, a.step)
        if any(isinstance(p, torch.fx.Node) for p in parts):
            raise _NotStatic
        return a
    if isinstance(a, (torch.SymInt, torch.SymFloat, torch.SymBool)):
        raise _NotStatic
    return a


def _has_input(t, any_dtype=False, consts=True):
    """Whether a value the check reads reaches the op from outside the graph's
    arithmetic: an integer graph input or constant (an index), or, for a check
    of values (`any_dtype`: probabilities, offsets), any graph input."""
    if isinstance(t, _Input):
        return t.integer or any_dtype
    if isinstance(t, _Const):
        return consts and t.integer
    if isinstance(t, (list, tuple)):
        return any(_has_input(x, any_dtype, consts) for x in t)
    if isinstance(t, dict):
        return any(_has_input(x, any_dtype, consts) for x in t.values())
    return False


def entry(node):
    """(original, check, args, kwargs) of a node that calls a guarded op, in
    any form, its arguments as the check reads them, or None (`table.py`)."""
    return _table.entry(node)


def placeholders_of(gm):
    return {n: i for i, n in enumerate(n for n in gm.graph.nodes if n.op == "placeholder")}


def at_boundary(check, args, kwargs, placeholders):
    """A node's arguments resolved against the graph's inputs, and whether its
    check reads values (not a range), when the boundary can check it: a value
    the check reads comes from outside the graph's arithmetic and the rest
    has static shapes. None otherwise."""
    try:
        targs = _resolve(tuple(args), placeholders)
        tkwargs = {k: _resolve(v, placeholders) for k, v in kwargs.items()}
    except _NotStatic:
        return None
    values = not check.deferrable  # a check of values, not a range test
    if not (_has_input(targs, values) or _has_input(tkwargs, values)):
        return None
    return targs, tkwargs, values


def computed_index(node, placeholders):
    """Whether an integer tensor argument of `node` is computed inside the
    region (not a graph input through views and integer casts): a value the
    boundary check cannot see."""
    nodes = []
    torch.fx.node.map_arg((node.args, node.kwargs), nodes.append)
    for n in nodes:
        v = _example(n)
        if v is None or not _violation.int_tensor(v):
            continue
        try:
            if not isinstance(_trace(n, placeholders), (_Input, _Const)):
                return True
        except _NotStatic:
            return True
    return False


def with_callers(frames, callers):
    """A node's recorded frames (inside the region, innermost first), then the
    frames of the call that are not among them."""
    seen = {(f.f_code.co_filename, f.f_code.co_name) for f in frames}
    return frames + [f for f in callers if (f.f_code.co_filename, f.f_code.co_name) not in seen]

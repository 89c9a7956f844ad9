"""The guard at the boundary of torch.compile's regions.

Inside a compiled region the ops run as generated kernels: the wrappers of
`_intercept.py` are not called. What the guard can do without changing the
compiled program is check, when the compiled function is called and before
its kernels launch, the inputs that reach a guarded op's index unchanged.

The hook is the backend: while the guard is installed, the ``__call__`` of
torch's own backend wrappers (``_TorchCompileInductorWrapper``,
``_TorchCompileWrapper``: every ``torch.compile``, ``nn.Module.compile``
included, goes through one of them) is wrapped. It is handed dynamo's FX
graph before Inductor lowers it: each node that calls a guarded op is read
(its target, its arguments, the user's line dynamo recorded), and each of its
tensor arguments is followed back through views and integer casts to a
graph input. The compiled function the backend returns is wrapped in a
function that, on each call, runs the guarded op's own check on those inputs
(one aminmax per index, as in eager code) and then calls the compiled code.
Dynamo's guards and cache keys are not touched, so nothing recompiles.

A finding is the eager one: the same check and the same message, located at
the user's line from the node's stack trace (on CPU, raised only when the CPU
op rejects the values, as in eager code). Besides graph inputs, a tensor the
graph builds from constants (`torch.tensor([...])`, `np.int64(255)`) is
evaluated once and checked; a check of values (multinomial, bce, embedding_bag
offsets) reads float inputs too. Arguments computed inside the region
(logits, a table built in the graph) stand in as meta tensors of their traced
shape (their values are never read), so a node is checked only when their
shapes are static. Indices computed inside the region are checked in the
graph itself (`_compiled_inside.py`; see docs/how-it-works.md).

Ops dynamo does not compile (a data-dependent output shape breaks the graph)
run as Python: `never_compiled` keeps dynamo from compiling the guard's
wrappers as frames of their own there, so the eager guard checks them.
"""

import inspect
import operator
import re
import time
import types

import torch
import torch.nn.functional as F

from . import _async, _compiled_inside, _faithful, _ops, _report, _support, _violation

# Ops that give the same values in another shape: checking their input checks their output.
_VIEWS = frozenset(
    ("view", "reshape", "unsqueeze", "squeeze", "flatten", "contiguous", "expand", "expand_as", "t", "transpose", "permute", "clone", "detach", "view_as", "reshape_as", "ravel", "movedim")
)
# Integer casts: same values from an integer tensor.
_CASTS = frozenset(("long", "int", "short", "to", "type"))

# Seconds spent reading graphs (bench/guard reports it as the compile-time cost).
analysis_seconds = 0.0
# Graphs read, and the guarded nodes found checkable at their boundary (for tests).
stats = {"graphs": 0, "checked_nodes": 0}


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


def _functional_adapters():
    """F-level functions dynamo keeps in its graphs, and how their arguments
    become those of the C op the guard's check is written for."""

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
        if not isinstance(ids, torch.fx.Node) or _example(ids) is None or _example(ids).dim() != 1:
            return None
        mode = {"sum": 0, "mean": 1, "max": 2}.get(b["mode"])
        if mode is None:
            return None
        return (b["weight"], ids, b["offsets"], b["scale_grad_by_freq"], mode, b["sparse"], b["per_sample_weights"], b["include_last_offset"], b["padding_idx"]), {}

    def binary_cross_entropy(b):
        # The weight only scales the loss: the check and torch's error read input and target.
        return (b["input"], b["target"], None, 1), {}

    nn = torch._C._nn
    return {
        id(F.embedding): (F.embedding, torch, "embedding", embedding),
        id(F.embedding_bag): (F.embedding_bag, torch, "embedding_bag", embedding_bag),
        id(F.cross_entropy): (F.cross_entropy, nn, "cross_entropy_loss", cross_entropy),
        id(F.nll_loss): (F.nll_loss, nn, "nll_loss_nd", nll_loss),
        id(F.multi_margin_loss): (F.multi_margin_loss, nn, "multi_margin_loss", multi_margin_loss),
        id(F.binary_cross_entropy): (F.binary_cross_entropy, nn, "binary_cross_entropy", binary_cross_entropy),
    }


_tables = None


def _lookup_tables():
    """(by id of the original callable, by Tensor method name, F adapters):
    the guarded entry points, but those checked at the strict level only."""
    global _tables
    if _tables is None:
        by_obj, by_method = {}, {}
        for owner, attr, check in _ops.entry_points():
            if check.strict_only:
                continue
            fn = getattr(owner, attr, None)
            original = getattr(fn, "__devassert_original__", fn)
            if original is None:
                continue
            by_obj.setdefault(id(original), (original, check))
            if owner is torch.Tensor:
                by_method.setdefault(attr, (original, check))
        adapters = {}
        for key, (fn, owner, attr, adapt) in _functional_adapters().items():
            entry = next(((o, a, c) for o, a, c in _ops.entry_points() if o is owner and a == attr), None)
            if entry is not None:
                wrapper = getattr(owner, attr)
                original = getattr(wrapper, "__devassert_original__", wrapper)
                adapters[key] = (original, entry[2], inspect.signature(fn), adapt)
        _tables = (by_obj, by_method, adapters)
    return _tables


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


def _dynamic(t):
    if isinstance(t, (_Input, _StandIn, _Const)):
        return True
    return isinstance(t, (list, tuple)) and any(_dynamic(x) for x in t)


def _builder(t):
    """A function of (inputs, device) that makes `t`: nodes from the call's
    inputs, the rest as it is."""
    if isinstance(t, (_Input, _StandIn, _Const)):
        return t.value
    kind = type(t)
    parts = [_builder(x) if _dynamic(x) else (lambda inputs, device=None, x=x: x) for x in t]
    return lambda inputs, device=None: kind(p(inputs, device) for p in parts)


class _Point:
    """One guarded node checked at the boundary: its arguments as constants,
    and the places the call's inputs fill (made once, when the graph is read:
    a call pays only for those)."""

    __slots__ = ("original", "check", "args", "kwargs", "fill", "fill_kw", "frames", "once", "done")

    def __init__(self, original, check, args, kwargs, frames, once=False):
        self.original, self.check, self.frames = original, check, frames
        # `once`: only constants are checked, against static shapes: a first
        # clean check holds for every call (`done`), with no sync per call.
        self.once, self.done = once, False
        self.args = list(args)
        self.kwargs = dict(kwargs)
        self.fill = [(i, _builder(a)) for i, a in enumerate(args) if _dynamic(a)]
        self.fill_kw = [(k, _builder(v)) for k, v in kwargs.items() if _dynamic(v)]

    def build(self, inputs, device=None):
        args = self.args.copy()
        for i, make in self.fill:
            args[i] = make(inputs, device)
        kwargs = self.kwargs
        if self.fill_kw:
            kwargs = dict(kwargs)
            for k, make in self.fill_kw:
                kwargs[k] = make(inputs, device)
        return tuple(args), kwargs


def plan(gm):
    """The guarded nodes of dynamo's graph `gm` that can be checked on its inputs."""
    global analysis_seconds
    start = time.perf_counter()
    try:
        return _plan(gm)
    except Exception:  # noqa: BLE001 - a graph we cannot read is left unchecked, never broken
        return []
    finally:
        analysis_seconds += time.perf_counter() - start
        stats["graphs"] += 1


def entry(node):
    """(original, check, args, kwargs) of a node that calls a guarded op, its
    arguments as the check reads them (an F-level function's become its C
    op's), or None."""
    by_obj, by_method, adapters = _lookup_tables()
    args, kwargs = node.args, dict(node.kwargs)
    entry = None
    if node.op == "call_function":
        if node.target is operator.getitem:
            entry = by_method.get("__getitem__")
        elif node.target is operator.setitem:
            entry = by_method.get("__setitem__")
        elif id(node.target) in adapters:
            original, check, sig, adapt = adapters[id(node.target)]
            try:
                adapted = adapted_args(sig, adapt, args, kwargs)
            except TypeError:
                return None
            if adapted is None:
                return None
            args, kwargs = adapted
            entry = (original, check)
        else:
            entry = by_obj.get(id(node.target))
    elif node.op == "call_method":
        entry = by_method.get(node.target)
    if entry is None:
        return None
    return entry[0], entry[1], args, kwargs


def adapted_args(sig, adapt, args, kwargs):
    """An F-level function's arguments as its C op's (what the check reads),
    or None when the adapter leaves the call unchecked; TypeError when they
    do not bind."""
    bound = sig.bind(*args, **kwargs)
    bound.apply_defaults()
    return adapt(bound.arguments)


def placeholders_of(gm):
    return {n: i for i, n in enumerate(n for n in gm.graph.nodes if n.op == "placeholder")}


def _plan(gm):
    placeholders = placeholders_of(gm)
    static = all(type(d) is int for n in placeholders if _example(n) is not None for d in _example(n).shape)
    points = []
    for node in gm.graph.nodes:
        found = entry(node)
        if found is None:
            continue
        original, check_, args, kwargs = found
        resolved = at_boundary(check_, args, kwargs, placeholders)
        if resolved is None:
            continue
        targs, tkwargs, values = resolved
        once = static and not (_has_input(targs, values, False) or _has_input(tkwargs, values, False))
        points.append(_Point(original, check_, targs, tkwargs, _frames(node.meta.get("stack_trace")), once))
    stats["checked_nodes"] += len(points)
    return points


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


def check(points, inputs, host_only=False):
    """Run each point's check on the call's inputs; raise the eager finding.
    `host_only` (the async level, a CUDA graph capture): indices on an
    accelerator (CPU ones when `_async.FAKE_DEVICE`) are left, as a check
    there would sync: the region checks them inside
    (`_compiled_inside.instrument(gm, sync_free=True)`; not during a capture)."""
    for p in points:
        if p.done:
            continue
        try:
            args, kwargs = p.build(inputs)
            if host_only and (_async.FAKE_DEVICE or not _on_host(args, kwargs, False)):
                continue
            # On CPU, as in eager code: a range check finds what the CPU op
            # rejects; a check of values asks what the CPU op rejects (the
            # after-path), not what a device kernel would assert.
            if not p.check.deferrable and _on_host(args, kwargs):
                found = p.check.after(args, kwargs, False)
            else:
                found = p.check.before(args, kwargs, True)
        except Exception:  # noqa: BLE001 - as in eager code: a check never breaks the program
            found = None
        if found is None:
            p.done = p.once
            continue
        # The op runs (on CPU copies, for torch's own error) on real tensors.
        host = _on_host(args, kwargs)
        args, kwargs = p.build(inputs, found.tensor.device)
        if host and not found.cpu_undefined and _faithful._attempt(p.original, args, kwargs) is None:
            continue  # the CPU op accepts these values: eager code goes on too
        _faithful.stop(p.original, p.check, args, kwargs, found, with_callers(p.frames, _report.caller_frames()))


def _on_host(args, kwargs, eager_cpu=True):
    """Whether every tensor argument is on the CPU (stand-ins are meta);
    `eager_cpu`: and the eager guard takes its CPU path for them."""
    if eager_cpu and _violation.PRECHECK_CPU:
        return False
    return all(t.is_cpu or t.is_meta for t in list(args) + list(kwargs.values()) if isinstance(t, torch.Tensor))


def with_callers(frames, callers):
    """A node's recorded frames (inside the region, innermost first), then the
    frames of the call that are not among them."""
    seen = {(f.f_code.co_filename, f.f_code.co_name) for f in frames}
    return frames + [f for f in callers if (f.f_code.co_filename, f.f_code.co_name) not in seen]


def guarded(compiled, points, level, region=None):
    """`compiled` called after its inputs are checked (while the guard is
    on: `level()` is 0 when off, 2 at the async level, 1 otherwise), and its
    in-region checks read after it (`region`: `_compiled_inside.Region`)."""
    # Dynamo calls what a backend returns with the graph's inputs as arguments.
    def run(*args):
        on = level()
        if on and not torch.compiler.is_compiling():
            if _compiled_inside._pending:
                _compiled_inside.poll()
            # While a CUDA graph is captured a sync would break the capture.
            check(points, args, on == 2 or _async.capturing())
        out = compiled(*args)
        if region is not None and on:
            region.after()
        return out

    return run


def _skip_strategy():
    ef = getattr(getattr(torch._C, "_dynamo", None), "eval_frame", None)
    try:
        skip = ef._FrameAction.SKIP
        return ef.set_code_exec_strategy, ef._FrameExecStrategy(skip, skip)
    except AttributeError:  # another torch: its dynamo may not compile such frames
        return None


def never_compiled(wrapper):
    """Keep dynamo from compiling `wrapper`'s frame, and what it calls, as a
    frame of its own. Dynamo still inlines the wrapper while tracing user code
    (it sees the op the wrapper calls), but past a graph break (an op with a
    data-dependent shape: bincount, repeat_interleave, a boolean mask) it
    compiles the frames the user's code calls, and in a compiled frame
    `is_dynamo_compiling()` is the constant True: the wrapper would call the
    op unchecked. Skipped, the frame runs as Python: the eager guard."""
    global _skip
    if _skip is None:
        _skip = _skip_strategy() or False
    if _skip:
        _skip[0](wrapper.__code__, _skip[1])


_skip = None
_patched = []  # (class, original __call__)


def install(level):
    """Wrap the __call__ of torch.compile's backend wrappers; `level()` says
    whether the guard is on when a compiled function is called."""
    if _patched:
        return True
    if not _support.compiled():
        return False  # an older torch: compiled regions run unchecked (_support.py)
    for name in ("_TorchCompileInductorWrapper", "_TorchCompileWrapper"):
        cls = getattr(torch, name, None)
        call = getattr(cls, "__call__", None) if cls is not None else None
        if call is None:
            continue

        def __call__(self, model_, inputs_, *rest, _original=call, **kw):
            points = plan(model_) if level() else []
            region = _compiled_inside.instrument(model_, level() == 2) if level() else None
            compiled = _original(self, model_, inputs_, *rest, **kw)
            return guarded(compiled, points, level, region) if points or region else compiled

        __call__.__devassert_original__ = call
        cls.__call__ = __call__
        _patched.append((cls, call))
    return bool(_patched)


def uninstall():
    while _patched:
        cls, call = _patched.pop()
        cls.__call__ = call

"""The guard at the boundary of torch.compile's regions.

Inside a compiled region the ops run as generated kernels: the wrappers of
`_guard/intercept.py` are not called. What the guard can do without changing the
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
Dynamo's cache keys are not touched, and its guards on the names that hold
the guard's wrappers accept torch's own ops too (`identity.py`), so nothing
recompiles, when the guard goes off either.

A finding is the eager one: the same check and the same message, located at
the user's line from the node's stack trace (on CPU, raised only when the CPU
op rejects the values, as in eager code). Besides graph inputs, a tensor the
graph builds from constants (`torch.tensor([...])`, `np.int64(255)`) is
evaluated once and checked; a check of values (multinomial, bce, embedding_bag
offsets) reads float inputs too. Arguments computed inside the region
(logits, a table built in the graph) stand in as meta tensors of their traced
shape (their values are never read), so a node is checked only when their
shapes are static. Indices computed inside the region are checked in the
graph itself (`inside.py`; see docs/how-it-works.md). Reading the graph
is `graph.py`'s.

Ops dynamo does not compile (a data-dependent output shape breaks the graph)
run as Python: `never_compiled` keeps dynamo from compiling the guard's
wrappers as frames of their own there, so the eager guard checks them.
"""

import time

import torch

from .. import _support
from .._checks import caller as _caller
from .._checks import deferred as _async
from .._checks import faithful as _faithful
from .._checks import report as _report
from .._checks import violation as _violation
from .._policy import absorb as _absorb
from . import cache as _cache
from . import graph
from . import identity as _identity
from . import inside as _compiled_inside

# Graphs read, and the guarded nodes found checkable at their boundary (for tests).
stats = {"graphs": 0, "checked_nodes": 0}


def _dynamic(t):
    if isinstance(t, (graph._Input, graph._StandIn, graph._Const)):
        return True
    return isinstance(t, (list, tuple)) and any(_dynamic(x) for x in t)


def _builder(t):
    """A function of (inputs, device) that makes `t`: nodes from the call's
    inputs, the rest as it is."""
    if isinstance(t, (graph._Input, graph._StandIn, graph._Const)):
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
    start = time.perf_counter()
    try:
        return _plan(gm)
    except Exception:  # noqa: BLE001 - a graph we cannot read is left unchecked, never broken
        return []
    finally:
        graph.analysis_seconds += time.perf_counter() - start
        stats["graphs"] += 1


def _plan(gm):
    placeholders = graph.placeholders_of(gm)
    static = all(type(d) is int for n in placeholders if graph._example(n) is not None for d in graph._example(n).shape)
    points = []
    for node in gm.graph.nodes:
        found = graph.entry(node)
        if found is None:
            continue
        original, check_, args, kwargs = found
        resolved = graph.at_boundary(check_, args, kwargs, placeholders)
        if resolved is None:
            continue
        targs, tkwargs, values = resolved
        once = static and not (graph._has_input(targs, values, False) or graph._has_input(tkwargs, values, False))
        points.append(_Point(original, check_, targs, tkwargs, graph._frames(node.meta.get("stack_trace")), once))
    stats["checked_nodes"] += len(points)
    return points


def check(points, inputs, host_only=False):
    """Run each point's check on the call's inputs; raise the eager finding,
    or, under on_bad_batch="skip" in training, return the inputs to call with
    instead (a bad input index made valid); None: call with them as they are.
    `host_only` (the async level, a CUDA graph capture): indices on an
    accelerator (CPU ones when `_async.FAKE_DEVICE`) are left, as a check
    there would sync: the region checks them inside
    (`_compiled_inside.instrument(gm, sync_free=True)`; not during a capture)."""
    given = inputs
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
        # A CPU kernel that does not check these values (take_along_dim
        # wraps them) is not asked: eager code stops before it too.
        if host and p.check.cpu_checks and not found.cpu_undefined and _faithful._attempt(p.original, args, kwargs) is None:
            continue  # the CPU op accepts these values: eager code goes on too
        frames = graph.with_callers(p.frames, _report.caller_frames())
        safe = _skipped(p, inputs, args, kwargs, found, frames)
        if safe is not None:
            inputs = safe
            continue
        _faithful.stop(p.original, p.check, args, kwargs, found, frames)
    return inputs if inputs is not given else None


def _skipped(p, inputs, args, kwargs, found, frames):
    """Under on_bad_batch="skip" in training (docs/skip.md): the call's inputs
    with the bad index made valid, the finding kept and the step marked bad;
    None (raise) when the bad argument is not one of the graph's inputs as it
    is (a view of one, a value computed from several)."""
    if not _absorb.applies():
        return None
    safe = _absorb.made_safe(p.check, args, kwargs, found)
    if safe is None:
        return None
    new = list(inputs)
    changed = [(m, args[i], safe[0][i]) for i, m in p.fill] + [(m, kwargs[k], safe[1][k]) for k, m in p.fill_kw]
    for make, was, now in changed:
        if now is was:
            continue
        source = getattr(make, "__self__", None)
        if not isinstance(source, graph._Input) or source.chain:
            return None
        if now.stride() != was.stride():
            # The compiled code may assume the input's strides.
            now = torch.empty_strided(was.size(), was.stride(), dtype=was.dtype, device=was.device).copy_(now)
        new[source.index] = now
    _absorb.keep_found(p.original, args, kwargs, found, frames)
    return new


def _on_host(args, kwargs, eager_cpu=True):
    """Whether every tensor argument is on the CPU (stand-ins are meta);
    `eager_cpu`: and the eager guard takes its CPU path for them."""
    if eager_cpu and _violation.PRECHECK_CPU:
        return False
    return all(t.is_cpu or t.is_meta for t in list(args) + list(kwargs.values()) if isinstance(t, torch.Tensor))


def guarded(compiled, points, level, region=None):
    """`compiled` called after its inputs are checked (while the guard is
    on: `level()` is 0 when off, 2 at the async level, 1 otherwise), and its
    in-region checks read after it (`region`: `_compiled_inside.Region`)."""
    # Dynamo calls what a backend returns with the graph's inputs as arguments.
    def run(*args):
        on = level()
        if on and not torch.compiler.is_compiling():
            try:
                if _compiled_inside._pending:
                    _compiled_inside.poll()
                # While a CUDA graph is captured a sync would break the capture.
                safe = check(points, args, on == 2 or _async.capturing())
                if safe is not None:
                    args = safe
            except Exception as stop:
                _caller.trim(stop)  # as from an eager op: no frame of the guard
                raise
        out = compiled(*args)
        if region is not None and on:
            try:
                region.after()
            except Exception as stop:
                _caller.trim(stop)
                raise
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
    whether the guard is on when a compiled function is called. Code dynamo
    compiled while the guard was off is compiled again (`cache.py`)."""
    if _patched:
        return True
    if not _support.compiled():
        return False  # an older torch: compiled regions run unchecked (_support.py)
    _cache.went_on()
    _compiled_inside.set_on(True)
    for name in ("_TorchCompileInductorWrapper", "_TorchCompileWrapper"):
        cls = getattr(torch, name, None)
        call = getattr(cls, "__call__", None) if cls is not None else None
        if call is None:
            continue

        def __call__(self, model_, inputs_, *rest, _original=call, **kw):
            if level():
                _identity.loosen()  # valid with the guard off too: toggling recompiles nothing
            points = plan(model_) if level() else []
            region = _compiled_inside.instrument(model_, level() == 2) if level() else None
            compiled = _original(self, model_, inputs_, *rest, **kw)
            return guarded(compiled, points, level, region) if points or region else compiled

        __call__.__devassert_original__ = call
        cls.__call__ = __call__
        _patched.append((cls, call))
    return bool(_patched)


def uninstall():
    if _patched:
        _cache.went_off()
        _compiled_inside.set_on(False)
    while _patched:
        cls, call = _patched.pop()
        cls.__call__ = call

"""Checks inside torch.compile's regions, for indices computed there.

The boundary check (`boundary.py`) sees the graph's inputs only. An index
made inside the region (``torch.where(mask, ids, -1)``, ``ids + offset``, a
gather of gathered indices, ``torch.arange(T)`` positions) is checked here,
inside the compiled program, with no host sync (the async level's mechanism,
`_checks/deferred.py`):

- before the backend gets dynamo's graph, each guarded node with an integer
  argument computed in the region (or an input index the boundary cannot
  check: another argument of a dynamic shape; on an accelerator at the async
  level, where the boundary's check would sync) is replaced by a call of the same op that
  first runs the op's own check (`check.before` with `_violation.deferring`
  set: the mask of bad elements, no sync), puts a valid value where the mask
  is set (the check's own `replace`: ``torch.where``; on valid inputs the op
  gets the user's values, through an opaque copy, `_opaque`, so that
  Inductor fuses the op's arithmetic as without the check and results are
  bit-identical), and adds the count,
  min and max of the bad values (and the argument's sizes) to a row of a
  per-graph counter. AOTAutograd traces that call into aten ops and Inductor
  fuses them into the kernel that computes the index;
- the counter is a buffer of the GraphModule, read by a ``get_attr`` node and
  written in place (``copy_``). AOTAutograd lifts buffers as inputs and keeps
  their mutations (as BatchNorm's running stats), so the graph's placeholders
  and outputs stay as dynamo made them: dynamo's bytecode expects its own
  outputs (a new output breaks it), and no guard or cache key changes, so
  nothing recompiles. AOTAutograd asks dynamo where each lifted buffer came
  from (``_param_name_to_source``): the counter is named there by a
  ``ConstantSource``, which no guard reads;
- the checks are on while the guard is: each graph also reads a flag (a
  bool buffer, one per device, shared by every region, named by a
  ``ConstantSource`` too) that masks what a check found, set in place when
  the guard goes on or off (`set_on`). With the guard off a region compiled
  with it gives the op the user's values, as plain compiled code does, and
  records nothing: no recompile is needed to turn the checks off
  (`identity.py` keeps dynamo's cache entry valid in both states);
- after each compiled call, a counter on CPU is read at once (a plain memory
  read) and the finding raised; an accelerator's counter is copied
  ``non_blocking`` behind an event and read when the event is done: at the
  next call of a guarded compiled region, at the next guarded op (the async
  level's poll, which polls this queue too) or at exit (its exit hook);
  `_async.FAKE_DEVICE` runs that path on CPU, for tests;
- the finding is the eager check's own (op, rule, bound, causes, fixes), run
  again on the recorded bad values, located at the user's line from the
  node's stack trace, with the count, min and max the device recorded, and
  the note that the op ran on substituted values.

Covered: every guarded op whose check is a range test with a valid
substitute (`Check.deferrable`, not strict-only), the ops the boundary checks
too: embedding, cross_entropy / nll_loss targets, gather / scatter*,
index_select / index_add / index_copy / index_fill, take / put /
take_along_dim, one_hot, bincount, repeat_interleave, multi_margin_loss,
x[idx] / x[idx] = v / index_put, in every form (`table.py`). Not in regions:
embedding_bag, binary_cross_entropy, ctc_loss, multinomial, bernoulli,
poisson (their checks need a host sync or have no valid substitute), and an
argument the check reads in another form than the node passes it (not found
by identity).
"""

import collections
import operator
import time

import torch
from torch.utils import _pytree

from .._checks import deferred as _async
from .._checks import faithful as _faithful
from .._checks import report as _report
from .._checks import violation as _violation
from . import graph as _graph
from . import sites as _sites
from . import table as _table

BUFFER = "_devassert_inside"
FLAG = "_devassert_on"
_BIG = 2**63 - 1
# count, min, max, and 1 + the position of the bad argument among the node's
# arguments (the counter carries it: a graph from AOTAutograd's cache traces
# nothing in this process); the sizes of the node's tensor arguments follow.
_FIXED = 4

# Guarded nodes checked inside regions (tests and bench/guard read it).
stats = {"sites": 0}


class _Meta:
    """A tensor argument of a node, as its traced example: shape and dtype."""

    __slots__ = ("shape", "dtype")

    def __init__(self, v):
        self.shape = tuple(s if type(s) is int else None for s in v.shape)
        self.dtype = v.dtype

    def meta(self, sizes):
        return torch.empty(sizes, dtype=self.dtype, device="meta")


class _Shown:
    """The checked argument as the finding shows it: its sizes at the call."""

    __slots__ = ("shape", "dtype", "device")

    def __init__(self, shape, dtype, device):
        self.shape, self.dtype, self.device = torch.Size(shape), dtype, device


class _Site:
    """One guarded node whose index is computed inside the region."""

    __slots__ = ("call", "original", "check", "adapt", "row", "rows", "frames", "templates", "bad")

    def __init__(self, call, original, check, adapt, row, rows, frames, templates):
        self.call, self.original, self.check, self.adapt = call, original, check, adapt
        self.row, self.rows, self.frames, self.templates = row, rows, frames, templates
        self.bad = {}  # row -> the position of the checked tensor among the node's arguments


def _leaves(args, kwargs):
    return _pytree.tree_flatten((tuple(args), dict(kwargs)))


def _record(counter, row, found, leaves, at):
    """Add the count, min and max of `found`'s bad values to `counter[row]`,
    and write the sizes of every tensor argument (`leaves`: the node's
    arguments; the bound the finding names is read from them at run time,
    not from the traced shapes, which are symbolic under dynamic shapes);
    all on the device."""
    v = _violation.collapse(found.tensor).to(torch.int64)
    mask = found.mask
    t = found.tensor
    # An expanded argument is checked collapsed: each element stands for
    # `repeat` of the argument's (as in _violation.describe).
    repeat = t.numel() // v.numel() if t.dim() and 0 in t.stride() and v.numel() else 1
    bad = mask.sum(dtype=torch.int64) * repeat
    low, high = torch.where(mask, v, _BIG).reshape(-1), torch.where(mask, v, -_BIG - 1).reshape(-1)
    if type(v.numel()) is not int:  # a size only known at run time may be 0
        low, high = torch.cat([low, low.new_full((1,), _BIG)]), torch.cat([high, high.new_full((1,), -_BIG - 1)])
    elif v.numel() == 0:
        return
    cur = counter.select(0, row)
    dims = [s for x in leaves if isinstance(x, torch.Tensor) for s in x.shape]
    sizes = [torch.scalar_tensor(s, dtype=torch.int64, device=counter.device) for s in dims]
    width = counter.size(1)
    where = torch.scalar_tensor(at + 1, dtype=torch.int64, device=counter.device)
    parts = [cur[0] + bad, torch.minimum(cur[1], low.amin()), torch.maximum(cur[2], high.amax()), where] + sizes
    parts += [cur[i] for i in range(len(parts), width)]
    cur.copy_(torch.stack(parts[:width]))


def _checked(site, counter, on, args, kwargs):
    """The node's op, after its check: on valid values (or with the guard
    off: `on`, a bool tensor) the op runs on the user's own tensors; bad
    values are counted and made valid."""
    try:
        args, kwargs = _made_safe(site, counter, on, args, kwargs)
    except Exception:  # noqa: BLE001 - a check that cannot run here never breaks the compile
        pass
    return site.call(*args, **kwargs)


def _made_safe(site, counter, on, args, kwargs):
    """The node's arguments with every bad value of a checked one made valid;
    each such argument's bad values recorded in its row of `counter`. With
    the guard off (`on` false) no value is bad."""
    cargs, ckwargs = site.adapt(args, kwargs)
    founds = _async.find_all(site.check, cargs, ckwargs, True)
    leaves, spec = _leaves(args, kwargs)
    safe = (cargs, ckwargs)
    swap = {}
    for k, found in enumerate(founds[: site.rows]):
        found.mask = found.mask & on
        at = next((i for i, x in enumerate(leaves) if x is found.tensor), None)
        made = found.replace(*safe, found) if found.replace is not None and at is not None else None
        if made is None:
            continue  # no valid value exists (an empty dimension): left to the op
        old, _ = _leaves(*safe)
        new, _ = _leaves(*made)
        fixed = next((b for a, b in zip(old, new) if a is found.tensor and b is not a), None)
        if fixed is None:
            continue
        safe = made
        swap[at] = _opaque(fixed)
        site.bad[site.row + k] = at
        _record(counter, site.row + k, found, leaves, at)
    if not swap:
        return args, kwargs
    return _pytree.tree_unflatten([swap.get(i, x) for i, x in enumerate(leaves)], spec)


_barrier = None


def _opaque(t):
    """`t` through an op Inductor cannot see into (a copy): the guarded op
    reads the made-safe index as a buffer, so Inductor fuses the op's own
    arithmetic (a loss, its gradient) as it does without the check, and
    valid inputs give plain compiled code's results bit for bit."""
    global _barrier
    if _barrier is None:
        _barrier = _make_barrier() or False
    return _barrier(t) if _barrier else t


def _make_barrier():
    custom_op = getattr(getattr(torch, "library", None), "custom_op", None)
    if custom_op is None:
        return None
    try:

        @custom_op("devassert::safe_index", mutates_args=())
        def safe_index(t: torch.Tensor) -> torch.Tensor:
            return t.clone()

        @safe_index.register_fake
        def _(t):
            return torch.empty_like(t)

    except Exception:  # noqa: BLE001 - another torch: the check runs without the barrier
        return None
    return safe_index


_flags = {}  # device -> the flag every region on it reads: the guard is on
_on = True


def set_on(on):
    """The guard went on or off: every region's checks follow, with no recompile."""
    global _on
    _on = bool(on)
    for flag in _flags.values():
        flag.fill_(_on)


def _flag(device):
    flag = _flags.get(device)
    if flag is None:
        # Not an inference tensor (compiled under inference_mode): set_on
        # writes it outside too.
        with torch.inference_mode(False):
            flag = _flags[device] = torch.full((), _on, dtype=torch.bool, device=device)
    return flag


def _caller(site, key):
    def devassert_checked(counter, on, *args, **kwargs):
        return _checked(site, counter, on, args, kwargs)

    # The name FX writes in the graph's code, which AOTAutograd's cache key
    # hashes: one per kind of site (`_sites.key`).
    name = f"devassert_checked_{key}"
    devassert_checked.__name__ = devassert_checked.__qualname__ = name
    devassert_checked.__module__ = _sites.__name__
    setattr(_sites, name, devassert_checked)
    return devassert_checked


def _adapter(node):
    """Node arguments -> the check's (an F function's: its C op's)."""
    found = _table.match(node)
    return found[3] if found is not None else (lambda args, kwargs: (tuple(args), dict(kwargs)))


def _template(gm):
    """A node argument as it is kept for the finding: tensors as _Meta."""

    def template(x):
        if not isinstance(x, torch.fx.Node):
            return x
        v = _graph._example(x)
        if v is None and x.op == "get_attr":  # a module's tensor, when dynamo does not inline modules
            v = operator.attrgetter(x.target)(gm)
        return _Meta(v) if isinstance(v, torch.Tensor) else x

    return template


class Region:
    """An instrumented graph: its counter, its sites, what awaits a read."""

    __slots__ = ("counter", "sites", "init", "host", "view")

    def __init__(self, counter, sites):
        self.counter, self.sites = counter, sites
        self.init = counter.clone()
        device_path = counter.device.type != "cpu" or _async.FAKE_DEVICE
        self.host = torch.empty(counter.shape, dtype=counter.dtype, pin_memory=counter.is_cuda) if device_path else None
        self.view = None if device_path else counter.numpy()

    def after(self):
        """After a compiled call: raise now (CPU), or queue the counter's copy."""
        if self.view is not None:
            if self.view[:, 0].any():
                self._raise(self.view)
            return
        self.host.copy_(self.counter, non_blocking=True)
        event = None
        if self.counter.is_cuda:
            event = torch.cuda.Event()
            event.record(torch.cuda.current_stream(self.counter.device))
        _queue(self, event)

    def _raise(self, table):
        row = next(r for r in range(table.shape[0]) if table[r, 0])
        values = [int(x) for x in table[row]]
        self.counter.copy_(self.init)  # reported once
        site = next(s for s in self.sites if s.row <= row < s.row + s.rows)
        exc = _exception(site, row, values, str(self.counter.device))
        # on_bad_batch="skip" in training: the op already ran on valid values;
        # the finding is kept and the step skipped (docs/skip.md).
        if _async.sink is not None and torch.is_grad_enabled() and _async.sink(exc):
            return
        raise exc from None


_pending = collections.deque()  # (region, event): copies not yet read, oldest first


def poll(wait=False):
    """Raise for the first queued copy that holds a bad value; never blocks
    unless `wait` (at exit). Returns whether copies are still queued."""
    while _pending:
        region, event = _pending[0]
        if event is not None and not wait and not event.query():
            return True
        if event is not None and wait:
            event.synchronize()
        _pending.popleft()
        table = region.host.numpy()
        if table[:, 0].any():
            _pending.clear()  # the counter counts on: later copies repeat this one
            region._raise(table)
    return False


def _queue(region, event):
    """Queue a copy: read at the next compiled call, at the next guarded op
    (the async level's poll) or at exit (the async level's exit hook)."""
    _pending.append((region, event))
    if poll not in _async.pollers:
        _async.pollers.append(poll)
    _async.armed = True
    _async._hook_exit()


def _exception(site, row, values, device):
    """The eager check's finding for the recorded bad values."""
    count, low, high = values[:3]
    leaves, spec = _leaves(*site.templates)
    distinct = sorted({low, high})
    # The argument the op's trace found bad, as the trace noted it or (a
    # compiled artifact from a cache, traced in another process) wrote it
    # in the counter; every integer one when neither says.
    at = site.bad.get(row)
    if at is None and values[3] > 0:
        at = values[3] - 1
    ints = [i for i, x in enumerate(leaves) if isinstance(x, _Meta) and not x.dtype.is_floating_point and x.dtype is not torch.bool]
    # Each tensor argument's sizes at the call, as recorded.
    shapes, k = {}, _FIXED
    for i, x in enumerate(leaves):
        if isinstance(x, _Meta):
            shapes[i] = values[k : k + len(x.shape)]
            k += len(x.shape)
    found = None
    for at in [at] if at is not None else ints:
        # The check runs on the bad values themselves; every other tensor
        # stands in as a meta tensor of its traced shape (values never read).
        probe = torch.tensor(distinct, dtype=leaves[at].dtype)
        filled = [probe if i == at else (x.meta(shapes[i]) if isinstance(x, _Meta) else x) for i, x in enumerate(leaves)]
        args, kwargs = _pytree.tree_unflatten(filled, spec)
        found = site.check.before(*site.adapt(args, kwargs), True)
        if found is not None:
            break
    if found is None:  # not expected: a range check given its own bad values
        raise RuntimeError(f"devassert: a guarded op inside a compiled region got {count} bad value(s) (min {low}, max {high})")
    sizes = shapes[at]
    found.tensor = _Shown(sizes, probe.dtype, torch.device(device))
    found.desc = {
        "values": distinct if low == high else [],
        "value_counts": [count] if low == high else [],
        "count": count,
        "value_min": low,
        "value_max": high,
        "locations": [],
    }
    _async.explain_tolerantly(found)
    callers = _report.caller_frames()
    exc = _faithful.build(found, None, _graph.with_callers(site.frames, callers), (None, False, None))
    f = exc.finding
    noticed, _ = _report.locate(callers)
    f["noticed_at"] = noticed if noticed != f["location"] else None
    f["evidence"]["async"] = True
    f["evidence"]["compiled_region"] = True
    loc = f["location"]
    where = f" at {loc['file']}:{loc['line']}" if loc else ""
    span = f"{low}" if low == high else f"min {low}, max {high}"
    note = (
        f"  inside a compiled region: {found.op}{where} ran with {count} bad value(s) ({span}) replaced by {_async._valid_of(found)} "
        "(checked in the compiled graph, no host sync); its results, and everything computed from them, are not to be trusted"
    )
    exc.args = (exc.args[0] + "\n" + note,) + tuple(exc.args[1:])
    _report.emit(f)
    return exc


def instrument(gm, sync_free=False):
    """Insert the checks into dynamo's graph `gm`; the Region, or None when no
    guarded node has an index computed in the region or one the boundary
    cannot check (or the graph cannot be read: it is then left as it is).
    `sync_free` (the async level): an index on an accelerator is checked
    here even when it is a graph input (the boundary's check would sync)."""
    start = time.perf_counter()
    try:
        todo = _plan(gm, sync_free)
        return _insert(gm, todo) if todo else None
    except Exception:  # noqa: BLE001 - a graph we cannot read is left unchecked, never broken
        return None
    finally:
        _graph.analysis_seconds += time.perf_counter() - start


def _plan(gm, sync_free):
    if hasattr(gm, BUFFER):
        return []
    placeholders = _graph.placeholders_of(gm)
    todo = []
    device = None
    for node in gm.graph.nodes:
        e = _graph.entry(node)
        if e is None or not e[1].deferrable or e[1].strict_only:
            continue
        tensors = []
        torch.fx.node.map_arg((node.args, node.kwargs), lambda n: tensors.append(_graph._example(n)))
        tensors = [v for v in tensors if v is not None]
        ints = [v for v in tensors if _violation.int_tensor(v)]
        if not ints:
            continue
        here = ints[0].device
        on_device = sync_free and (here.type != "cpu" or _async.FAKE_DEVICE)
        if not on_device and not _graph.computed_index(node, placeholders) and _graph.at_boundary(*e[1:], placeholders) is not None:
            continue
        if device is None:
            device = here
        if here != device:
            continue  # one counter per graph, on one device
        todo.append((node, e, len(ints), sum(v.dim() for v in tensors)))
    return [(device, t) for t in todo]


def _insert(gm, todo):
    device = todo[0][0]
    rows = sum(t[2] for _, t in todo)
    width = _FIXED + max(t[3] for _, t in todo)
    counter = torch.zeros(rows, width, dtype=torch.int64, device=device)
    counter[:, 1] = _BIG
    counter[:, 2] = -_BIG - 1
    gm.register_buffer(BUFFER, counter)
    gm.register_buffer(FLAG, _flag(device))
    names = getattr(gm, "_param_name_to_source", None)
    if names is not None:
        from torch._dynamo.source import ConstantSource

        names[BUFFER] = ConstantSource(BUFFER)
        names[FLAG] = ConstantSource(FLAG)
    graph = gm.graph
    sites = []
    row = 0
    for _, (node, (original, check, _a, _k), n, _d) in todo:
        call = _table.callable_of(node, original)
        templates = _pytree.tree_map(_template(gm), (tuple(node.args), dict(node.kwargs)))
        site = _Site(call, original, check, _adapter(node), row, n, _graph._frames(node.meta.get("stack_trace")), templates)
        row += n
        key = _sites.key(node, call, site.row, n, width)
        with graph.inserting_before(node):
            buf = graph.get_attr(BUFFER)
            on = graph.get_attr(FLAG)
            new = graph.call_function(_caller(site, key), (buf, on, *node.args), dict(node.kwargs))
        new.meta = dict(node.meta)
        # AOTAutograd caches a graph that calls a function of its own only
        # when the function says what keys it (its name in the code does).
        new.meta["is_wrapped"] = True
        new.meta["user_cache_hash"] = key
        node.replace_all_uses_with(new)
        graph.erase_node(node)
        sites.append(site)
    gm.recompile()
    # A graph found in AOTAutograd's cache calls the barrier without tracing a check.
    _opaque(counter[:0, 0])
    stats["sites"] += len(sites)
    return Region(counter, sites)

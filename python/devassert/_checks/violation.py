"""What a check found, and how a violation is described.

A check returns a :class:`Found` (the bad argument, the mask of its bad
elements, the rule and the bound) or None. Everything costly (distinct values,
counts, positions, causes, the finding, the message) is computed here, only on
the violation path.
"""

import threading

import torch

from .._findings import findings as _findings
from .._findings.rules import RULES
from . import report as _report

MAX_VALUES = 32
MAX_POSITIONS = 8


# --- reading arguments ---------------------------------------------------------


def arg(args, kwargs, i, name, default=None):
    if len(args) > i:
        return args[i]
    return kwargs.get(name, default)


def is_tensor(x):
    return isinstance(x, torch.Tensor)


def int_tensor(x):
    return isinstance(x, torch.Tensor) and not x.is_floating_point() and not x.is_complex() and x.dtype is not torch.bool


def as_int(x, default):
    """An int argument given as int, numpy integer or 0-d integer tensor."""
    if isinstance(x, bool):
        return default
    if isinstance(x, int):
        return x
    if isinstance(x, torch.Tensor):
        return int(x.item()) if x.numel() == 1 and int_tensor(x) else default
    try:
        return int(x.__index__())
    except (AttributeError, TypeError, ValueError):
        return default


def dim_size(t, dim):
    return t.size(dim) if t.dim() > 0 else 1


# --- the cheap test before an op -------------------------------------------------

# Tests set this to exercise the accelerator path on CPU tensors.
PRECHECK_CPU = False

# The async path (`deferred.py`) runs a check with `deferring.skip` set: then
# `outside` answers without a sync (True, unless the tensor is in `skip`) and
# `range_mask` returns the device mask without asking whether it is empty.
# `skip` holds the ids of the tensors already found, and their argument names
# (an index given as a list is a new tensor at every check).
deferring = threading.local()
deferring.skip = None


def precheck(t, pre, strict, cpu_checks=True):
    """Whether to test `t` now. Before the op, a CPU tensor is left to the op's
    own checks (CPU kernels raise on these values) unless the level is strict or
    the CPU kernel does not check (`cpu_checks=False`); meta tensors hold no
    values. After the op raised, always."""
    if not pre:
        return True
    kind = t.device.type
    if kind == "meta":
        return False
    if kind == "cpu":
        return strict or PRECHECK_CPU or not cpu_checks
    return True


def cpu_view(t, limit=None):
    """`t` on CPU, copied (in-place ops must not touch the user's tensors) as
    it is laid out: an expanded dimension is copied once and expanded again, so
    a huge view costs what its storage costs. Past `limit` bytes, an
    uninitialised stand-in of the same shape and dtype."""
    t = t.detach()
    c = collapse(t)
    if limit is not None and c.numel() * c.element_size() > limit:
        c = torch.empty(c.shape, dtype=c.dtype)
    else:
        c = c.clone() if c.device.type == "cpu" else c.cpu()
    return c.expand(t.shape) if c.shape != t.shape else c


def collapse(t):
    """`t` without its stride-0 (expanded) dimensions' copies: the same values,
    none of the repeats, and no copy."""
    t = t.detach()
    if t.dim() and 0 in t.stride():
        for d, (size, stride) in enumerate(zip(t.shape, t.stride())):
            if stride == 0 and size > 1:
                t = t.narrow(d, 0, 1)
    return t


def extrema(t):
    """(min, max) of a non-empty tensor: one reduction over the tensor as it
    is (no reshape, no copy; expanded dimensions collapsed), one sync."""
    return torch.stack(torch.aminmax(collapse(t))).tolist()


def outside(t, low, high):
    """True when some value of `t` lies outside [low, high) (None = unbounded)."""
    if t.numel() == 0:
        return False
    skip = getattr(deferring, "skip", None)
    if skip is not None:
        return id(t) not in skip
    lo, hi = extrema(t)
    return (low is not None and lo < low) or (high is not None and hi >= high)


def deferred(argument):
    """Whether the async path already holds a Found for `argument`."""
    skip = getattr(deferring, "skip", None)
    return skip is not None and argument in skip


def range_mask(t, low, high, allowed=None):
    """The mask of values outside [low, high) other than `allowed`, or None."""
    t = collapse(t)
    # As few tensor ops as possible: on the async path each one is a kernel
    # launch paid on every valid call.
    if low is not None:
        mask = t < low
        if high is not None:
            mask |= t >= high
    elif high is not None:
        mask = t >= high
    else:
        mask = torch.zeros_like(t, dtype=torch.bool)
    if allowed is not None:
        mask &= t != allowed
    if getattr(deferring, "skip", None) is not None:
        return mask
    return mask if bool(mask.any()) else None


# --- what a check returns -----------------------------------------------------------


class Found:
    """A violation: `tensor` (the argument as passed) has bad elements at
    `mask` (over `collapse(tensor)`). `explain(desc, frames)` gives (causes,
    fixes); `replace(args, kwargs)` gives the arguments with every bad value
    made valid, or None when no valid value exists (an empty dimension).
    `contract`: what the values must satisfy, when a range (`bound`) does not
    say it all; `device_assert`: False for values only the CPU op rejects;
    `cpu_undefined`: the CPU kernel does not check these values and what it
    does with them varies (with the thread count, with memory contents), so
    the op is never run on them for torch's own error."""

    __slots__ = ("op", "argument", "tensor", "mask", "rule", "bound", "explain", "replace", "desc", "contract", "device_assert", "cpu_undefined")

    def __init__(self, op, argument, tensor, mask, rule, bound, explain, replace, desc=None, contract=None, device_assert=True, cpu_undefined=False):
        self.op = op
        self.argument = argument
        self.tensor = tensor
        self.mask = mask
        self.rule = rule
        self.bound = bound
        self.explain = explain
        self.replace = replace
        self.desc = desc
        self.contract = contract
        self.device_assert = device_assert
        self.cpu_undefined = cpu_undefined


def replaced(args, kwargs, i, name, value):
    """(args, kwargs) with argument `i` / `name` set to `value`."""
    if len(args) > i:
        args = args[:i] + (value,) + args[i + 1 :]
    else:
        kwargs = dict(kwargs, **{name: value})
    return args, kwargs


def with_valid(t, mask, valid):
    """`t` with the masked (collapsed) elements set to `valid`."""
    c = collapse(t)
    # A Python scalar keeps `c`'s dtype (scalars do not promote) in one op.
    fixed = torch.where(mask, valid, c)
    return fixed.expand(t.shape) if fixed.shape != t.shape else fixed


def valid_replace(i, name, valid):
    """A `replace` that sets the bad elements of argument `i` / `name` to `valid`."""

    def replace(args, kwargs, found):
        return replaced(args, kwargs, i, name, with_valid(found.tensor, found.mask, valid))

    return replace


def index_replace(i, name, low, high):
    """A `replace` for an index argument with the range [low, high): None
    when the range is empty (no valid index exists)."""
    if high is not None and low is not None and high <= max(low, 0):
        return lambda args, kwargs, found: None
    return valid_replace(i, name, 0 if low is None or low <= 0 else low)


def cause(cid, confidence, why):
    return {"id": cid, "confidence": round(confidence, 2), "why": why}


# --- describing the bad values --------------------------------------------------


def flat(pos, shape):
    """The row-major flat index of a position."""
    idx = 0
    for p, s in zip(pos, shape):
        idx = idx * s + p
    return idx


# Masks are searched for their first bad places this many elements at a time.
_CHUNK = 1 << 20


def first_true(mask, k):
    """The first `k` True places of `mask`, row-major, without listing them
    all (`nonzero` of a mostly-bad tensor would be 8 bytes per element per
    dimension)."""
    flat_mask = mask.reshape(-1)
    out = []
    for start in range(0, flat_mask.numel(), _CHUNK):
        hits = flat_mask[start : start + _CHUNK].nonzero().flatten()[: k - len(out)].tolist()
        out += [start + h for h in hits]
        if len(out) >= k:
            break
    return [unravel(i, list(mask.shape)) for i in out]


def unravel(i, shape):
    pos = []
    for s in reversed(shape):
        pos.append(i % s)
        i //= s
    return pos[::-1]


def first_positions(mask, shape, k):
    """The first `k` bad places (row-major) of an argument of `shape` whose
    bad elements are `mask` over its collapsed form: each place of the mask
    stands for every copy along the expanded dimensions, and only the first
    `k` copies of each can be among the first `k` places, so they are unfolded
    one dimension at a time and cut back to `k` (a place precedes all the
    places unfolded from it)."""
    places = first_true(mask, k)
    if mask.dim() != len(shape):
        return places
    for d, size in enumerate(shape):
        if mask.size(d) == 1 and size > 1:
            places = sorted(p[:d] + [c] + p[d + 1 :] for p in places for c in range(min(size, k)))[:k]
    return places


def describe(found):
    """True count, min and max of the bad values; a sample of the distinct ones
    (the smallest, and always the largest) with their counts; the first places."""
    if found.desc is not None:
        return found.desc
    t = collapse(found.tensor)
    mask = found.mask
    if t.shape != mask.shape:
        t = found.tensor.detach()
    # Each collapsed element stands for `repeat` elements of the argument.
    repeat = max(found.tensor.numel(), 1) // max(t.numel(), 1)
    bad = t[mask]
    values, counts = [], []
    if t.is_floating_point():
        nan = torch.isnan(bad)
        n_nan = int(nan.sum())
        rest = bad[~nan]
        if rest.numel():
            u, c = torch.unique(rest, return_counts=True)
            values += u.tolist()
            counts += c.tolist()
        if n_nan:
            values.append(float("nan"))
            counts.append(n_nan)
    elif bad.numel():
        u, c = torch.unique(bad, return_counts=True)
        values, counts = u.tolist(), c.tolist()
    finite = [v for v in values if v == v]
    lo = min(finite) if finite else (values[0] if values else None)
    hi = max(finite) if finite else lo
    if len(values) > MAX_VALUES:
        keep = list(range(MAX_VALUES - 1)) + [len(values) - 1]
        if values[-1] != values[-1]:  # NaN sorts last: keep the largest number too
            keep = list(range(MAX_VALUES - 2)) + [len(values) - 2, len(values) - 1]
        values = [values[i] for i in keep]
        counts = [counts[i] for i in keep]
    positions = []
    if t.dim() == 0:
        positions.append({"index": 0, "value": _report.scalar(t.item())})
    else:
        full = found.tensor.detach()
        for pos in first_positions(mask, list(full.shape), MAX_POSITIONS):
            value = full[tuple(pos)].item()
            positions.append({"index": flat(pos, list(full.shape)), "position": pos, "value": _report.scalar(value)})
    found.desc = {
        "values": [_report.scalar(v) for v in values],
        "value_counts": [c * repeat for c in counts],
        "count": int(bad.numel()) * repeat,
        "value_min": _report.scalar(lo) if lo is not None else None,
        "value_max": _report.scalar(hi) if hi is not None else None,
        "locations": positions,
    }
    return found.desc


def int_values(desc):
    """The bad integer values: the sample plus the true min and max."""
    vals = [v for v in desc["values"] if isinstance(v, int)]
    for v in (desc.get("value_min"), desc.get("value_max")):
        if isinstance(v, int) and v not in vals:
            vals.append(v)
    return vals


# --- the finding and the message ---------------------------------------------------


def shape_str(t):
    return "[" + ", ".join(str(s) for s in t.shape) + "]"


def bound_str(bound):
    low = bound.get("low")
    high = bound.get("high")
    low = "-inf" if low is None else low
    high = "inf" if high is None else high
    close = "]" if bound.get("high_inclusive") else ")"
    return f"[{low}, {high}{close}"


def values_str(desc):
    parts = []
    shown = list(zip(desc["values"], desc["value_counts"]))
    for v, c in shown[:8]:
        parts.append(f"{v} (x{c})" if c > 1 else f"{v}")
    more = len(shown) - 8
    if more > 0:
        parts.append(f"... up to {desc['value_max']}")
    return ", ".join(parts)


def finding(found, desc, causes, fixes, where):
    """The devassert/1 finding of a violation."""
    rule = RULES[found.rule]
    name, family, summary = rule["name"], rule["op_family"], rule["summary"]
    t = found.tensor
    evidence = {
        "source": "guard",
        "op": found.op,
        "argument": found.argument,
        "shape": list(t.shape),
        "dtype": str(t.dtype),
        "device": str(t.device),
    }
    if found.contract:
        evidence["contract"] = found.contract
    ruled_out = getattr(causes, "ruled_out", None)
    if ruled_out:
        evidence["ruled_out"] = list(ruled_out)
    evidence.update(where["evidence"])
    out = {
        "rule": found.rule,
        "name": name,
        "op_family": family,
        "summary": summary,
        "severity": "error",
        "evidence": evidence,
        "location": where["location"],
        "noticed_at": None,
        "values": desc["values"],
        "value_counts": desc["value_counts"],
        "count": desc["count"],
        "bound": found.bound,
        "locations": desc["locations"],
        "causes": _findings.calibrate(sorted(causes, key=lambda c: -c["confidence"])),
        "fixes": fixes,
    }
    if desc.get("value_min") is not None:
        out["value_min"] = desc["value_min"]
        out["value_max"] = desc["value_max"]
    if where.get("samples"):
        out["samples"] = where["samples"]
        out["samples_certain"] = where["samples_certain"]
    return out


def message(found, desc, finding_, torch_message):
    """torch's own message first (so assertRaisesRegex and log readers still
    match it), then what the guard adds."""
    t = found.tensor
    location = finding_["location"]
    shown = desc["locations"]
    if shown:
        first = ", ".join(str(p.get("position", p["index"])) for p in shown[:3])
        more = desc["count"] - min(len(shown), 3)
        first += f" and {more} more" if more > 0 else ""
        detail = f": {values_str(desc)}; first at {first}"
    else:  # only the count is known (async, the argument changed since)
        detail = ""
    where = f" at {location['file']}:{location['line']}" if location else ""
    span = ""
    if desc["count"] > 1 and desc.get("value_min") != desc.get("value_max"):
        span = f" (min {desc['value_min']}, max {desc['value_max']})"
    broken = "that break its contract" if found.contract else f"outside {bound_str(found.bound)}"
    lines = [torch_message] if torch_message else []
    lines.append(
        f"devassert: {found.op}: argument `{found.argument}` (shape {shape_str(t)}, {t.dtype}, {t.device}) holds "
        f"{desc['count']} value(s) {broken}{span}{detail}{where}"
    )
    if found.contract:
        lines.append(f"  contract: {found.contract}")
    if found.device_assert:
        lines.append(f"  this would fail a CUDA device-side assert [{found.rule} {finding_['name']}]")
    elif found.cpu_undefined:
        lines.append(f"  the CPU op's result is undefined on this; on CUDA it fails no device-side assert [{found.rule} {finding_['name']}]")
    else:
        lines.append(f"  the CPU op rejects this; on CUDA it fails no device-side assert [{found.rule} {finding_['name']}]")
    for s in finding_.get("samples", [])[:3]:
        evidence = finding_["evidence"]
        lines.append("  " + _report.sample_str(s, finding_.get("samples_certain", False), evidence.get("worker"), evidence.get("samples_note")))
    causes = finding_["causes"]
    if causes:
        lines.append(f"  likely cause: {causes[0]['id']}: {causes[0]['why']}")
    # The causes the measured facts refute, each with its fact (as every
    # command's text shows them: `_findings.findings.cause_lines`).
    lines += _findings.cause_lines([], ruled_out=finding_["evidence"].get("ruled_out") or ())
    if finding_["fixes"]:
        lines.append(f"  fix: {finding_['fixes'][0]}")
    lines.append(f"  more: devassert rule {found.rule}")
    return "\n".join(lines)

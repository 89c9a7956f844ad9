"""The guard against PyTorch's own OpInfo database (shipped in the wheel):
every sample input of every guarded op variant, in several dtypes, gives the
same results, dtypes, shapes, strides and gradients guarded as plain, and
raises nothing; every error input raises the same exception type with torch's
own message. Every guard path runs: the CPU path (the op checks itself; the
guard only explains), the accelerator path (checked before the op) and the
async path (checked on the device, the op run on safe values, the finding
raised when the summary is polled), the last two forced on CPU tensors.

Prints one line per op and a summary; exits 1 on any difference.
"""

import re
import sys
import time
import warnings

import torch

import devassert
from devassert._checks import deferred as _async
from devassert._guard import intercept as _intercept
from devassert._checks import ops as _ops
from devassert._checks import violation as _violation
from devassert._checks.errors import prevented_class as _prevented_class

warnings.filterwarnings("ignore")
torch.set_num_threads(1)

# The guard on while the OpInfo database captures torch's functions: it holds
# the wrappers (they pass straight through while the guard is off).
_intercept.set_level("on")

from torch.testing._internal.common_methods_invocations import op_db  # noqa: E402

_intercept.set_level("off")

GUARDED = {
    "gather", "scatter", "scatter_add", "scatter_reduce", "index_select", "index_add",
    "index_copy", "index_fill", "index_reduce", "take", "put", "take_along_dim",
    "__getitem__", "index_put", "bincount", "multinomial", "bernoulli", "repeat_interleave",
    "nn.functional.embedding", "nn.functional.embedding_bag", "nn.functional.cross_entropy",
    "nn.functional.nll_loss", "nn.functional.binary_cross_entropy", "nn.functional.ctc_loss",
    "nn.functional.multi_margin_loss", "nn.functional.one_hot",
}
RANDOM = {"multinomial", "bernoulli"}
# Checked only at the strict level (none since take_along_dim is checked at every level).
STRICT_ONLY = set()
PREFERRED = (torch.float32, torch.int64, torch.float64, torch.bfloat16, torch.uint8, torch.bool)
MAX_DTYPES = 3

# Count the calls the checks see, so an op variant the guard never sees
# cannot pass unnoticed.
_seen = [0]


def _count(check):
    find = check.find

    def counted(args, kwargs, pre, strict):
        _seen[0] += 1
        return find(args, kwargs, pre, strict)

    check.find = counted


for _check in {id(c): c for _, _, c in _ops.entry_points()}.values():
    _count(_check)


MODES = {
    "plain": ("off", False, False),
    "guard-cpu": ("on", False, False),
    "guard-precheck": ("on", True, False),
    "guard-async": ("async", True, True),
}
GUARDED_MODES = ("guard-cpu", "guard-precheck", "guard-async")


def _set_mode(mode):
    level, precheck, fake = MODES[mode]
    _violation.PRECHECK_CPU = precheck
    _async.FAKE_DEVICE = fake
    _intercept.set_level(level)


def _copy(t):
    if isinstance(t, torch.Tensor):
        if 0 in t.stride() and t.numel() > 1:
            # An expanded tensor: copy its values once, expand them again.
            c = _violation.collapse(t).clone().expand(t.shape)
        else:
            c = torch.empty_strided(t.shape, t.stride(), dtype=t.dtype, device=t.device)
            with torch.no_grad():
                c.copy_(t.detach())
        return c.detach().requires_grad_(t.requires_grad)
    return t


def _leaves(x, out):
    if isinstance(x, torch.Tensor):
        out.append(x)
    elif isinstance(x, (list, tuple)):
        for v in x:
            _leaves(v, out)
    elif isinstance(x, dict):
        for v in x.values():
            _leaves(v, out)
    return out


def _detached(t):
    return _copy(t).detach() if isinstance(t, torch.Tensor) else t


def _run(op, sample, mode, grad, inplace=False):
    s = sample.transform(_detached if inplace else _copy)
    fn = op.inplace_variant if inplace else op
    _set_mode(mode)
    try:
        if op.name in RANDOM:
            torch.manual_seed(0)
        out = fn(s.input, *s.args, **s.kwargs)
        if inplace:
            out = (out, s.input)
        grads = None
        if grad:
            outs = [o for o in _leaves(out, []) if o.requires_grad and o.is_floating_point()]
            ins = [t for t in _leaves([s.input, list(s.args), s.kwargs], []) if t.requires_grad]
            if outs and ins:
                total = sum(o.sum() for o in outs)
                grads = torch.autograd.grad(total, ins, allow_unused=True)
        # The async path raises when its summary is polled: at the latest, at exit.
        _async.poll(wait=True)
        return out, grads, None
    except Exception as e:  # noqa: BLE001
        return None, None, e
    finally:
        _async.reset()
        _set_mode("plain")


def _same(a, b, what):
    ta, tb = _leaves(a, []), _leaves(b, [])
    if len(ta) != len(tb):
        return f"{what}: {len(ta)} tensors vs {len(tb)}"
    for x, y in zip(ta, tb):
        if x.dtype != y.dtype or x.shape != y.shape or x.stride() != y.stride():
            return f"{what}: {x.dtype}{list(x.shape)}{x.stride()} vs {y.dtype}{list(y.shape)}{y.stride()}"
        if not torch.equal(x.detach(), y.detach()):
            both_nan = x.is_floating_point() and torch.equal(torch.isnan(x.detach()), torch.isnan(y.detach()))
            if not (both_nan and torch.equal(torch.nan_to_num(x.detach()), torch.nan_to_num(y.detach()))):
                return f"{what}: values differ"
    return None


def _same_grads(a, b):
    if a is None or b is None:
        return None if a is b else "gradients: one run has none"
    for x, y in zip(a, b):
        if (x is None) != (y is None):
            return "gradients: None vs tensor"
        if x is not None and _same(x, y, "gradient"):
            return _same(x, y, "gradient")
    return None


def _exact_type(guarded, plain):
    if type(guarded) is type(plain):
        return True
    return isinstance(guarded, devassert.DeviceAssertPrevented) and _prevented_class(type(plain)) is type(guarded)


def _dtypes(op):
    supported = op.supported_dtypes("cpu")
    ordered = [d for d in PREFERRED if d in supported] + sorted((d for d in supported if d not in PREFERRED), key=str)
    return ordered[:MAX_DTYPES]


def check_op(op, failures, timing):
    samples = errors = 0
    for dtype in _dtypes(op):
        grad = op.supports_autograd and (dtype.is_floating_point or dtype.is_complex)
        try:
            inputs = list(op.sample_inputs("cpu", dtype, requires_grad=grad))
        except Exception:  # noqa: BLE001 - an OpInfo without samples for this dtype
            continue
        variants = [False] + ([True] if op.inplace_variant is not None else [])
        for i, sample, inplace in ((i, s, v) for i, s in enumerate(inputs) for v in variants):
            t0 = time.perf_counter()
            base = _run(op, sample, "plain", grad and not inplace, inplace)
            t1 = time.perf_counter()
            timing["plain"] += t1 - t0
            for mode in GUARDED_MODES:
                t2 = time.perf_counter()
                got = _run(op, sample, mode, grad and not inplace, inplace)
                timing[mode] += time.perf_counter() - t2
                where = f"{op.name}[{op.variant_test_name}]{'_' if inplace else ''} {dtype} sample {i} {mode}"
                if base[2] is not None:
                    if got[2] is None or not _exact_type(got[2], base[2]):
                        failures.append(f"{where}: plain raised {type(base[2]).__name__}, guarded {type(got[2]).__name__ if got[2] else 'nothing'}")
                    continue
                if got[2] is not None:
                    failures.append(f"{where}: guarded raised {type(got[2]).__name__}: {str(got[2]).splitlines()[0][:160]}")
                    continue
                diff = _same(got[0], base[0], "output") or _same_grads(got[1], base[1])
                if diff:
                    failures.append(f"{where}: {diff}")
            samples += 1
    if op.error_inputs_func is not None:
        for i, ei in enumerate(op.error_inputs("cpu")):
            s = ei.sample_input
            base = _run(op, s, "plain", False)[2]
            if base is None:
                continue
            for mode in GUARDED_MODES:
                got = _run(op, s, mode, False)[2]
                where = f"{op.name} error input {i} {mode}"
                if got is None:
                    failures.append(f"{where}: guarded raised nothing, plain {type(base).__name__}")
                elif not _exact_type(got, base):
                    failures.append(f"{where}: type {type(got).__name__}, plain {type(base).__name__}")
                elif str(base) not in str(got):
                    failures.append(f"{where}: torch's message is missing: {str(base)[:120]!r}")
                elif ei.error_regex and not re.search(ei.error_regex, str(got)):
                    failures.append(f"{where}: does not match {ei.error_regex!r}")
            errors += 1
    return samples, errors


def main():
    ops = [op for op in op_db if op.name in GUARDED]
    failures = []
    timing = {m: 0.0 for m in MODES}
    start = time.perf_counter()
    for op in ops:
        before = len(failures)
        seen = _seen[0]
        n, e = check_op(op, failures, timing)
        if _seen[0] == seen and op.name not in STRICT_ONLY:
            failures.append(f"{op.name}[{op.variant_test_name}]: the guard never saw a call")
        print(f"{op.name:36} {op.variant_test_name:6} samples {n:4}  error inputs {e:3}  {'ok' if len(failures) == before else 'FAILED'}")
    print(f"{len(ops)} op variants in {time.perf_counter() - start:.1f} s; "
          f"guarded/plain wall time: cpu path {timing['guard-cpu'] / timing['plain']:.2f}x, "
          f"precheck path {timing['guard-precheck'] / timing['plain']:.2f}x, "
          f"async path {timing['guard-async'] / timing['plain']:.2f}x")
    for f in failures:
        print("FAIL", f)
    print(f"{len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

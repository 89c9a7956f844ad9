"""Where the step is decided: the optimizer step, before it changes anything.

A global optimizer step pre-hook asks whether a bad batch was met since this
optimizer's last step (on any rank: one all_reduce of two elements per step
when torch.distributed runs with more than one process). If so, every
gradient of the optimizer is set to None before ``step()`` runs: optimizers
skip parameters without a gradient (SGD, Adam, AdamW: no parameter, moment or
per-parameter step changes), and the gradients are cleared. A ``closure``
(LBFGS, Lightning's automatic optimization) runs first: the decision follows
it. ``GradScaler.step`` decides before it unscales, and a skipped step leaves
the scale and its growth tracker as they were.

Pending async checks are read here (one wait per step, as GradScaler's).
"""

import sys
import threading
import weakref

import torch

from . import state as _state

_consumed = {}  # id(optimizer) -> marks it has consumed
_window = 0  # the marks the last decision had already consumed
_counts = {}  # id(optimizer) -> steps it decided
_decided = threading.local()  # id(optimizer) -> verdict GradScaler.step already reached
_handle = None
_scaler_patched = []  # (class, name, original)
# One flag buffer per device, alive for the process. A collective's work keeps
# its tensor after wait() returns, and gloo's worker thread drops it later; if
# Python had already let the tensor go, that drop needs the GIL, and torch 2.2's
# destroy_process_group() joins the worker while holding it: a deadlock.
_flags = {}


def current_step():
    """The step being computed: the most steps any optimizer has decided."""
    return max(_counts.values(), default=0)


def install():
    global _handle
    if _handle is not None:
        return
    from torch.optim.optimizer import register_optimizer_step_pre_hook

    _handle = register_optimizer_step_pre_hook(_pre_hook)
    _patch_scaler()


def uninstall():
    global _handle
    if _handle is not None:
        _handle.remove()
        _handle = None
    while _scaler_patched:
        cls, name, original = _scaler_patched.pop()
        setattr(cls, name, original)
    reset()


def reset():
    """Forget the optimizers seen (a new policy, tests)."""
    global _window
    _state.last_skipped.clear()
    _consumed.clear()
    _counts.clear()
    _window = 0


def _forget(key):
    _state.last_skipped.pop(key, None)
    _consumed.pop(key, None)
    _counts.pop(key, None)


def _pre_hook(optimizer, args, kwargs):
    if not _state.skipping:
        return None
    held = _state.held()
    if held is not None:
        # Inside an engine's step (DeepSpeed's ZeRO: once per parameter
        # group), which decided for all of them.
        _state.last_skipped[id(optimizer)] = held
        if held:
            _clear(optimizer)
        return None
    verdicts = getattr(_decided, "by", None)
    if verdicts and id(optimizer) in verdicts:
        if verdicts.pop(id(optimizer)):
            _clear(optimizer)
        return None
    closure = kwargs.get("closure", args[1] if len(args) > 1 else None)
    if closure is None:
        if decide(optimizer):
            _clear(optimizer)
        return None
    wrapped = _after(closure, optimizer)
    if "closure" in kwargs:
        return args, dict(kwargs, closure=wrapped)
    return (args[0], wrapped, *args[2:]), kwargs


def _after(closure, optimizer):
    """`closure`, deciding the step after its first call (LBFGS calls it again:
    a skipped step's gradients are cleared after each call)."""
    verdict = []

    def decided_closure(*a, **k):
        loss = closure(*a, **k)
        if not verdict:
            verdict.append(decide(optimizer))
        if verdict[0]:
            _clear(optimizer)
        return loss

    return decided_closure


def _clear(optimizer):
    """Skip `optimizer`'s step: no parameter has a gradient for it to apply."""
    _state.last_skipped[id(optimizer)] = True
    for group in optimizer.param_groups:
        for p in group["params"]:
            p.grad = None


def decide(optimizer):
    """Whether this step of `optimizer` is skipped (the same answer on every
    rank); raises past max_skips, or when a batch was mostly bad (on any rank)."""
    from .._checks import deferred as _async

    if _async.armed:
        _async.poll(wait=True)  # the async level's findings: kept by absorb.sink
    global _window
    key = id(optimizer)
    marks = _state.marks
    if key not in _consumed:
        # An optimizer seen for the first time (the second of a GAN, one made
        # again on resume) looks from where the last decision looked.
        _consumed[key] = _window
        weakref.finalize(optimizer, _forget, key)
    _window = _consumed[key]
    local = marks > _window
    _consumed[key] = marks
    fatal = _state.fatal
    bad, by_rank, fatal_anywhere = _agree(local, fatal is not None)
    _state.last_skipped[key] = bad
    _counts[key] = _counts.get(key, 0) + 1
    with _state._lock:
        _state.steps = max(_state.steps, _counts[key])
        if bad:
            _state.skipped_steps += 1
        kept = list(_state.findings)
        if local:
            _state.findings.clear()
    if not bad:
        return False
    who = "this rank" if local else f"rank {by_rank}"
    # `step` counts the steps before this one, as the quarantine file does.
    sys.stderr.write(f"devassert: skipped the update of step {_counts[key] - 1} ({type(optimizer).__name__}): {who} met a bad batch\n")
    if fatal_anywhere:
        _state.fatal = None
        raise _limit(kept, fatal or "most of the samples of a batch on another rank were bad: more likely a bug in the code than bad samples")
    if _state.skipped_steps > _state.max_skips:
        raise _limit(kept)
    return True


def _agree(local, fatal):
    """(bad on any rank, the highest such rank, fatal on any rank): one
    all_reduce(MAX) of two elements."""
    try:
        import torch.distributed as dist

        spread = dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1
    except Exception:  # noqa: BLE001 - no distributed build
        spread = False
    if not spread:
        return local, None, fatal
    rank = dist.get_rank()
    device = torch.device("cuda", torch.cuda.current_device()) if dist.get_backend() == "nccl" else torch.device("cpu")
    flag = _flags.get(device)
    if flag is None:
        with torch.inference_mode(False):  # a normal tensor, writable in any mode
            flag = _flags[device] = torch.zeros(2, dtype=torch.int64, device=device)
    flag.copy_(torch.tensor([rank + 1 if local else 0, 1 if fatal else 0], dtype=torch.int64))
    dist.all_reduce(flag, op=dist.ReduceOp.MAX)
    top, fatal_anywhere = flag.tolist()
    return top > 0, (top - 1 if top > 0 else None), bool(fatal_anywhere)


def _limit(kept, reason=None):
    """The exception that ends skipping: the last finding met here, with why
    (`reason`, else past max_skips)."""
    why = f"\n  devassert: {reason}" if reason else (
        f"\n  devassert: {_state.skipped_steps} optimizer steps skipped, more than max_skips={_state.max_skips}: "
        "this many bad batches is more likely a bug in the code (or the data's preprocessing) than bad samples"
    )
    if kept:
        exc = kept[-1][1]
        exc.args = (exc.args[0] + why,) + tuple(exc.args[1:])
        return exc
    return RuntimeError(why.strip() + " (the bad batches were met on other ranks: their logs have the findings)")


# --- GradScaler ----------------------------------------------------------------------


def _patch_scaler():
    classes = []
    for name in ("torch.amp.grad_scaler", "torch.cuda.amp.grad_scaler"):
        try:
            module = __import__(name, fromlist=["GradScaler"])
        except Exception:  # noqa: BLE001 - an older or smaller build
            continue
        cls = getattr(module, "GradScaler", None)
        if cls is not None and "step" in vars(cls) and cls not in classes:
            classes.append(cls)
    for cls in classes:
        _patch(cls, "step", _scaler_step(cls.step))
        _patch(cls, "update", _scaler_update(cls.update))


def _patch(cls, name, fn):
    _scaler_patched.append((cls, name, vars(cls)[name]))
    setattr(cls, name, fn)


def _scaler_step(original):
    def step(self, optimizer, *args, **kwargs):
        if not _state.skipping or not getattr(self, "_enabled", True):
            return original(self, optimizer, *args, **kwargs)
        held = _state.held()
        if held is False:
            return original(self, optimizer, *args, **kwargs)
        if held or decide(optimizer):
            # No unscale, no inf check, no optimizer step: the scale and its
            # growth tracker stay as they were at update().
            _clear(optimizer)
            self.__dict__.setdefault("_devassert_skipped", set()).add(id(optimizer))
            return None
        by = _decided.__dict__.setdefault("by", {})
        by[id(optimizer)] = False
        try:
            return original(self, optimizer, *args, **kwargs)
        finally:
            by.pop(id(optimizer), None)

    step.__devassert_original__ = original
    return step


def _scaler_update(original):
    def update(self, new_scale=None):
        skipped = self.__dict__.pop("_devassert_skipped", None)
        if skipped and new_scale is None:
            states = getattr(self, "_per_optimizer_states", None)
            recorded = [s for k, s in (states or {}).items() if k not in skipped and s.get("found_inf_per_device")]
            if not recorded:
                # Every optimizer of this step was skipped: nothing to learn
                # about the scale. The per-optimizer states start again.
                if states is not None:
                    states.clear()
                return None
        return original(self, new_scale)

    update.__devassert_original__ = original
    return update

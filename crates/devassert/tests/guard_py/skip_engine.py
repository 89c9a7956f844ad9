"""Run by test_skip in a process of its own: a DeepSpeed-shaped engine
(zero_shape.py, loaded under DeepSpeed's module name
``deepspeed.runtime.zero.stage_1_and_2`` from a temporary folder, after the
guard is on, as a real run imports DeepSpeed) meets a bad sample at step 2.
It trains once guarded with on_bad_batch="skip"; once unguarded as the
reference, whose step 2 is what the engine does for an overflowed step
without the loss scaler counting it (no update, no LR scheduler step, the
engine's skipped_steps counts it); and once guarded with the engine wrapper's step left unwrapped (the
torch optimizer's pre-hook alone). Saves the three to OUT/engine.pt."""

import os
import sys

import torch
from torch.utils.data import DataLoader, TensorDataset

import devassert
from devassert._policy import engines

VOCAB, N, BATCH, BAD_INDEX, BAD_STEP = 10, 12, 2, 5, 2
HERE = os.path.dirname(os.path.abspath(__file__))


def load_as_deepspeed(folder):
    """zero_shape's classes, imported as DeepSpeed's ZeRO module."""
    package = os.path.join(folder, "deepspeed", "runtime", "zero")
    os.makedirs(package)
    for d in ("deepspeed", "deepspeed/runtime", "deepspeed/runtime/zero"):
        open(os.path.join(folder, d, "__init__.py"), "w").close()
    with open(os.path.join(package, "stage_1_and_2.py"), "w") as f:
        f.write("from zero_shape import DeepSpeedZeroOptimizer, DynamicLossScaler, Engine  # noqa: F401\n")
    sys.path[:0] = [folder, HERE]
    from deepspeed.runtime.zero import stage_1_and_2

    return stage_1_and_2


def data(bad):
    g = torch.Generator().manual_seed(1)
    x = torch.randint(0, VOCAB, (N, 3), generator=g)
    if bad:
        x[BAD_INDEX, 1] = VOCAB + 4
    return DataLoader(TensorDataset(x), batch_size=BATCH)


def train(zero, bad, leave_out=None):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Embedding(VOCAB, 4), torch.nn.Flatten(), torch.nn.Linear(12, 3))
    wrapper = zero.DeepSpeedZeroOptimizer(torch.optim.AdamW, [model[0].parameters(), model[2].parameters()], lr=0.05)
    sched = torch.optim.lr_scheduler.StepLR(wrapper.optimizer, step_size=1, gamma=0.9)
    engine = zero.Engine(wrapper, sched)
    scaler = []
    for step, (x,) in enumerate(data(bad)):
        engine.backward(model(x).square().mean())
        if step == leave_out:
            wrapper.zero_grad()
            engine.global_steps += 1
            engine.skipped_steps += 1
        else:
            engine.step()
        scaler.append(dict(vars(wrapper.loss_scaler)))
    inner = wrapper.optimizer
    return {
        "params": [p.detach().clone() for p in model.parameters()],
        "state": [{k: v.clone() for k, v in inner.state[p].items()} for g in inner.param_groups for p in g["params"]],
        "scaler": scaler,
        "counts": (engine.global_steps, engine.skipped_steps, sched.last_epoch),
    }


def main(out):
    quarantine = os.path.join(out, "quarantine.jsonl")
    devassert.guard(on_bad_batch="skip", quarantine=quarantine)
    zero = load_as_deepspeed(os.path.join(out, "site"))
    wrapped = getattr(zero.DeepSpeedZeroOptimizer.step, "__devassert_original__", None) is not None
    skipped = train(zero, bad=True)
    engines.unwrap_all()
    hook_only = train(zero, bad=True)
    devassert.unguard()
    reference = train(zero, bad=False, leave_out=BAD_STEP)
    torch.save({"wrapped": wrapped, "skipped": skipped, "hook_only": hook_only, "reference": reference}, os.path.join(out, "engine.pt"))


if __name__ == "__main__":
    main(sys.argv[1])

"""Running a script as two processes and reading what each rank wrote
(`rank0.json`, `rank1.json` in the folder it is given): the DTensor and
torchrun tests share it."""

import json
import os
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHONPATH = os.path.abspath(os.path.join(HERE, "..", "..", "..", "..", "python"))


def public_dtensor(fsdp=False):
    """Whether this torch has the public DTensor API (torch.distributed.tensor,
    2.5+) and, with `fsdp`, FSDP2's public `fully_shard` (2.6+)."""
    try:
        from torch.distributed.tensor import DTensor  # noqa: F401

        if fsdp:
            from torch.distributed.fsdp import fully_shard  # noqa: F401
    except ImportError:
        return False
    return True


def run(cmd, folder, cwd=None):
    """Run `cmd` (one intra-op thread, the guard package on the path) and
    return the two ranks' JSON files from `folder`."""
    env = dict(os.environ, PYTHONPATH=PYTHONPATH, OMP_NUM_THREADS="1")
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600, cwd=cwd)
    assert done.returncode == 0, done.stdout + done.stderr
    ranks = []
    for r in range(2):
        with open(os.path.join(folder, f"rank{r}.json")) as f:
            ranks.append(json.load(f))
    return ranks

"""Running a script as two processes and reading what each rank wrote
(`rank0.json`, `rank1.json` in the folder it is given): the DTensor and
torchrun tests share it."""

import json
import os
import re
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
    """Run `cmd` (one intra-op thread, the guard package on the path; a rank
    that aborts prints its Python stack) and return the two ranks' JSON
    files from `folder`."""
    env = dict(os.environ, PYTHONPATH=PYTHONPATH, OMP_NUM_THREADS="1", PYTHONFAULTHANDLER="1")
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600, cwd=cwd)
    assert done.returncode == 0, failure(done)
    ranks = []
    for r in range(2):
        with open(os.path.join(folder, f"rank{r}.json")) as f:
            ranks.append(json.load(f))
    return ranks


# Lines that say why a process died (an abort, a C++ exception, a Python
# error), repeated after its whole output: a CI log shows only the end.
_WHY = re.compile(r"terminate called|what\(\)|Fatal Python error|Error|Exception|signal|Traceback")


def failure(done):
    """The message of a failed run: its exit status, its output, and the
    lines of that output that say why, last."""
    text = done.stdout + done.stderr
    why = [line for line in text.splitlines() if _WHY.search(line)][:20]
    return f"exit status {done.returncode}\n{text}\n--- why (lines above that say it) ---\n" + "\n".join(why)

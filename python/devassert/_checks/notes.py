"""One-time notes on stderr: what the guard cannot check, and how to check it."""

import os
import sys

_said = set()
# True when compiled regions are checked at their boundary (`_compiled/boundary.py`).
boundary = False


def once(key, text):
    """Write `text` to stderr the first time `key` is seen in this process."""
    if key in _said:
        return
    _said.add(key)
    try:
        sys.stderr.write(text.rstrip("\n") + "\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


def compiled():
    """torch.compile is in use: its compiled regions run the ops unchecked."""
    if os.environ.get("TORCHDYNAMO_DISABLE", "").strip().lower() in ("1", "true"):
        return  # compile is a no-op: every op runs eagerly and is checked
    if boundary:
        once(
            "compile",
            "devassert: torch.compile is in use: guarded ops inside compiled regions are checked when the compiled function is called, "
            "on the inputs that reach their index unchanged, and, for an index computed inside the region, in the compiled graph "
            "(raised after the call); embedding_bag, binary_cross_entropy, multinomial, bernoulli and poisson are checked on "
            "the region's inputs only, not on values computed inside it.\n"
            "  to check everything, run the program eagerly: devassert run --eager -- <command> (sets TORCHDYNAMO_DISABLE=1)",
        )
        return
    once(
        "compile",
        "devassert: torch.compile is in use: ops inside compiled regions are not checked by the guard.\n"
        "  to check them, run the program eagerly: devassert run --eager -- <command> (sets TORCHDYNAMO_DISABLE=1)",
    )


def capture_skipped(op):
    """A check that needs a host sync met a CUDA graph capture."""
    once(
        "capture",
        f"devassert: {op} is not checked while a CUDA graph is being captured (its check needs a host sync, "
        "which would break the capture); the captured graph runs such ops unchecked. "
        "Index ops are checked inside captures (on the device).",
    )


def hook_compile(torch):
    """Note the first call of torch.compile (nn.Module.compile calls it too)."""
    original = getattr(torch, "compile", None)
    if original is None or hasattr(original, "__devassert_original__"):
        return None
    import functools

    @functools.wraps(original)
    def compile(*args, **kwargs):
        compiled()
        return original(*args, **kwargs)

    compile.__devassert_original__ = original
    torch.compile = compile
    return original

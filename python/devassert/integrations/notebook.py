"""The IPython / Jupyter extension: ``%load_ext devassert``.

Loading it turns the guard on in the kernel (at once when torch is imported,
else from the moment it is: loading costs no torch import) and adds the
``%devassert`` line magic:

- ``%devassert on|async|strict|off``: the guard's level from now on;
- ``%devassert explain``: explain the last error of the kernel. An op the
  guard stopped carries its diagnosis; any other error's traceback goes
  through ``devassert explain`` (the bundled binary), with the cells named as
  IPython names them (``Cell In[12], line 3``), and notebook advice;
- ``%devassert status``: say the guard's level;
- ``%devassert``: explain the last error if it was not explained yet, else
  say the level.

A cell that fails leaves the kernel running; a real CUDA device-side assert
leaves its CUDA context unusable, which the explanation says.
"""

import json
import subprocess
import sys
import traceback

from .._findings import diagnosis as _diagnosis
from .._guard.level import LEVELS, env_level as _env_level

USAGE = "usage: %devassert [on|async|strict|off|explain|status]"

# Words of an error that a device-side assert left behind: the CUDA context
# of the process is lost, only a new kernel has a working one.
_POISONED = ("CUDA error", "device-side assert", "CUDA_KERNEL_ASSERT", "AcceleratorError", "HIP error", "cudaErrorAssert")

_explained = [None]  # the last exception explained (plain %devassert explains a new one only)


def load(shell):
    from .._checks import report as _report

    shell.register_magic_function(magic, magic_kind="line", magic_name="devassert")
    _report.name_file = _cell_namer(shell)
    level = _env_level()
    set_level("on" if level == "off" else level)
    print(f"devassert: {status()}; %devassert off|on|async|strict switches it, %devassert explain explains the last error")


def unload(shell):
    from .._checks import report as _report

    set_level("off")
    _report.name_file = None
    shell.magics_manager.magics["line"].pop("devassert", None)


def _cell_namer(shell):
    """`Cell In[12]` for the file IPython compiled cell 12 into; None for
    other files."""
    fmt = getattr(getattr(shell, "compile", None), "format_code_name", None)

    def name(filename):
        if fmt is None:
            return None
        label = fmt(filename)
        return f"{label[0]} {label[1]}" if label else None

    return name


def set_level(level):
    from .._guard import hook as _hook
    from .._guard.level import guard

    if "torch" in sys.modules:
        _hook.remove()
        guard(level)
    elif level == "off":
        _hook.remove()
    else:
        _hook.install(level)


def status():
    from .._guard import hook as _hook

    intercept = sys.modules.get("devassert._guard.intercept")
    if intercept is not None:
        return f"guard level {intercept.current_level()!r}"
    if _hook._HOOK in sys.meta_path:
        return f"guard level {_hook._level!r} from the moment torch is imported"
    return "guard level 'off'"


def magic(line):
    """%devassert [on|async|strict|off|explain|status]: the guard's level in
    this kernel, or the explanation of the last error (plain %devassert: the
    last error when it is new, else the level)."""
    word = line.strip().lower()
    if word in LEVELS:
        set_level(word)
        print(f"devassert: {status()}")
    elif word == "explain":
        explain_last(always=True)
    elif word == "":
        explain_last(always=False)
    elif word == "status":
        print(f"devassert: {status()}")
    else:
        print(f"devassert: unknown argument {line.strip()!r}\n{USAGE}")


def _last_error():
    return getattr(sys, "last_exc", None) or getattr(sys, "last_value", None)


def explain_last(always):
    exc = _last_error()
    if exc is None or (not always and exc is _explained[0]):
        if always:
            print("devassert: no error to explain yet in this kernel")
        else:
            print(f"devassert: {status()}")
        return
    _explained[0] = exc
    print(explain(exc))


def explain(exc):
    """The text that explains `exc`: the guard's own diagnosis, or what
    `devassert explain` finds in its traceback."""
    finding = _diagnosis.finding_of(exc)
    if finding is not None:
        return (
            "devassert: the guard stopped this op before it ran; the kernel and its CUDA context are intact.\n"
            + _diagnosis.render(finding)
        )
    text = cell_traceback(exc)
    findings, problem = _explain_text(text)
    if problem:
        return f"devassert: {problem}"
    head = traceback.format_exception_only(type(exc), exc)[-1].strip()
    if not findings:
        return f"devassert: no device-side failure in the last error ({head})"
    out = ["devassert explain, on the traceback of the last error:"]
    advice = _advice(text)
    for f in findings:
        fixes = [advice] + [fix for fix in f.get("fixes") or [] if not _script_rerun(fix)]
        out.append(_diagnosis.render(dict(f, fixes=fixes)))
    return "\n".join(out)


def _script_rerun(fix):
    """A fix that reruns a script from a shell (`devassert run -- python
    train.py`): a notebook has no script; the notebook advice, first among
    the fixes, says what to do in the kernel instead. `explain`'s own
    notebook steps (it sees `Cell In[N]`) say the same without knowing
    whether this kernel's CUDA context is lost: this advice replaces them."""
    return "devassert run" in fix or "python train.py" in fix or fix.startswith("in the notebook: ") or "os.environ[\"CUDA_LAUNCH_BLOCKING\"]" in fix


def _advice(text):
    if any(word in text for word in _POISONED):
        return (
            "this kernel's CUDA context is lost (every later CUDA call fails the same way): restart the kernel, "
            "run `%load_ext devassert` first, then the cells again: the guard stops the op before it launches "
            "and names the values, the cell line and the fix"
        )
    return "`%devassert on` and run the cell again: the guard names the bad values, the cell line and the fix"


def cell_traceback(exc):
    """`exc`'s traceback as Python prints it, each cell's generated file named
    `Cell In[N]` as IPython names it."""
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    from .._checks import report as _report

    namer = _report.name_file
    if namer is None:
        return text
    files = set()
    seen = set()
    e = exc
    stack = [e]
    while stack:
        e = stack.pop()
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        files.update(fs.filename for fs in traceback.extract_tb(e.__traceback__))
        stack += [e.__cause__, e.__context__]
    for f in files:
        try:
            shown = namer(f)
        except Exception:  # noqa: BLE001 - an unnamed cell keeps its file
            shown = None
        if shown:
            text = text.replace(f'File "{f}"', f'File "{shown}"')
    return text


def _explain_text(text):
    """(findings, problem): `devassert explain --format json` on `text`.
    Whether it found something is read from its findings, not its exit code."""
    from .._binary import _binary, _how_to_get_binary

    path = _binary()
    if path is None:
        return [], "the devassert binary is not installed next to this package, so only the guard's own errors can be explained;\n" + _how_to_get_binary()
    try:
        done = subprocess.run([path, "explain", "-", "--format", "json"], input=text.encode("utf-8", "replace"), capture_output=True, timeout=120)
    except (OSError, subprocess.SubprocessError) as e:
        return [], f"could not run {path}: {e}"
    try:
        doc = json.loads(done.stdout.decode("utf-8", "replace"))
    except ValueError:
        err = done.stderr.decode("utf-8", "replace").strip()
        return [], f"devassert explain gave no JSON (exit {done.returncode}): {err[:500]}"
    return list(doc.get("findings") or []), None

"""Where the op was called from, and writing findings for `devassert run`.

Findings go, one JSON object a line, to ``$DEVASSERT_REPORT_DIR/guard-<pid>.jsonl``
when that variable is set (``devassert run`` sets it and collects the files).
A process that exits normally also writes ``exit-<pid>.json`` with the findings
that reached ``sys.excepthook`` uncaught, so the run can tell the ones the
program caught.
"""

import atexit
import itertools
import json
import linecache
import math
import os
import sys
import sysconfig
import threading

from . import caller as _caller

# The devassert package's folder (this module is in its `_checks/`).
_HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_TORCH_DIR = None
_LIB_DIRS = None


def _torch_dir():
    global _TORCH_DIR
    if _TORCH_DIR is None:
        torch = sys.modules.get("torch")
        path = getattr(torch, "__file__", None) if torch is not None else None
        _TORCH_DIR = os.path.dirname(os.path.abspath(path)) + os.sep if path else "\0"
    return _TORCH_DIR


def _lib_dirs():
    """Installed-library roots: site-packages and the standard library."""
    global _LIB_DIRS
    if _LIB_DIRS is None:
        dirs = set()
        for key in ("purelib", "platlib", "stdlib", "platstdlib"):
            p = sysconfig.get_paths().get(key)
            if p:
                dirs.add(os.path.abspath(p) + os.sep)
        _LIB_DIRS = tuple(dirs)
    return _LIB_DIRS


def _is_internal(filename):
    """Frames of torch, of the guard itself, of the import machinery, and code
    that torch generated (FX's <eval_with_key>, dynamo's resume functions)."""
    if filename.startswith("<"):
        return filename.startswith(("<frozen", "<eval_with_key", "<torch"))
    path = os.path.abspath(filename)
    return path.startswith(_HERE + os.sep) or path.startswith(_torch_dir())


def _is_library(filename):
    if filename.startswith("<"):
        return False
    path = os.path.abspath(filename)
    return "site-packages" in path or "dist-packages" in path or path.startswith(_lib_dirs())


# The name a finding gives a code object's file, when the file is not one the
# user knows (the notebook extension names a cell's generated file
# `Cell In[3]`, as IPython's tracebacks do); None: the file's own name.
name_file = None


def _shown_file(filename):
    if name_file is not None:
        try:
            return name_file(filename) or filename
        except Exception:  # noqa: BLE001 - a naming hook must not break a report
            pass
    return filename


def where(frame):
    code = linecache.getline(frame.f_code.co_filename, frame.f_lineno).strip()
    loc = {"file": _shown_file(frame.f_code.co_filename), "line": frame.f_lineno, "function": frame.f_code.co_name}
    if code:
        loc["code"] = code
    return loc


def caller_frames():
    """Every frame outside torch and devassert, innermost first (the whole
    stack: only called on a violation)."""
    out = []
    frame = sys._getframe(1)
    while frame is not None:
        if not _is_internal(frame.f_code.co_filename) and frame.f_code.co_name != _caller.MARK:
            out.append(frame)
        frame = frame.f_back
    return out


def locate(frames):
    """(location, inner_frame): the innermost frame of the user's own code
    (outside torch, devassert, installed libraries and generated code), and the
    innermost frame outside torch and devassert (e.g. a line inside a
    transformers model), kept as context."""
    if not frames:
        return None, None
    inner = where(frames[0])
    for f in frames:
        if not _is_library(f.f_code.co_filename):
            return where(f), inner
    return inner, inner


def in_stack(frames, package):
    """Whether a frame of the installed `package` is on the stack."""
    needle = os.sep + package + os.sep
    return any(needle in f.f_code.co_filename for f in frames)


# Set in a child process the guard followed into (`_guard/inherit.py`):
# {"pid": parent's pid, "start_method": ..., "level": ...}.
inherited = None


def rank():
    for var in ("RANK", "LOCAL_RANK"):
        raw = os.environ.get(var)
        if raw is not None:
            try:
                return int(raw)
            except ValueError:
                pass
    return None


def scalar(v):
    """A value as the contract writes it: numbers, or "nan" / "inf" / "-inf"."""
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        if v.is_integer() and abs(v) < 2**53:
            return v
    return v


def sample_str(s, certain, worker=None, note=None):
    text = f"dataset sample {s['dataset_index']}"
    if "row" in s:
        text += f" (row {s['row']} of the batch)"
    if worker is not None:
        text += f", loaded by DataLoader worker {worker}"
    if not certain:
        text += f" (not certain: {note or 'the tensor could not be matched to a batch the DataLoader returned'})"
    return text


# --- writing findings ------------------------------------------------------------

_counter = itertools.count(1)
_uncaught = []
_lock = threading.Lock()
_hooks_installed = False

# Called with every finding the guard raises, caught or not (the pytest plugin
# counts them per test); a listener that raises is ignored.
listeners = []


def next_raise_id():
    return f"{os.getpid()}-{next(_counter)}"


def _report_dir():
    return os.environ.get("DEVASSERT_REPORT_DIR")


def emit(finding):
    """Tell the listeners, and append the finding to this process's report
    file; never raises."""
    for listener in tuple(listeners):
        try:
            listener(finding)
        except Exception:  # noqa: BLE001
            pass
    directory = _report_dir()
    if not directory:
        return
    _install_exit_hooks()
    try:
        path = os.path.join(directory, f"guard-{os.getpid()}.jsonl")
        with _lock, _private(path, os.O_APPEND) as fh:
            fh.write(json.dumps(finding, allow_nan=False, default=str) + "\n")
    except (OSError, ValueError, TypeError):
        pass


def _private(path, flags):
    """`path` opened for writing, made 0600 whatever the umask (the values it
    records are the user's), never through a symbolic link."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | flags | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0), 0o600)
    return os.fdopen(fd, "a" if flags & os.O_APPEND else "w", encoding="utf-8")


def watch_uncaught():
    """Note at exit which findings reached the top uncaught, in a process
    that raises a finding it did not write (a DataLoader parent re-raising
    its worker's)."""
    if _report_dir():
        _install_exit_hooks()


def _raise_ids(exc):
    """The raise ids of the guard exceptions in `exc` and its chain."""
    out, seen = [], set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        f = getattr(exc, "finding", None)
        if isinstance(f, dict):
            rid = f.get("evidence", {}).get("raise_id")
            if rid:
                out.append(rid)
        exc = exc.__cause__ or exc.__context__
    return out


def _install_exit_hooks():
    """Note which findings reach the top uncaught, and write them at exit."""
    global _hooks_installed
    if _hooks_installed:
        return
    _hooks_installed = True
    previous = sys.excepthook

    def excepthook(kind, value, tb):
        _uncaught.extend(_raise_ids(value))
        previous(kind, value, tb)

    sys.excepthook = excepthook
    previous_thread = threading.excepthook

    def thread_excepthook(args):
        _uncaught.extend(_raise_ids(args.exc_value))
        previous_thread(args)

    threading.excepthook = thread_excepthook
    atexit.register(_write_exit_record)


def _write_exit_record():
    directory = _report_dir()
    if not directory:
        return
    try:
        path = os.path.join(directory, f"exit-{os.getpid()}.json")
        with _private(path, os.O_TRUNC) as fh:
            json.dump({"pid": os.getpid(), "uncaught": _uncaught}, fh)
    except OSError:
        pass

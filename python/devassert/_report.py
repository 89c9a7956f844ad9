"""Where the op was called from, and writing findings for `devassert run`.

Findings go, one JSON object a line, to ``$DEVASSERT_REPORT_DIR/guard-<pid>.jsonl``
when that variable is set (``devassert run`` sets it and collects the files).
"""

import json
import linecache
import math
import os
import sys
import sysconfig

_HERE = os.path.dirname(os.path.abspath(__file__))
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
    """Frames of torch, of the guard itself, and of the import machinery."""
    if filename.startswith("<frozen") or filename.startswith("<string>"):
        return filename.startswith("<frozen")
    path = os.path.abspath(filename)
    return path.startswith(_HERE + os.sep) or path.startswith(_torch_dir())


def _is_library(filename):
    path = os.path.abspath(filename)
    return "site-packages" in path or "dist-packages" in path or path.startswith(_lib_dirs())


def _where(frame):
    code = linecache.getline(frame.f_code.co_filename, frame.f_lineno).strip()
    loc = {"file": frame.f_code.co_filename, "line": frame.f_lineno, "function": frame.f_code.co_name}
    if code:
        loc["code"] = code
    return loc


def caller_frames(limit=8):
    """The frames outside torch and devassert, innermost first (at most `limit`)."""
    out = []
    frame = sys._getframe(1)
    while frame is not None and len(out) < limit:
        if not _is_internal(frame.f_code.co_filename):
            out.append(frame)
        frame = frame.f_back
    return out


def locate(frames):
    """(location, inner_frame): the innermost frame of the user's own code
    (outside torch, devassert and installed libraries), and the innermost frame
    outside torch and devassert (e.g. a line inside a transformers model)."""
    if not frames:
        return None, None
    inner = _where(frames[0])
    for f in frames:
        if not _is_library(f.f_code.co_filename):
            return _where(f), inner
    return inner, inner


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


def emit(finding):
    """Append one finding to this process's report file; never raises."""
    directory = os.environ.get("DEVASSERT_REPORT_DIR")
    if not directory:
        return
    try:
        path = os.path.join(directory, f"guard-{os.getpid()}.jsonl")
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(finding, allow_nan=False, default=str) + "\n")
    except (OSError, ValueError, TypeError):
        pass

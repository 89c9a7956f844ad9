"""A devassert/1 finding as readable text: the pytest plugin's report section
and the notebook's explanation.

The finding comes from the guard (``exc.finding``: op, argument, values,
bound, the user's line) or from ``devassert explain --format json`` on a
traceback (no values; where Python noticed the error). Every fact is read
from the finding; nothing here knows a rule.
"""

import os

from .findings import cause_lines

MAX_VALUES_SHOWN = 8
MAX_LOCATIONS_SHOWN = 3


def _place(loc, root=None):
    """`file:line in function` (the file relative to `root` when under it), or
    `Cell In[3], line 2` for a notebook cell (IPython's own words for it)."""
    file, line = loc.get("file"), loc.get("line")
    if root and isinstance(file, str) and file.startswith(root.rstrip(os.sep) + os.sep):
        file = file[len(root.rstrip(os.sep)) + 1 :]
    if isinstance(file, str) and file.startswith("Cell In["):
        text = f"{file}, line {line}"
    else:
        text = f"{file}:{line}"
    function = loc.get("function")
    if function and function != "<module>":
        text += f" in {function}"
    return text


def _bound(bound):
    low, high = bound.get("low"), bound.get("high")
    close = "]" if bound.get("high_inclusive") else ")"
    return f"[{'-inf' if low is None else low}, {'inf' if high is None else high}{close}"


def _values(finding):
    values = finding.get("values") or []
    counts = finding.get("value_counts") or [1] * len(values)
    shown = [f"{v} (x{c})" if c > 1 else f"{v}" for v, c in list(zip(values, counts))[:MAX_VALUES_SHOWN]]
    if len(values) > MAX_VALUES_SHOWN:
        shown.append(f"... up to {finding.get('value_max')}")
    text = ", ".join(shown)
    count = finding.get("count")
    if count is not None:
        text += f" ({count} value{'s' if count != 1 else ''}"
        bound = finding.get("bound")
        text += f" outside {_bound(bound)})" if bound else ")"
    return text


def render(finding, indent="  ", root=None):
    """The finding as lines of text (no trailing newline); files under `root`
    are named relative to it."""
    lines = [f"{finding.get('rule')} {finding.get('name')}: {finding.get('summary')}"]
    ev = finding.get("evidence") or {}
    if ev.get("op"):
        shape = ev.get("shape")
        shape = "[" + ", ".join(str(s) for s in shape) + "]" if isinstance(shape, list) else "?"
        lines.append(f"{indent}op: {ev['op']}, argument `{ev.get('argument')}` (shape {shape}, {ev.get('dtype')}, {ev.get('device')})")
    elif ev.get("message"):
        lines.append(f"{indent}error: {ev['message']}")
    if ev.get("contract"):
        lines.append(f"{indent}contract: {ev['contract']}")
    if finding.get("values"):
        lines.append(f"{indent}bad values: {_values(finding)}")
        positions = [str(p.get("position", p.get("index"))) for p in (finding.get("locations") or [])[:MAX_LOCATIONS_SHOWN]]
        if positions:
            lines.append(f"{indent}first at: {', '.join(positions)}")
    loc = finding.get("location")
    noticed = finding.get("noticed_at")
    if loc:
        lines.append(f"{indent}line: {_place(loc, root)}")
        if loc.get("code"):
            lines.append(f"{indent}  | {loc['code']}")
    if noticed:
        why = "where Python noticed it" + ("" if loc else ": the failing op ran before it, CUDA reports kernel failures late")
        lines.append(f"{indent}noticed at: {_place(noticed, root)} ({why})")
        if noticed.get("code"):
            lines.append(f"{indent}  | {noticed['code']}")
    inner = ev.get("inner_frame")
    if inner and inner != loc:
        lines.append(f"{indent}inside: {_place(inner, root)}")
    for s in (finding.get("samples") or [])[:MAX_LOCATIONS_SHOWN]:
        text = f"dataset sample {s.get('dataset_index')}" + (f" of {s['split']}" if s.get("split") else "")
        if "row" in s:
            text += f" (row {s['row']} of the batch)"
        if not finding.get("samples_certain", False):
            text += " (not certain)"
        lines.append(f"{indent}{text}")
    lines += cause_lines(finding.get("causes") or [], indent, ev.get("ruled_out") or ())
    fixes = finding.get("fixes") or []
    if fixes:
        lines.append(f"{indent}next steps:")
        for i, fix in enumerate(fixes, 1):
            lines.append(f"{indent}  {i}. {fix}")
    lines.append(f"{indent}more: devassert rule {finding.get('rule')}")
    return "\n".join(lines)


def finding_of(exc):
    """The guard's finding carried by `exc` or an exception in its chain, or None."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        f = getattr(exc, "finding", None)
        if isinstance(f, dict) and f.get("rule"):
            return f
        exc = exc.__cause__ or exc.__context__
    return None


def one_line(finding, root=None):
    """`DA101 embedding-index-out-of-range: embedding `indices` 12 (1 value outside [0, 10)) at f.py:7`."""
    ev = finding.get("evidence") or {}
    text = f"{finding.get('rule')} {finding.get('name')}"
    if ev.get("op"):
        text += f": {ev['op']} `{ev.get('argument')}`"
    if finding.get("values"):
        text += f" {_values(finding)}"
    loc = finding.get("location")
    if loc:
        text += f" at {_place(loc, root)}"
    return text

"""The result of `devassert.preflight`: findings in the devassert/1 contract,
as JSON, as text in the words `devassert check` / `scan` print, and as HTML
for a notebook."""

import html
import json

from .._findings import inert
from .._findings.findings import by_severity, calibrate, cause_lines

SCHEMA = "devassert/1"


class PreflightError(RuntimeError):
    """Preflight found an error-level mismatch; `report` holds every finding."""

    def __init__(self, report, where="devassert preflight"):
        self.report = report
        super().__init__(f"{where} found {_count(report.errors, 'error')} before training:\n{report.text(notes=False)}")


class PreflightReport:
    """Findings (``.findings``, dicts in the devassert/1 shape), what was read
    (``.model``, ``.tokenizer``, ``.data``) and ``.ok`` (no error-level finding)."""

    def __init__(self, findings, model=None, tokenizer=None, data=None, scans=None):
        self.findings = by_severity([dict(f, causes=calibrate(f.get("causes") or [])) for f in findings])
        self.model = model
        self.tokenizer = tokenizer
        self.data = data or []
        self.scans = scans or []

    @property
    def errors(self):
        return [f for f in self.findings if f.get("severity", "error") == "error"]

    @property
    def ok(self):
        return not self.errors

    @property
    def exit_code(self):
        """The contract's code: 1 when a warning or an error is reported (a
        note never counts), as `devassert check` exits; `.ok` is about errors
        alone, the findings that stop training."""
        return 1 if any(f.get("severity", "error") != "note" for f in self.findings) else 0

    def to_dict(self):
        return {
            "schema": SCHEMA,
            "command": "preflight",
            "exit_code": self.exit_code,
            "findings": self.findings,
            "fallout": [],
            "preflight": {"model": self.model, "tokenizer": self.tokenizer, "data": self.data, "scans": self.scans},
        }

    def to_json(self, indent=None):
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False, default=str)

    def __bool__(self):
        return self.ok

    def __repr__(self):
        counts = _counts(self.findings)
        return f"<devassert.PreflightReport ok={self.ok} {counts or 'no findings'}>"

    def __str__(self):
        return self.text()

    def text(self, notes=True):
        lines = [f"devassert preflight: {_counts(self.findings) or 'no findings'}"]
        lines += self.read_lines()
        for f in self.findings:
            if notes or f.get("severity") != "note":
                lines.append("")
                lines += finding_lines(f)
        # Names, tokens and values come from the user's files: each line inert.
        return "\n".join(inert.line(line) for line in lines)

    def read_lines(self):
        """One line each for the model, the tokenizer and each data source read."""
        out = []
        m = self.model
        if m:
            parts = [m["class"]]
            if m.get("embedding_rows"):
                parts.append(f"embedding {m['embedding_rows']['value']} rows ({m['embedding_rows']['from']})")
            if m.get("usable_positions"):
                parts.append(f"{m['usable_positions']['value']} positions ({m['usable_positions']['from']})")
            if m.get("type_vocab_size"):
                n = m["type_vocab_size"]["value"]
                parts.append(f"{n} token type{'s' if n != 1 else ''}")
            if m.get("classifier"):
                parts.append(f"classifier {m['classifier']['rows']} rows ({m['classifier']['module']})")
            out.append("model      " + ", ".join(parts))
        t = self.tokenizer
        if t:
            mml = t["model_max_length"] if t["model_max_length"] is not None else "unset"
            out.append(f"tokenizer  {t['class']}: {t['size']} tokens ({t['base_size']} base + {t['added_tokens']} added), ids up to {t['max_id']}, model_max_length {mml}")
        for d in self.data:
            cols = ", ".join(d.get("columns", {})) or "no id or label columns"
            rows = f"{d['rows']} rows" if d.get("rows") is not None else "rows unknown"
            extra = f"; {d['partial']}" if d.get("partial") else ""
            extra += f"; {d['skipped']}" if d.get("skipped") else ""
            out.append(f"data       {d['name']}: {d['kind']}, {rows}, checked {cols} ({d.get('read', 'not read')}){extra}")
        return [inert.line(line) for line in out]

    def _repr_html_(self):
        head = f"<b>devassert preflight</b>: {html.escape(_counts(self.findings) or 'no findings')}"
        read = "".join(f"<div><code>{html.escape(line)}</code></div>" for line in self.read_lines())
        if not self.findings:
            return f"<div>{head}{read}</div>"
        rows = []
        for f in self.findings:
            c = f.get("causes") or []
            why = f"{c[0]['id']}: {c[0]['why']}" if c else ""
            fix = (f.get("fixes") or [""])[0]
            places = "<br>".join(html.escape(inert.line(location_str(loc))) for loc in (f.get("locations") or [])[:3])
            values = inert.line(", ".join(str(v) for v in (f.get("values") or [])[:8]))
            why, fix = inert.line(why), inert.line(fix)
            rows.append(
                "<tr>"
                f"<td>{html.escape(f.get('severity', 'error'))}</td>"
                f"<td><code>{html.escape(f['rule'])}</code> {html.escape(f['name'])}</td>"
                f"<td>{html.escape(inert.line(f['summary']))}<br><small>{html.escape(why)}</small></td>"
                f"<td>{html.escape(values)}{' outside ' + html.escape(bound_str(f['bound'])) if f.get('bound') else ''}<br><small>{places}</small></td>"
                f"<td><code>{html.escape(fix)}</code></td>"
                "</tr>"
            )
        table = "<table><tr><th>severity</th><th>rule</th><th>what</th><th>values</th><th>fix</th></tr>" + "".join(rows) + "</table>"
        return f"<div>{head}{read}{table}</div>"


def _count(items, word):
    return f"{len(items)} {word}{'s' if len(items) != 1 else ''}"


def _counts(findings):
    parts = []
    for sev in ("error", "warning", "note"):
        n = [f for f in findings if f.get("severity", "error") == sev]
        if n:
            parts.append(_count(n, sev))
    return ", ".join(parts)


def bound_str(bound):
    low = "-inf" if bound.get("low") is None else bound["low"]
    high = "inf" if bound.get("high") is None else bound["high"]
    return f"[{low}, {high}{']' if bound.get('high_inclusive') else ')'}"


def location_str(loc):
    """A place in data, in scan's words, with the dataset sample first."""
    parts = []
    if "sample" in loc:
        parts.append(f"dataset sample {loc['sample']}" + (f" of {loc['split']}" if loc.get("split") else ""))
    if "batch" in loc:
        parts.append(f"batch {loc['batch']} row {loc['row']}")
    elif "row" in loc and "sample" not in loc:
        parts.append(f"row {loc['row']}")
    if "column" in loc:
        parts.append(f"column {loc['column']}")
    if "offset" in loc:
        parts.append(f"offset {loc['offset']}")
    if "position" in loc and "offset" not in loc:
        parts.append(f"position {loc['position']}")
    where = ", ".join(parts)
    if loc.get("file"):
        where += f" ({loc['file']} row {loc.get('file_row', loc.get('row'))})" if "sample" in loc else f" {loc['file']}"
    return f"{where}: {loc['value']}" if "value" in loc else where


def finding_lines(f):
    sev = f.get("severity", "error")
    lines = [f"{sev}[{f['rule']}] {f['name']}: {f['summary']}"]
    values = f.get("values") or []
    if values:
        text = ", ".join(str(v) for v in values[:8]) + (f" ... up to {f.get('value_max', values[-1])}" if len(values) > 8 else "")
        what = (f.get("evidence") or {}).get("values_are") or "values"
        detail = f"offending {what}: {text}"
        if f.get("bound"):
            detail += f"; valid {'range' if what == 'values' else what} {bound_str(f['bound'])}"
        if f.get("count") is not None and f.get("locations"):
            detail += f"; {f['count']} out of range in all"
        lines.append(f"   | {detail}")
    for loc in (f.get("locations") or [])[:5]:
        lines.append(f"   | at {location_str(loc)}")
    more = len(f.get("locations") or []) - 5
    if more > 0:
        lines.append(f"   | ... and {more} more places listed in the JSON report")
    lines += cause_lines(f.get("causes") or [], ruled_out=(f.get("evidence") or {}).get("ruled_out") or ())
    fixes = list(f.get("fixes") or [])
    lines.append("next steps:")
    for i, fix in enumerate(fixes + [f"read more: devassert rule {f['rule']}"], 1):
        lines.append(f"  {i}. {fix}")
    return lines

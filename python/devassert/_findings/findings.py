"""devassert/1 findings built from the catalog (``rules.py``): the rule's
name, op family and summary come from there, never from prose written here;
a cause's generic text too, when the caller has no sharper fact to state."""

import math

from .rules import ESTABLISHED_SHARE, RULES, UNLISTED_SHARE

# A static check knows its cause; as sure as `devassert check` says it is.
SURE = 0.95


def rule_named(name):
    """The id of the catalog rule called `name` (so a renumbering cannot
    leave a stale id here)."""
    for rule_id, r in RULES.items():
        if r["name"] == name:
            return rule_id
    raise KeyError(f"no catalog rule is named {name!r}")


# The rules a static check of ids and labels reports, as `check` does, and
# preflight's own finding of a data source it could check nothing in.
EMBEDDING = rule_named("embedding-index-out-of-range")
CROSS_ENTROPY = rule_named("cross-entropy-target-out-of-range")
NOTHING_CHECKED = rule_named("preflight-nothing-checked")


def cause(rule, cause_id, why=None, confidence=SURE):
    """A cause of `rule`, with the catalog's text unless `why` states the fact."""
    if why is None:
        why = RULES[rule]["causes"][cause_id]["why"]
    return {"id": cause_id, "confidence": confidence, "why": why, "established": False}


def finding(rule, severity, cause_=None, evidence=None, fixes=(), values=(), count=None, bound=None, summary=None):
    """One finding in the shape `devassert check` gives it."""
    r = RULES[rule]
    out = {
        "rule": rule,
        "name": r["name"],
        "op_family": r["op_family"],
        "summary": summary or r["summary"],
        "severity": severity,
        "evidence": dict(evidence or {}),
        "location": None,
        "noticed_at": None,
        "values": list(values),
    }
    if count is not None:
        out["count"] = count
    out["bound"] = bound
    out["causes"] = [cause_] if cause_ else []
    out["fixes"] = list(fixes)
    return out


def index_bound(low, high):
    return {"low": low, "high": high}


SEVERITY_ORDER = {"error": 0, "warning": 1, "note": 2}


def by_severity(findings):
    """Errors first, the order found kept within a severity (stable)."""
    return sorted(findings, key=lambda f: SEVERITY_ORDER.get(f.get("severity", "error"), 0))


def calibrate(causes):
    """The causes as `devassert_core::advice::calibrate` ranks them, so a
    finding of the guard or of preflight reads as one of the commands: the
    established ones first (stable) sharing ESTABLISHED_SHARE, the others
    sharing the rest in proportion to their scores (scaled down only when
    they would exceed it), UNLISTED_SHARE kept free when no `unknown` cause
    is listed; shares rounded down to 1/1000. A new list of new dicts."""
    causes = sorted((dict(c) for c in causes), key=lambda c: not c.get("established"))
    cap = 1.0 - (0.0 if any(c.get("id") == "unknown" for c in causes) else UNLISTED_SHARE)

    def score(c):
        v = c.get("confidence")
        return max(float(v), 0.0) if isinstance(v, (int, float)) and math.isfinite(v) else 0.0

    est = [c for c in causes if c.get("established")]
    est_sum = sum(score(c) for c in est)
    likely = sum(score(c) for c in causes if not c.get("established"))
    likely_cap = cap - ESTABLISHED_SHARE if est else cap
    scale = likely_cap / likely if likely > likely_cap else 1.0
    for c in causes:
        if c.get("established"):
            share = ESTABLISHED_SHARE * score(c) / est_sum if est_sum > 0 else ESTABLISHED_SHARE / len(est)
        else:
            share = score(c) * scale
        c["confidence"] = math.floor(share * 1000.0 + 1e-6) / 1000.0
    return causes


# Causes shown without -v, as the terminal renderer shows them.
CAUSES_SHOWN = 4


def cause_lines(causes, indent="", ruled_out=()):
    """The causes as the terminal shows them (`render/human.rs`): a ranking,
    most likely first, with no percentages (the shares come from the
    catalog's judgement, not from crashes counted); then a line per cause
    the measured facts refute (`evidence.ruled_out`, ``"cause_id: fact"``)
    naming that fact (`render/ruled_out.rs`)."""
    lines = []
    if causes:
        title = "causes:" if any(c.get("established") for c in causes) else "likely causes, most likely first:"
        lines.append(f"{indent}{title}")
    for i, c in enumerate(causes[:CAUSES_SHOWN], 1):
        if c.get("established") and c.get("proof"):
            lines.append(f"{indent}  {i}. {c.get('id')} (established): {c.get('why')}")
            lines.append(f"{indent}     proof: {c['proof']}")
        else:
            lines.append(f"{indent}  {i}. {c.get('id')}: {c.get('why')}")
    for row in ruled_out:
        cause_id, _, fact = str(row).partition(": ")
        fact = fact.strip()
        text = f"{cause_id} — {fact}" if fact else cause_id.rstrip(":").strip()
        lines.append(f"{indent}  ruled out: {text}")
    return lines

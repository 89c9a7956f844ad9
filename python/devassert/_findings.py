"""devassert/1 findings built from the catalog (``_rules.py``): the rule's
name, op family and summary come from there, never from prose written here;
a cause's generic text too, when the caller has no sharper fact to state."""

from ._rules import RULES

# A static check knows its cause; as sure as `devassert check` says it is.
SURE = 0.95


def rule_named(name):
    """The id of the catalog rule called `name` (so a renumbering cannot
    leave a stale id here)."""
    for rule_id, r in RULES.items():
        if r["name"] == name:
            return rule_id
    raise KeyError(f"no catalog rule is named {name!r}")


# The two rules a static check of ids and labels reports, as `check` does.
EMBEDDING = rule_named("embedding-index-out-of-range")
CROSS_ENTROPY = rule_named("cross-entropy-target-out-of-range")


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

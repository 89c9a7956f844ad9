"""Causes decided by measured facts: the Python evaluator of
``catalog/causes.toml`` (generated into ``rules.FACT_CAUSES``), the same
engine as devassert-core's ``facts`` module, held to the same answers by the
shared cases of ``crates/devassert-core/tests/fact_cases.json``.

A cause applies when its ``requires`` holds, is dropped (and listed as ruled
out) when a ``refute`` holds, scores its prior plus the weights of the
supports that hold, and keeps a fix only when the fix's ``check`` (the fix
applied to the facts) does not fail. A fact that was not measured is unknown
(None), and so is anything computed from it."""

import functools
import math
import re

from .rules import BASE_VOCABS, FACT_CAUSES

UNSIGNED_MINUS_ONE = (65535, 4294967295)

_TOKEN = re.compile(r"\s*(?:(\d+\.?\d*|\.\d+)|([A-Za-z_]\w*)|(&&|\|\||==|!=|<=|>=|[<>+\-*/!()]))")
_LEVEL = {"||": 1, "&&": 2, "==": 3, "!=": 3, "<": 3, "<=": 3, ">": 3, ">=": 3, "+": 4, "-": 4, "*": 5, "/": 5}


def _lex(src):
    out, i = [], 0
    src = src.rstrip()
    while i < len(src):
        m = _TOKEN.match(src, i)
        if not m:
            raise ValueError(f"unexpected {src[i:]!r}")
        num, name, op = m.groups()
        out.append(("num", float(num)) if num else ("name", name) if name else ("op", op))
        i = m.end()
    return out


@functools.lru_cache(maxsize=None)
def parse(src):
    """The expression as nested tuples: ("num", n), ("fact", f), ("known", f),
    ("not", e), ("neg", e), (op, a, b)."""
    toks = _lex(src)
    at = [0]

    def peek():
        return toks[at[0]] if at[0] < len(toks) else None

    def take():
        t = peek()
        at[0] += 1
        return t

    def unary():
        t = take()
        if t is None:
            raise ValueError(f"{src!r}: expected a value")
        kind, v = t
        if t == ("op", "!"):
            return ("not", unary())
        if t == ("op", "-"):
            return ("neg", unary())
        if kind == "num":
            return ("num", v)
        if t == ("op", "("):
            e = binary(0)
            if take() != ("op", ")"):
                raise ValueError(f"{src!r}: missing )")
            return e
        if kind == "name" and v == "known":
            a, b, c = take(), take(), take()
            if a != ("op", "(") or not b or b[0] != "name" or c != ("op", ")"):
                raise ValueError(f"{src!r}: known() takes one fact")
            return ("known", b[1])
        if kind == "name":
            return ("fact", v)
        raise ValueError(f"{src!r}: expected a value, got {v!r}")

    def binary(lowest):
        left = unary()
        while True:
            t = peek()
            if not t or t[0] != "op" or t[1] not in _LEVEL or _LEVEL[t[1]] < lowest:
                return left
            at[0] += 1
            left = (t[1], left, binary(_LEVEL[t[1]] + 1))

    e = binary(0)
    if peek() is not None:
        raise ValueError(f"{src!r}: unexpected {peek()[1]!r}")
    return e


def _fact(facts, name):
    v = facts.get(name)
    if isinstance(v, bool):
        return float(v)
    if isinstance(v, (int, float)) and math.isfinite(v):
        return float(v)
    return None


def evaluate(e, facts):
    """The value of a parsed expression, or None when it depends on an unknown."""
    tag = e[0]
    if tag == "num":
        return e[1]
    if tag == "fact":
        return _fact(facts, e[1])
    if tag == "known":
        return 1.0 if _fact(facts, e[1]) is not None else 0.0
    if tag == "not":
        v = evaluate(e[1], facts)
        return None if v is None else float(v == 0.0)
    if tag == "neg":
        v = evaluate(e[1], facts)
        return None if v is None else -v
    x, y = evaluate(e[1], facts), evaluate(e[2], facts)
    if tag == "&&":
        if x == 0.0 or y == 0.0:
            return 0.0
        return None if x is None or y is None else 1.0
    if tag == "||":
        if (x is not None and x != 0.0) or (y is not None and y != 0.0):
            return 1.0
        return None if x is None or y is None else 0.0
    if x is None or y is None:
        return None
    if tag == "/":
        return None if y == 0.0 else x / y
    return {
        "==": lambda: float(x == y), "!=": lambda: float(x != y), "<": lambda: float(x < y),
        "<=": lambda: float(x <= y), ">": lambda: float(x > y), ">=": lambda: float(x >= y),
        "+": lambda: x + y, "-": lambda: x - y, "*": lambda: x * y,
    }[tag]()


def holds(src, facts):
    v = evaluate(parse(src), facts)
    return v is not None and v != 0.0


def fails(src, facts):
    return evaluate(parse(src), facts) == 0.0


def _show(v):
    return str(int(v)) if float(v).is_integer() and abs(v) < 1e15 else repr(v)


_PLACE = re.compile(r"\{([^{}]*)\}")


def render(text, facts):
    """The text with its {expr} values filled in, or None when one is unknown."""
    out, last = [], 0
    for m in _PLACE.finditer(text):
        v = evaluate(parse(m.group(1)), facts)
        if v is None:
            return None
        out.append(text[last : m.start()] + _show(v))
        last = m.end()
    return "".join(out) + text[last:]


def value_facts(value_counts, low, high, kind):
    """The facts the bad values give (``{value: count}``), as
    ``devassert_core::facts::stated_facts`` computes them. ``high`` None:
    the bound is unknown, and every bad value at or past ``low`` is past it
    (255 among labels counts as the void label, since the bound is <= 255)."""
    vals = {int(v): int(c) for v, c in value_counts.items()}

    def beyond(v):
        return v >= low and (high is None or v >= high)

    def wrapped(v):
        return beyond(v) and v in UNSIGNED_MINUS_ONE

    def border(v):
        return kind == "labels" and v == 255 and beyond(v) and (high is None or high <= 255)

    def past(v):
        return beyond(v) and not wrapped(v) and not border(v)

    def index_255(v):
        # An index into any dimension may be a void label: counted in n_255 and n_past.
        return kind == "index" and v == 255 and beyond(v)

    def neg(v):
        return v < 0 and (kind != "labels" or v != -100)

    def total(pred):
        return float(sum(c for v, c in vals.items() if pred(v)))

    f = {"low": low, "count": float(sum(vals.values())), "distinct": float(len(vals))}
    if high is not None:
        f["high"] = high
    if vals:
        f["bottom"] = min(vals)
    tops = [v for v in vals if past(v)]
    if tops:
        f["top"] = max(tops)
    f["n_past"] = total(past)
    f["n_neg"] = total(neg)
    f["n_m1"] = total(lambda v: v == -1)
    f["n_m100"] = total(lambda v: v == -100)
    f["n_255"] = total(lambda v: border(v) or index_255(v))
    f["n_wrapped"] = total(wrapped)
    w = [v for v in vals if wrapped(v)]
    if w:
        f["wrapped"] = min(w)
    if high is not None:
        f["base_vocab"] = 1.0 if high in BASE_VOCABS else 0.0
    return f


def unfit(kind, facts):
    """The causes whose every ``fits`` the facts make false: they fit none
    of the values (``Decision::unfit`` in Rust). A cause without ``fits``
    may fit any value."""
    out = []
    for c in FACT_CAUSES:
        if c["kind"] != kind or c["id"] in out:
            continue
        same = [d for d in FACT_CAUSES if d["kind"] == kind and d["id"] == c["id"]]
        if all(d.get("fits") is not None and fails(d["fits"], facts) for d in same):
            out.append(c["id"])
    return out


def decide(kind, facts):
    """(causes best first, ruled_out): each cause ``{id, confidence, why,
    fixes}``; ruled_out ``"cause_id: the fact"``."""
    scored, ruled_out = [], []
    for order, c in enumerate(FACT_CAUSES):
        if c["kind"] != kind or not holds(c["requires"], facts):
            continue
        refuted = next((r for r in c["refute"] if holds(r["when"], facts)), None)
        if refuted is not None:
            ruled_out.append(f"{c['id']}: {render(refuted['fact'], facts) or ''}")
            continue
        score, said = c["prior"], []
        for s in c["support"]:
            if holds(s["when"], facts):
                score += max(evaluate(parse(s["weight"]), facts) or 0.0, 0.0)
                text = render(s["fact"], facts)
                if text is not None:
                    said.append(text)
        why = f"{c['why']}: {'; '.join(said)}" if said else f"{c['why']} (no measured fact decides it: ranked by its prior)"
        fixes = []
        for x in c["fix"]:
            if x["when"] is not None and not holds(x["when"], facts):
                continue
            if x["check"] is not None and fails(x["check"], facts):
                continue
            text = render(x["text"], facts)
            if text is not None:
                fixes.append(text)
        confidence = math.floor(min(max(score, 0.05), 0.95) * 100.0 + 0.5) / 100.0
        scored.append((score, order, {"id": c["id"], "confidence": confidence, "why": why, "established": False, "fixes": fixes}))
    scored.sort(key=lambda t: (-t[0], t[1]))
    causes = []
    for _, _, c in scored:
        same = next((m for m in causes if m["id"] == c["id"]), None)
        if same is None:
            causes.append(c)
        else:
            same["fixes"] += [x for x in c["fixes"] if x not in same["fixes"]]
    return causes, ruled_out


def fixes_of(causes):
    """The causes' fixes in rank order, each once."""
    out = []
    for c in causes:
        for x in c.get("fixes") or []:
            if x not in out:
                out.append(x)
    return out

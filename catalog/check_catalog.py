#!/usr/bin/env python3
"""Validate the devassert rule catalog (catalog/DA###-*.toml).

Usage:
    python3 catalog/check_catalog.py [LINES_TSV] [--corpus DIR] [--catalog DIR]
                                     [--write-fixture PATH] [-v]

1. parses every rule file and checks keys, vocabularies and regexes
   (Rust `regex` crate subset: no look-around, no backreferences);
2. for every row of the reference TSV (pytorch-device-asserts-lines.tsv) builds
   the device lines PyTorch prints (Linux build prefixes, Windows without
   function, ROCm `Device-side assertion`, markdown without backticks, <=1.4
   pretty signatures), normalises them the way devassert does and checks that
   exactly one rule's [[assert]] matches; section-3 internal rows and caffe2/
   rows must land in DA901; plus synthetic Inductor / custom-kernel /
   _assert_async lines;
3. runs each corpus log (DIR/*.log, labels in DIR/labels.jsonl) through the
   device patterns, cpu_messages and cause evidence and prints the ranking.

Exit status 0 when (1) and (2) pass; the corpus pass is informational.
Python's `re` is used as a stand-in for Rust `regex` (same syntax for the
constructs allowed here).
"""
import json
import os
import re
import sys
import tomllib

HERE = os.path.dirname(os.path.abspath(__file__))
VOCABULARY = os.path.join(HERE, "..", "crates", "devassert-core", "src", "vocabulary.rs")


def _vocabulary(name):
    """A string list of crates/devassert-core/src/vocabulary.rs, the one source of the contract's ids."""
    with open(VOCABULARY, encoding="utf-8") as f:
        body = re.search(r"pub const " + name + r": &\[&str\] = &\[(.*?)\];", f.read(), re.S)
    return set(re.findall(r'"(\w+)"', body.group(1)))


def _op_families():
    """The op families of vocabulary.rs: the names `OpFamily::as_str` gives."""
    with open(VOCABULARY, encoding="utf-8") as f:
        return set(re.findall(r'OpFamily::\w+ => "(\w+)"', f.read()))


OP_FAMILIES = _op_families()
CAUSES = _vocabulary("CAUSE_IDS")
TOP_KEYS = ["id", "name", "op_family", "title", "summary", "severity", "internal", "ops",
            "bad_argument", "bound", "guard", "fixes"]
OPTIONAL_KEYS = {"assert", "cpu_messages", "cause", "doc", "aten", "values"}
VALUE_KINDS = {"ids", "labels", "index"}
DOC_KEYS = ["what", "why", "confirm", "fix", "example"]
GROUP_NAMES = {"value", "low", "high"}

# The fixed rule table (id -> (name, op_family)).
FIXED = {
    "DA001": ("device-assert-no-kernel-line", "unknown"),
    "DA002": ("rocm-kernel-abort", "unknown"),
    "DA003": ("illegal-memory-access", "unknown"),
    "DA004": ("unrecognised-device-assert", "unknown"),
    "DA005": ("traceback-without-error-line", "unknown"),
    "DA101": ("embedding-index-out-of-range", "index_select"),
    "DA102": ("embedding-bag-index-out-of-range", "embedding_bag"),
    "DA103": ("embedding-bag-offsets-invalid", "embedding_bag"),
    "DA111": ("advanced-index-out-of-range", "index"),
    "DA112": ("take-put-index-out-of-range", "index"),
    "DA113": ("index-add-out-of-range", "index"),
    "DA114": ("index-copy-out-of-range", "index"),
    "DA115": ("index-fill-out-of-range", "index"),
    "DA121": ("gather-scatter-index-out-of-range", "gather_scatter"),
    "DA122": ("one-hot-class-out-of-range", "one_hot"),
    "DA123": ("bincount-negative-input", "bincount"),
    "DA201": ("cross-entropy-target-out-of-range", "nll_loss"),
    "DA202": ("spatial-cross-entropy-target-out-of-range", "nll_loss2d"),
    "DA203": ("bce-input-out-of-range", "bce"),
    "DA204": ("bce-target-out-of-range", "bce"),
    "DA205": ("ctc-loss-invalid-target", "ctc_loss"),
    "DA206": ("multi-margin-target-out-of-range", "unknown"),
    "DA301": ("multinomial-invalid-probabilities", "multinomial"),
    "DA302": ("multinomial-zero-sum", "multinomial"),
    "DA303": ("bernoulli-probability-out-of-range", "unknown"),
    "DA304": ("poisson-negative-rate", "unknown"),
    "DA401": ("inductor-index-out-of-bounds", "inductor"),
    "DA402": ("inductor-device-assert", "inductor"),
    "DA403": ("custom-kernel-assert", "custom_kernel"),
    "DA501": ("repeat-interleave-invalid-repeats", "unknown"),
    "DA502": ("segment-reduce-negative-length", "unknown"),
    "DA503": ("max-unpool-index-out-of-range", "unknown"),
    "DA504": ("masked-scatter-size-mismatch", "unknown"),
    "DA505": ("sparse-compressed-invariant-violated", "unknown"),
    "DA506": ("grouped-mm-invalid-offsets", "unknown"),
    "DA507": ("nccl-nan-detected", "unknown"),
    "DA508": ("assert-async-failed", "unknown"),
    "DA601": ("preflight-nothing-checked", "unknown"),
    "DA901": ("internal-invariant", "unknown"),
}

# Reference section 3 (internal invariants): (file basename, assertion regex or None = any).
SECTION3 = [
    ("Reduce.cuh", None), ("DynamicCast.h", None), ("TypeCast.h", None),
    ("TensorTopK.cu", None), ("THCTensorTopK.cuh", None), ("SortingRadixSelect.cuh", None),
    ("DepthwiseConv3d.cu", None), ("layer_norm_kernel.cu", None),
    ("FractionalMaxPool2d.cu", None), ("FractionalMaxPool3d.cu", None),
    ("Loss.cu", r"^index >= 0$|^threadIdx\.x == 0"),
    ("NLLLoss2d.cu", r"^(grad_)?input_index >= 0$"),
    ("ClassNLLCriterion.cu", r"^threadIdx\.x == 0"),
    ("Float8_e4m3fnuz.h", None), ("Float8_e5m2fnuz.h", None), ("CUDALoops.cuh", None),
    ("SortUtils.cuh", None), ("TmaScatterAddKernel.cu", None), ("TmaScatterKernel.cu", None),
    ("nccl_all_to_all_nd.cu", None), ("CUDASymmetricMemory-inl.h", None),
    ("CUDASymmetricMemory-inl.cuh", None),
]

# ---------------------------------------------------------------- parsing

DEVICE_RE = re.compile(
    r"(?P<file>(?:[A-Za-z]:)?[^\s:]*?(?:\.[A-Za-z]\w*|unknown)):(?P<line>\d+):\s*"
    r"(?:(?P<func>.+?):\s+)??"
    r"(?:block: \[[\d, ]*\],? thread: \[[\d, ]*\]\s*)?"
    r"(?:Assertion|Device-side assertion)\s+(?P<expr>.*?)\s*failed")

MARKERS = ("aten/", "c10/", "torch/csrc/", "caffe2/", "third_party/")


def norm_file(path):
    p = path.replace("\\", "/")
    best = None
    for m in MARKERS:
        for mo in re.finditer(re.escape(m), p):
            i = mo.start()
            if i == 0 or p[i - 1] == "/":
                if best is None or i < best:
                    best = i
                break
    return p[best:] if best is not None else p


def norm_kernel(func):
    if func is None:
        return None
    f = func.strip()
    f = re.sub(r"\s*\[with .*$", "", f)           # template argument list
    if "operator()" in f:
        return "operator()"
    if f.startswith("lambda"):
        return "operator()"
    head = f.split("(", 1)[0].strip()              # drop the parameter list
    head = head.split()[-1] if head.split() else head  # drop the return type
    head = re.sub(r"<[^<>]*>", "", head)           # template args in the name
    head = head.split("::")[-1]
    return head or f


def norm_expr(raw):
    e = raw.strip()
    e = re.sub(r"^(?:\*\*|`)+", "", e)
    e = re.sub(r"[`'*]+$", "", e)
    e = re.sub(r"\s+", " ", e).strip()
    return e


PRINTF_RE = re.compile(  # CUDA_KERNEL_ASSERT_PRINTF (2.10+): an extra line before the standard one
    r"\[CUDA_KERNEL_ASSERT\] (?P<file>(?:[A-Za-z]:)?[^\s:]*?\.[A-Za-z]\w*):(?P<line>\d+): (?P<func>.+?): "
    r"block: \[[\d, ]*\],? thread: \[[\d, ]*\]: Assertion failed: `(?P<expr>.*?)`: (?P<msg>.*)$")


def parse_device_line(line):
    # launcher prefixes such as "[rank0]:" or "[1,0]<stderr>:"
    line = re.sub(r"^(?:\[(?!CUDA_KERNEL_ASSERT\])[^\]]*\](?:<\w+>)?:)+", "", line.strip())
    m = PRINTF_RE.search(line)
    if m:
        return dict(file=norm_file(m.group("file")), kernel=norm_kernel(m.group("func")),
                    assertion=norm_expr(m.group("expr")), raw_file=m.group("file"))
    m = DEVICE_RE.search(line)
    if not m:
        return None
    func = m.group("func")
    if func is not None and (func.startswith("block:") or func.strip() == ""):
        func = None
    return dict(file=norm_file(m.group("file")), kernel=norm_kernel(func),
                assertion=norm_expr(m.group("expr")), raw_file=m.group("file"))


# ---------------------------------------------------------------- catalog

def load_catalog(cat_dir):
    shared = {}
    path = os.path.join(cat_dir, "patterns.toml")
    if os.path.exists(path):
        with open(path, "rb") as f:
            shared = tomllib.load(f).get("pattern", {})
    rules = []
    for fn in sorted(os.listdir(cat_dir)):
        if re.match(r"DA\d{3}-.*\.toml$", fn):
            with open(os.path.join(cat_dir, fn), "rb") as f:
                d = tomllib.load(f)
            d["_file"] = fn
            resolve_shared(d, shared, fn)
            rules.append(d)
    return rules


def resolve_shared(rule, shared, fn):
    """A cause evidence's `{ pattern = "name" }` replaced by the shared
    regex of patterns.toml, as the Rust loader does."""
    for c in rule.get("cause", []):
        for ev in c.get("evidence", []):
            for k in ("frame", "log", "assertion"):
                ref = ev.get(k)
                if isinstance(ref, dict):
                    name = ref.get("pattern")
                    if name not in shared:
                        sys.exit(f"{fn}: no shared pattern {name!r} in patterns.toml")
                    ev[k] = shared[name]


def check_regex(pat, where, errors):
    if re.search(r"\(\?[=!]|\(\?<[=!]", pat):
        errors.append(f"{where}: look-around not supported by Rust regex: {pat!r}")
    if re.search(r"\\[1-9]", pat):
        errors.append(f"{where}: backreference not supported by Rust regex: {pat!r}")
    try:
        rx = re.compile(pat)
    except re.error as e:
        errors.append(f"{where}: bad regex {pat!r}: {e}")
        return None
    bad = set(rx.groupindex) - GROUP_NAMES
    if bad:
        errors.append(f"{where}: named groups must be value/low/high, got {sorted(bad)}")
    return rx


def validate(rules):
    errors = []
    seen_ids, seen_names, seen_aten = set(), set(), set()
    for r in rules:
        fn = r["_file"]
        for k in TOP_KEYS:
            if k not in r:
                errors.append(f"{fn}: missing key {k}")
        for k in r:
            if k not in TOP_KEYS and k not in OPTIONAL_KEYS and k != "_file":
                errors.append(f"{fn}: unknown key {k}")
        if "values" in r and r["values"] not in VALUE_KINDS:
            errors.append(f"{fn}: values must be one of {sorted(VALUE_KINDS)}")
        if "doc" not in r:
            errors.append(f"{fn}: missing [doc]")
        else:
            for k in DOC_KEYS:
                if not str(r["doc"].get(k, "")).strip():
                    errors.append(f"{fn}: doc.{k} empty")
        rid, name = r.get("id", ""), r.get("name", "")
        if fn != f"{rid}-{name}.toml":
            errors.append(f"{fn}: file name does not match id/name")
        if rid in seen_ids or name in seen_names:
            errors.append(f"{fn}: duplicate id or name")
        seen_ids.add(rid)
        seen_names.add(name)
        if rid in FIXED and FIXED[rid] != (name, r.get("op_family")):
            errors.append(f"{fn}: id/name/op_family differ from the fixed table {FIXED[rid]}")
        if r.get("op_family") not in OP_FAMILIES:
            errors.append(f"{fn}: op_family {r.get('op_family')!r}")
        if r.get("severity") not in ("error", "warning", "note"):
            errors.append(f"{fn}: severity {r.get('severity')!r}")
        if r.get("internal") is not (rid == "DA901"):
            errors.append(f"{fn}: internal must be true only for DA901")
        s = r.get("summary", "")
        if not s or not s[0].islower():
            errors.append(f"{fn}: summary must start lower case")
        for key in ("ops", "fixes"):
            if not isinstance(r.get(key), list):
                errors.append(f"{fn}: {key} must be a list")
        aten = r.get("aten", [])
        if not isinstance(aten, list) or not all(isinstance(a, str) and a for a in aten):
            errors.append(f"{fn}: aten must be a list of ATen op names")
        else:
            for a in aten:
                if a in seen_aten:
                    errors.append(f"{fn}: aten op {a!r} is listed by two rules")
                seen_aten.add(a)
        for i, a in enumerate(r.get("assert", [])):
            if not any(k in a for k in ("file", "kernel", "assertion")):
                errors.append(f"{fn}: assert[{i}] has no pattern")
            for k in ("file", "kernel", "assertion"):
                if k in a:
                    a["_" + k] = check_regex(a[k], f"{fn}: assert[{i}].{k}", errors)
            if not a.get("releases"):
                errors.append(f"{fn}: assert[{i}] without releases")
        r["_cpu"] = [check_regex(p, f"{fn}: cpu_messages", errors) for p in r.get("cpu_messages", [])]
        priors = []
        for c in r.get("cause", []):
            if c.get("id") not in CAUSES:
                errors.append(f"{fn}: cause id {c.get('id')!r} not in vocabulary")
            if not (0 <= c.get("prior", -1) <= 1):
                errors.append(f"{fn}: cause {c.get('id')} prior out of [0,1]")
            priors.append(c.get("prior", 0))
            if not c.get("why"):
                errors.append(f"{fn}: cause {c.get('id')} without why")
            for j, ev in enumerate(c.get("evidence", [])):
                kinds = [k for k in ("frame", "log", "assertion") if k in ev]
                if len(kinds) != 1:
                    errors.append(f"{fn}: cause {c.get('id')} evidence[{j}] needs exactly one of frame/log/assertion")
                    continue
                ev["_rx"] = check_regex(ev[kinds[0]], f"{fn}: cause {c.get('id')} evidence[{j}]", errors)
                ev["_kind"] = kinds[0]
                if not (0 < ev.get("weight", 0) <= 1) or not ev.get("why"):
                    errors.append(f"{fn}: cause {c.get('id')} evidence[{j}] weight/why")
        if priors != sorted(priors, reverse=True):
            errors.append(f"{fn}: causes not ranked by prior (most common first)")
    missing = set(FIXED) - seen_ids
    if missing:
        errors.append(f"missing rules: {sorted(missing)}")
    return errors


def assert_matches(a, dev):
    for k in ("file", "kernel", "assertion"):
        rx = a.get("_" + k)
        if rx is None:
            continue
        val = dev.get(k)
        if k == "kernel" and val is None:
            continue          # Windows lines have no function field: do not reject
        if val is None or not rx.search(val):
            return False
    return True


def match_rules(rules, dev):
    return [r["id"] for r in rules if any(assert_matches(a, dev) for a in r.get("assert", []))]


# ---------------------------------------------------------------- TSV lines

PREFIX_OF = {}
for v in ["1.4.0", "1.5.1", "1.6.0", "1.7.1", "1.8.1", "1.9.1", "1.10.2"]:
    PREFIX_OF[v] = "/pytorch/"
for v in ["1.11.0", "1.12.1", "1.13.1", "2.0.1", "2.1.2", "2.2.2", "2.3.1", "2.4.1", "2.5.1"]:
    PREFIX_OF[v] = "../"
for v in ["2.6.0", "2.7.1", "2.8.0", "2.9.1", "2.10.0", "2.11.0", "2.12.1"]:
    PREFIX_OF[v] = "/pytorch/"
for v in ["2.13.0", "2.14.1", "2.15.0"]:
    PREFIX_OF[v] = "/__w/pytorch/pytorch/"

RUNTIME_MESSAGES = [  # (message printed by _assert_async_cuda_kernel, expected rule)
    ("probability tensor contains either `inf`, `nan` or element < 0", "DA301"),
    ("invalid multinomial distribution (sum of probabilities <= 0)", "DA302"),
    ("", "DA508"),
    ("Expected all elements of the mask to be True", "DA508"),
]


def load_tsv(path):
    rows, versions = [], None
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("#") or not line.strip():
                continue
            cols = line.split("\t")
            if cols[0] == "file":
                versions = cols[3:]
                continue
            cells = cols[3:] + [""] * (len(versions) - len(cols[3:]))
            rows.append(dict(file=cols[0], function=cols[1], assertion=cols[2],
                             lines={v: c for v, c in zip(versions, cells) if c.strip()}))
    return versions, rows


def pretty_variants(func):
    if func == "operator()":
        return ["lambda [](int)->auto::operator()(int)->auto",
                "Acctype bce_functor<Dtype, Acctype>::operator()(Tuple) [with Tuple = thrust::tuple<float, float>, Dtype = float, Acctype = float]"]
    return [f"void {func}(TensorInfo<T, IndexType>, TensorInfo<long, IndexType>, int, int, IndexType, long) [with T = float, IndexType = unsigned int, DstDim = 2, SrcDim = 2, IdxDim = -2]",
            f"int at::native::<unnamed>::{func}(scalar_t *, long, long) [with scalar_t = float]"]


def printed_lines(row):
    """Yield (printed line, description) for one TSV row."""
    f, fn = row["file"], row["function"]
    exprs = [row["assertion"]]
    if row["assertion"] == "<runtime message>":
        exprs = [m for m, _ in RUNTIME_MESSAGES]
    versions = list(row["lines"]) or ["2.15.0"]
    for expr in exprs:
        for v in versions:
            ln = row["lines"].get(v, "1").split("/")[0]
            pre = PREFIX_OF.get(v, "/pytorch/")
            yield (f"{pre}{f}:{ln}: {fn}: block: [0,0,0], thread: [0,0,0] Assertion `{expr}` failed.", f"linux {v}", expr)
        ln = row["lines"][versions[-1]].split("/")[0] if row["lines"] else "1"
        win = "C:\\actions-runner\\_work\\pytorch\\pytorch\\pytorch\\" + f.replace("/", "\\")
        yield (f"{win}:{ln}: block: [0,0,0], thread: [0,0,0] Assertion `{expr}` failed.", "windows", expr)
        yield (f"C:/cb/pytorch_1000000000000/work/{f}:{ln}: block: [0,0,0], thread: [106,0,0] Assertion `{expr}` failed.", "windows-cb", expr)
        yield (f"/opt/conda/conda-bld/pytorch_1724789143830/work/{f}:{ln}: {fn}: Device-side assertion `{expr}' failed.", "rocm", expr)
        if expr:
            yield (f"../{f}:{ln}: {fn}: block: [1,0,0], thread: [2,0,0] Assertion {expr} failed.", "markdown", expr)
        for p in pretty_variants(fn):
            yield (f"/pytorch/{f}:{ln}: {p}: block: [0,0,0], thread: [0,0,0] Assertion `{expr}` failed.", "pretty", expr)


def expected_rule(row, expr):
    base = row["file"].rsplit("/", 1)[-1]
    if row["file"].startswith("caffe2/"):
        return "DA901"
    for b, rx in SECTION3:
        if base == b and (rx is None or re.search(rx, row["assertion"])):
            return "DA901"
    if row["assertion"] == "<runtime message>":
        return dict(RUNTIME_MESSAGES)[expr]
    return None


SYNTHETIC = [
    ("unknown:0: unknown: block: [0,0,0], thread: [8,0,0] Assertion `index out of bounds: 0 <= tmp4 < 32000` failed.", "DA401"),
    ("/tmp/torchinductor_danvm/k4/ck46uf2tjbfns332dtzd3q3m2mgw2hoguozdpq5bvqyjhntqiu23.py:30: unknown: block: [24127,0,0], thread: [48,0,0] Assertion `index out of bounds: 0 <= tmp4 < 1 + ks0` failed.", "DA401"),
    ("unknown:0: unknown: block: [0,0,0], thread: [0,0,0] Assertion `index out of bounds: tmp5 < 32000` failed.", "DA401"),
    ("unknown:0: unknown: block: [0,0,0], thread: [0,0,0] Assertion `index out of bounds: 0 <= tmp2` failed.", "DA401"),
    ("/tmp/torchinductor_u/ab/cabcdefghijklmnopqrstuvwxyz234567abcdefghijklmnopqrstu.py:88: unknown: block: [0,0,0], thread: [0,0,0] Assertion `index out of bounds: 0 <= tmp7 < s1` failed.", "DA401"),
    ("unknown:0: unknown: block: [0,0,0], thread: [0,0,0] Assertion `injected assert fail` failed.", "DA402"),
    ("/tmp/torchinductor_u/xy/cxyz.py:12: unknown: block: [0,0,0], thread: [0,0,0] Assertion `found NaN in tmp3` failed.", "DA402"),
    ("/home/user/myext/csrc/roi_align_kernel.cu:41: roi_align_forward_kernel: block: [0,0,0], thread: [0,0,0] Assertion `idx < n` failed.", "DA403"),
    ("csrc/ops/gather_points.cu:12: gather_points_kernel: block: [0,0,0], thread: [1,0,0] Assertion `index >= 0 && index < n` failed.", "DA403"),
    ("/home/u/proj/third_party/cutlass/include/cute/x.hpp:10: f: block: [0,0,0], thread: [0,0,0] Assertion `false` failed.", "DA403"),
    ("D:\\proj\\kernels\\my_kernel.cuh:7: block: [0,0,0], thread: [0,0,0] Assertion `k < K` failed.", "DA403"),
    ("[CUDA_KERNEL_ASSERT] /pytorch/aten/src/ATen/native/cuda/Repeat.cu:20: compute_cuda_kernel: block: [0,0,0], thread: [0,0,0]: Assertion failed: `result_size == cumsum_ptr[size - 1]`: Invalid input! In `repeat_interleave`, the `output_size` argument (12) must be the same as the sum of the elements in the `repeats` tensor (10).", "DA501"),
    ("/pytorch/aten/src/ATen/native/cuda/Repeat.cu:20: compute_cuda_kernel: block: [0,0,0], thread: [0,0,0]: Assertion failed: `result_size == cumsum_ptr[size - 1]`: Invalid input! In `repeat_interleave`, the `output_size` argument (12) must be the same as the sum of the elements in the `repeats` tensor (10).", "DA501"),
    ("/__w/pytorch/pytorch/aten/src/ATen/native/cuda/SomeNewKernel.cu:12: new_kernel: block: [0,0,0], thread: [0,0,0] Assertion `x < y` failed.", None),
]


def check_tsv(rules, tsv, verbose=False):
    versions, rows = load_tsv(tsv)
    problems, per_rule_rows = [], {}
    for i, row in enumerate(rows):
        row_rules = set()
        for line, desc, expr in printed_lines(row):
            dev = parse_device_line(line)
            if dev is None:
                problems.append(f"row {i} ({desc}): unparsable printed line {line!r}")
                continue
            got = match_rules(rules, dev)
            exp = expected_rule(row, expr)
            if len(got) != 1:
                problems.append(f"row {i} {row['file']} | {row['function']} | {row['assertion']!r} [{desc}, {expr!r}]: matched {got} (parsed {dev})")
                continue
            if exp and got[0] != exp:
                problems.append(f"row {i} {row['file']} | {row['assertion']!r} [{desc}]: matched {got[0]}, expected {exp}")
            row_rules.add(got[0])
        key = "/".join(sorted(row_rules)) or "NONE"
        per_rule_rows[key] = per_rule_rows.get(key, 0) + 1
    for line, exp in SYNTHETIC:
        dev = parse_device_line(line)
        got = match_rules(rules, dev) if dev else ["UNPARSED"]
        want = [exp] if exp else []
        if got != want:
            problems.append(f"synthetic {line!r}: matched {got}, expected {want} (parsed {dev})")
    return len(rows), per_rule_rows, problems


# ---------------------------------------------------------------- corpus

FRAME_RE = re.compile(r'^\s*(?:\[[^\]]*\]:)?\s*File "[^"]*", line \d+, in (?P<func>\S+)')


def frames_of(lines):
    out = []
    for i, ln in enumerate(lines):
        m = FRAME_RE.match(ln)
        if m:
            out.append(m.group("func"))
            if i + 1 < len(lines) and not FRAME_RE.match(lines[i + 1]):
                out.append(lines[i + 1].strip())
    return out


def rank_causes(rule, lines, frames, assertion):
    res = []
    for c in rule.get("cause", []):
        conf, hits = c["prior"], []
        for ev in c.get("evidence", []):
            rx, kind = ev.get("_rx"), ev.get("_kind")
            if rx is None:
                continue
            texts = {"frame": frames, "log": lines, "assertion": [assertion or ""]}[kind]
            for t in texts:
                m = rx.search(t)
                if m:
                    conf += ev["weight"]
                    hits.append((kind, {k: v for k, v in m.groupdict().items() if v}))
                    break
        res.append((min(conf, 0.95), c["id"], hits))
    res.sort(key=lambda x: -x[0])
    return res


def check_corpus(rules, corpus_dir):
    labels = {}
    lp = os.path.join(corpus_dir, "labels.jsonl")
    if os.path.exists(lp):
        for ln in open(lp):
            if ln.strip():
                d = json.loads(ln)
                labels[d["id"]] = d
    by_id = {r["id"]: r for r in rules}
    report = []
    for fn in sorted(os.listdir(corpus_dir)):
        if not fn.endswith(".log"):
            continue
        lid = fn[:-4]
        raw = open(os.path.join(corpus_dir, fn), errors="replace").read().splitlines()
        lines = []
        for ln in raw:   # re-join device lines split after "FILE:LINE:" (pasted / wrapped logs)
            if lines and re.search(r"\.\w+:\d+:\s*$", lines[-1]) and re.match(r"\s*block: \[", ln):
                lines[-1] = lines[-1].rstrip() + " " + ln.strip()
            else:
                lines.append(ln)
        frames = frames_of(lines)
        found, assertion = None, None
        for ln in lines:
            dev = parse_device_line(ln)
            if dev:
                got = match_rules(rules, dev)
                if got:
                    found, assertion = got[0], dev["assertion"]
                    break
        cpu = sorted({r["id"] for r in rules for rx in r["_cpu"] if rx is not None for ln in lines if rx.search(ln)})
        if found is None:
            found = cpu[0] if cpu else None
        rule = by_id.get(found)
        causes = rank_causes(rule, lines, frames, assertion) if rule else []
        lab = labels.get(lid, {})
        fam = rule["op_family"] if rule else None
        top = causes[0][1] if causes else None
        ok_fam = fam == lab.get("op_family")
        ok_cause = lab.get("cause") in (None, "unknown") or top == lab.get("cause")
        report.append((lid, found, fam, lab.get("op_family"), ok_fam, top, lab.get("cause"), ok_cause, cpu, causes[:3]))
    return report


def write_fixture(rules, tsv, path, corpus_dir=None):
    """Write `expected_rule<TAB>printed line` rows (one per TSV row and printing variant,
    latest release only, plus the synthetic lines; expected_rule `-` = no rule / DA004 fallback)."""
    versions, rows = load_tsv(tsv)
    out, seen = [], set()
    for row in rows:
        last = {}
        for line, desc, expr in printed_lines(row):
            if desc.startswith("linux"):
                last[expr] = line        # keep the newest release per expression
                continue
            out.append((line, desc))
        out.extend((ln, "linux") for ln in last.values())
    out.extend((ln, "synthetic") for ln, _ in SYNTHETIC)
    if corpus_dir and os.path.isdir(corpus_dir):
        for fn in sorted(os.listdir(corpus_dir)):
            if fn.endswith(".log"):
                for ln in open(os.path.join(corpus_dir, fn), errors="replace").read().splitlines():
                    if parse_device_line(ln) and "\t" not in ln:
                        out.append((ln, "corpus:" + fn[:-4]))
                        break
    with open(path, "w") as f:
        f.write("# expected_rule\tvariant\tdevice line  (generated by catalog/check_catalog.py --write-fixture)\n")
        for line, desc in out:
            if line in seen:
                continue
            seen.add(line)
            dev = parse_device_line(line)
            got = match_rules(rules, dev) if dev else []
            f.write(f"{got[0] if len(got) == 1 else '-'}\t{desc}\t{line}\n")
    return len(seen)


def main(argv):
    tsv = None
    fixture = None
    corpus = "/work/shared/corpus/dev-logs"
    cat_dir = HERE
    verbose = "-v" in argv
    args = [a for a in argv if a != "-v"]
    i = 0
    while i < len(args):
        if args[i] == "--corpus":
            corpus = args[i + 1]
            i += 2
        elif args[i] == "--write-fixture":
            fixture = args[i + 1]
            i += 2
        elif args[i] == "--catalog":
            cat_dir = args[i + 1]
            i += 2
        else:
            tsv = args[i]
            i += 1
    here = os.path.dirname(os.path.abspath(__file__))
    tsv = tsv or os.path.join(here, "reference", "pytorch-device-asserts-lines.tsv")
    rules = load_catalog(cat_dir)
    errors = validate(rules)
    print(f"{len(rules)} rule files")
    for e in errors:
        print("ERROR", e, file=sys.stderr)
    n, per_rule_rows, problems = check_tsv(rules, tsv, verbose)
    print(f"\nTSV: {n} rows")
    for k in sorted(per_rule_rows):
        print(f"  {k:12s} {per_rule_rows[k]}")
    for p in problems:
        print("PROBLEM", p, file=sys.stderr)
    if os.path.isdir(corpus):
        print("\nCorpus (log, rule, family, label family, cause top, label cause):")
        for lid, rule, fam, lfam, okf, top, lcause, okc, cpu, causes in check_corpus(rules, corpus):
            mark = ("ok " if okf else "FAM") + (" ok " if okc else " CAU")
            print(f"  {lid} {mark} rule={rule} fam={fam} (label {lfam}) top={top} (label {lcause}) cpu={cpu}")
            if verbose:
                for c in causes:
                    print(f"        {c[0]:.2f} {c[1]} {c[2]}")
    if fixture:
        print(f"\nwrote {write_fixture(rules, tsv, fixture, corpus)} fixture lines to {fixture}")
    bad = bool(errors or problems)
    print("\nFAILED" if bad else "\nOK")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

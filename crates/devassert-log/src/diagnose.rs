//! From what the reader kept to a [`Report`]: the root failure (the earliest
//! assertion group, or the device-side assert error when no kernel line was
//! captured, or a ROCm abort, an illegal memory access, a host-side CPU
//! message), its rule, the traceback's place (a reliable `location` or only
//! `noticed_at`), the ranked causes, and everything after it as fallout.

use crate::errors::HostKind;
use crate::ranks::RankSet;
use crate::reader::{AssertGroup, Facts, HostEvent, Pos};
use crate::traceback::{Frame, Traceback};
use crate::values;
use devassert_core::catalog::fallback;
use devassert_core::{
    ids, Bound, Catalog, Command, CompiledRule, DeviceAssert, Fallout, Finding, InputSummary,
    OpFamily, Report, Scalar, SourceLocation,
};
use serde_json::{json, Map, Value};

/// How the root failure showed itself.
enum Root<'a> {
    Assert(&'a AssertGroup),
    /// The device-side assert error with no kernel line.
    NoKernelLine(&'a HostEvent),
    /// ROCm's kernel `abort()`: `HIP error: unspecified launch failure` / HSA queue abort.
    RocmAbort(&'a HostEvent),
    IllegalAccess(&'a HostEvent),
    Cpu(usize),
}

pub fn diagnose(facts: &Facts, catalog: &Catalog) -> Report {
    let mut report = Report::new(Command::Explain);
    report.inputs = Some(inputs(facts));
    if catalog.rules().is_empty() {
        // No rule to tie a finding to (a catalog built without rule files).
        return report;
    }
    let order = group_order(facts);
    let roots = roots(facts, &order);
    for root in &roots {
        if let Some(f) = finding(facts, catalog, root) {
            report.findings.push(f);
        }
    }
    if !report.findings.is_empty() {
        report.fallout = fallout(facts, &order, &roots);
    }
    report.exit_code = devassert_core::exit_code(&report.findings, false);
    report
}

fn inputs(facts: &Facts) -> Vec<InputSummary> {
    facts
        .inputs
        .iter()
        .map(|i| InputSummary {
            bytes: i.bytes,
            lines: i.lines,
            name: i.name.clone(),
        })
        .collect()
}

/// Assertion groups, earliest first: by their timestamps when every group has
/// one of the same clock, else by position in the inputs.
fn group_order(facts: &Facts) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..facts.groups.len()).collect();
    let g = &facts.groups;
    let kinds: Vec<_> = g.iter().map(|x| x.first_time.map(|t| t.kind)).collect();
    let timed = !g.is_empty() && kinds.iter().all(|k| k.is_some() && *k == kinds[0]);
    if timed {
        idx.sort_by_key(|&i| (g[i].first_time, g[i].first));
    } else {
        idx.sort_by_key(|&i| g[i].first);
    }
    idx
}

fn host(facts: &Facts, kind: HostKind) -> Option<&HostEvent> {
    facts.host.iter().find(|e| e.kind == kind)
}

fn roots<'a>(facts: &'a Facts, order: &[usize]) -> Vec<Root<'a>> {
    let first_assert: Option<Pos> = order.first().map(|&i| facts.groups[i].first);
    let device_err = facts.device_error.as_ref();
    let assert_pos = [first_assert, device_err.map(|e| e.first)]
        .into_iter()
        .flatten()
        .min();
    let mut out = Vec::new();
    if let Some(ima) = host(facts, HostKind::IllegalAccess) {
        // An illegal access before any assert is its own root cause; after one it is fallout.
        if assert_pos.is_none_or(|p| ima.first < p) {
            out.push(Root::IllegalAccess(ima));
        }
    }
    if let Some(&i) = order.first() {
        out.push(Root::Assert(&facts.groups[i]));
    } else if let Some(e) = device_err {
        out.push(Root::NoKernelLine(e));
    } else if let Some(e) = rocm_abort(facts) {
        out.push(Root::RocmAbort(e));
    }
    if out.is_empty() && !facts.cpu.is_empty() {
        out.push(Root::Cpu(0));
    }
    out
}

fn rocm_abort(facts: &Facts) -> Option<&HostEvent> {
    let launch = host(facts, HostKind::LaunchFailure)
        .filter(|e| e.message.contains("HIP") || e.message.contains("hip"));
    launch.or_else(|| host(facts, HostKind::HsaAbort))
}

/// The rule a traceback's code names (the catalog's op guesses), for a
/// failure with no kernel line; with its id and the frame's place.
fn op_guess<'c>(
    catalog: &'c Catalog,
    tb: Option<&Traceback>,
) -> Option<(&'c CompiledRule, &'c str, String)> {
    for f in tb?.frames.iter().rev() {
        let texts = f.code.iter().map(String::as_str);
        for text in texts.chain(std::iter::once(f.function.as_str())) {
            if let Some(rule) = catalog.guess_op(text) {
                return Some((rule, rule.id.as_str(), format!("{}:{}", f.file, f.line)));
            }
        }
    }
    None
}

/// The device-related words a traceback's exception carries.
fn device_related(tb: &Traceback) -> u8 {
    let text: Vec<&str> = tb.text().collect();
    let has = |k: &str| text.iter().any(|l| l.contains(k));
    if has("device-side assert")
        || has("illegal memory access")
        || has("unspecified launch failure")
        || has("cuda runtime error")
    {
        2
    } else if has("CUDA")
        || has("HIP error")
        || has("cuda")
        || has("AcceleratorError")
        || has("CUBLAS")
        || has("NCCL")
    {
        1
    } else {
        0
    }
}

/// Ranks listed in a finding's evidence or a fallout item; `ranks_total`
/// says how many there were when that is more.
const RANKS_LISTED: usize = 256;

/// The count of ranks, when the list does not hold them all.
fn ranks_total(ranks: &RankSet) -> Option<u64> {
    (ranks.count() > RANKS_LISTED as u64 || ranks.untracked() > 0).then_some(ranks.count())
}

/// The highest rank, when the list does not hold them all.
fn ranks_max(ranks: &RankSet) -> Option<i64> {
    ranks_total(ranks).and(ranks.max())
}

/// Lines whose rank was past what the rank set could count.
fn ranks_uncounted(ranks: &RankSet) -> Option<u64> {
    (ranks.untracked() > 0).then_some(ranks.untracked())
}

/// `ranks`; `ranks_total` and `ranks_max` when the list does not hold them
/// all; `ranks_uncounted` and `ranks_total_at_least` when lines named ranks
/// past what was counted (the count is then a lower bound).
fn rank_evidence(evidence: &mut Map<String, Value>, ranks: &RankSet) {
    let listed: Vec<i64> = ranks.iter().take(RANKS_LISTED).collect();
    evidence.insert("ranks".into(), json!(listed));
    if let Some(total) = ranks_total(ranks) {
        evidence.insert("ranks_total".into(), json!(total));
    }
    if let Some(max) = ranks_max(ranks) {
        evidence.insert("ranks_max".into(), json!(max));
    }
    if let Some(n) = ranks_uncounted(ranks) {
        evidence.insert("ranks_uncounted".into(), json!(n));
        evidence.insert("ranks_total_at_least".into(), json!(true));
    }
}

/// The traceback that reported the failure: device-related first, the root's
/// rank preferred, then the earliest.
fn pick_traceback<'a>(
    facts: &'a Facts,
    ranks: &RankSet,
    cpu_text: Option<&str>,
) -> Option<&'a Traceback> {
    if let Some(text) = cpu_text {
        if let Some(tb) = facts.tracebacks.iter().find(|tb| {
            tb.exception
                .as_deref()
                .is_some_and(|e| e.contains(text) || text.contains(e))
        }) {
            return Some(tb);
        }
    }
    let score = |tb: &Traceback| {
        let rank_ok = ranks.is_empty() || tb.rank.is_none_or(|r| ranks.contains(r));
        (device_related(tb), rank_ok)
    };
    let best = facts.tracebacks.iter().map(score).max()?;
    if best.0 == 0 && cpu_text.is_none() {
        return None;
    }
    facts.tracebacks.iter().find(|tb| score(tb) == best)
}

/// A chained traceback's predecessor (its frames are evidence too).
fn chain_before<'a>(facts: &'a Facts, tb: &Traceback) -> Option<&'a Traceback> {
    if !tb.chained {
        return None;
    }
    facts
        .tracebacks
        .iter()
        .filter(|t| t.rank == tb.rank && (t.input, t.line) < (tb.input, tb.line))
        .max_by_key(|t| (t.input, t.line))
}

/// Whether the traceback shows where the failure happened: taken with
/// blocking launches (no asynchronous hint but the DSA / `Search for` line
/// the same releases print), or the log shows CUDA_LAUNCH_BLOCKING=1.
fn synchronous(facts: &Facts, tb: &Traceback) -> bool {
    if facts.launch_blocking {
        return true;
    }
    let lines: Vec<&str> = tb.text().collect();
    let async_hint = lines.iter().any(|l| crate::errors::is_async_hint(l));
    let suffix = lines
        .iter()
        .any(|l| crate::errors::is_dsa_hint(l) || l.starts_with("Search for `"));
    !async_hint && suffix
}

fn loc(f: &Frame) -> SourceLocation {
    SourceLocation {
        file: f.file.clone(),
        line: f.line,
        function: (!f.function.is_empty()).then(|| f.function.clone()),
        code: f.code.clone(),
    }
}

fn frames_text<'a>(tbs: &[&'a Traceback]) -> Vec<&'a str> {
    let mut v = Vec::new();
    for tb in tbs {
        // PyTorch's own frames are the same for every caller (`torch.embedding(weight, input, padding_idx, …)`)
        // and say nothing about which table or label was wrong.
        for f in tb
            .frames
            .iter()
            .filter(|f| !f.file.replace('\\', "/").contains("/torch/"))
        {
            // The module's name says which model ran (`modeling_roberta.py`).
            v.push(f.file.rsplit(['/', '\\']).next().unwrap_or(&f.file));
            v.push(f.function.as_str());
            if let Some(c) = &f.code {
                v.push(c.as_str());
            }
        }
        if let Some(e) = &tb.exception {
            v.push(e.as_str());
        }
    }
    v
}

fn finding(facts: &Facts, catalog: &Catalog, root: &Root<'_>) -> Option<Finding> {
    let mut evidence = Map::new();
    let mut family: Option<OpFamily> = None;
    let (rule, assertion, ranks, cpu_text): (&CompiledRule, Option<String>, RankSet, Option<&str>) =
        match root {
            Root::Assert(g) => {
                // hipify renames `native/cuda/X.cu` to `native/hip/X.hip`: match ROCm lines as their CUDA source.
                let file = if g.rocm || g.file.ends_with(".hip") {
                    g.file
                        .replace("/native/hip/", "/native/cuda/")
                        .replace(".hip", ".cu")
                } else {
                    g.file.clone()
                };
                let a = DeviceAssert {
                    file: &file,
                    kernel: g.kernel.as_deref(),
                    assertion: &g.assertion,
                };
                let mut rule = catalog.match_assert(&a);
                if let Some(i) = crate::infer::rule_for(catalog, &a, rule) {
                    rule = i.rule;
                    evidence.insert("inferred".into(), json!(i.how));
                } else if rule.internal {
                    // An internal guard of a known kernel (the NLL overflow check) is still that op.
                    if let Some(fam) = crate::infer::family_by_name(catalog, &a) {
                        family = Some(fam);
                    }
                }
                if let Some(k) = &g.kernel {
                    evidence.insert("kernel".into(), json!(k));
                }
                evidence.insert("assertion".into(), json!(g.assertion));
                if let Some(s) = g.source() {
                    evidence.insert("source".into(), json!(s));
                }
                if !g.triples.is_empty() {
                    evidence.insert("threads".into(), json!(g.triples.len()));
                }
                if !g.blocks.is_empty() {
                    evidence.insert("blocks".into(), json!(g.blocks.len()));
                }
                rank_evidence(&mut evidence, &g.ranks);
                evidence.insert("count".into(), json!(g.lines));
                if g.triples_capped {
                    evidence.insert(
                        "note".into(),
                        json!("more distinct threads than counted; the counts are lower bounds"),
                    );
                }
                if g.rocm {
                    evidence.insert("platform".into(), json!("rocm"));
                }
                if let Some(m) = &g.printf_message {
                    evidence.insert("message".into(), json!(m));
                } else if let Some(e) = &facts.device_error {
                    evidence.insert("message".into(), json!(e.message));
                }
                (rule, Some(g.assertion.clone()), g.ranks.clone(), None)
            }
            Root::NoKernelLine(e) | Root::RocmAbort(e) | Root::IllegalAccess(e) => {
                let id = match root {
                    Root::NoKernelLine(_) => fallback::NO_KERNEL_LINE,
                    Root::RocmAbort(_) => ids::ROCM_KERNEL_ABORT.as_str(),
                    _ => ids::ILLEGAL_MEMORY_ACCESS.as_str(),
                };
                let rule = catalog
                    .get(id)
                    .or_else(|| catalog.get(fallback::NO_KERNEL_LINE))?;
                evidence.insert("message".into(), json!(e.message));
                rank_evidence(&mut evidence, &e.ranks);
                evidence.insert("count".into(), json!(e.count));
                if let Some(hsa) = host(facts, HostKind::HsaAbort) {
                    if matches!(root, Root::RocmAbort(_)) {
                        evidence.insert("hsa".into(), json!(hsa.message));
                    }
                }
                (rule, None, e.ranks.clone(), None)
            }
            Root::Cpu(i) => {
                let hit = &facts.cpu[*i];
                let rule = catalog.get(&hit.rule)?;
                evidence.insert("message".into(), json!(hit.text));
                evidence.insert("host_side".into(), json!(true));
                (
                    rule,
                    None,
                    hit.rank.into_iter().collect(),
                    Some(hit.text.as_str()),
                )
            }
        };
    let mut f = catalog.finding(rule);
    if let Some(fam) = family {
        f.op_family = fam;
    }
    let tb = pick_traceback(facts, &ranks, cpu_text);
    let mut tbs: Vec<&Traceback> = tb.into_iter().collect();
    if let Some(prev) = tb.and_then(|t| chain_before(facts, t)) {
        tbs.push(prev);
    }
    // Place: reliable only from a synchronous traceback, a DSA launch site, or a host-side error.
    if let Some(tb) = tb {
        let frame = tb.user_frame().or(tb.frames.last());
        let reliable = matches!(root, Root::Cpu(_)) || synchronous(facts, tb);
        if let Some(fr) = frame {
            if reliable {
                f.location = Some(loc(fr));
            } else {
                f.noticed_at = Some(loc(fr));
            }
        }
        // The exception Python raised says it better than a warning printed before it.
        if let Some(e) = tb
            .exception
            .as_ref()
            .filter(|e| device_related(tb) > 0 || e.contains("Error"))
        {
            evidence.insert("message".into(), json!(e));
        }
        if reliable && !matches!(root, Root::Cpu(_)) {
            evidence.insert("synchronous".into(), json!(true));
        }
    }
    if let (Root::Assert(g), Some(dsa)) = (root, &facts.dsa) {
        if g.from_dsa
            || dsa
                .message
                .as_deref()
                .map(crate::normalize::normalize_assertion)
                .as_deref()
                == Some(g.assertion.as_str())
        {
            if let Some(site) = dsa.launch_file.as_deref().and_then(split_file_line) {
                if f.location.is_none() {
                    f.location = Some(SourceLocation {
                        file: site.0,
                        line: site.1,
                        function: dsa.launch_function.clone(),
                        code: None,
                    });
                }
            }
            evidence.insert(
                "dsa".into(),
                json!({"kernel": dsa.kernel, "launch": dsa.launch_file, "failures": dsa.failures}),
            );
        }
    }
    // A failure without a kernel line: the traceback's op says which kernel it likely was.
    let mut rank_rule = rule;
    if matches!(
        root,
        Root::NoKernelLine(_) | Root::IllegalAccess(_) | Root::RocmAbort(_)
    ) {
        if let Some((guess, id, at)) = op_guess(catalog, tb) {
            f.op_family = guess.op_family;
            rank_rule = guess;
            evidence.insert(
                "op_guess".into(),
                json!(format!(
                    "{id} {} (from the code at {at}; no kernel line confirms it)",
                    guess.name
                )),
            );
        }
        if matches!(root, Root::NoKernelLine(_)) {
            let how = if facts.notebook.is_some() {
                "`devassert.guard()` in the notebook names it"
            } else {
                "`devassert run -- CMD` reruns with the guard and names it"
            };
            evidence.insert("note".into(), json!(format!("the log has no kernel assertion line (it goes to stdout; check the other file of a split log), so the op is not known for sure; {how}")));
        }
    }
    let frames = frames_text(&tbs);
    let ranked = catalog.rank(rank_rule, &frames, assertion.as_deref(), &facts.hits);
    f.causes = ranked.causes;
    let mut fixes = ranked.fixes;
    for x in std::mem::take(&mut f.fixes) {
        devassert_core::catalog::push_fix(&mut fixes, &x);
    }
    f.fixes = fixes;
    f.values = ranked.values;
    f.bound = ranked.bound;
    // Values stated in the log itself (CPU messages of the same op, Inductor bounds).
    let mut stated_texts: Vec<&str> = Vec::new();
    if let Some(a) = &assertion {
        stated_texts.push(a);
    }
    if let Root::Assert(g) = root {
        if let Some(m) = &g.printf_message {
            stated_texts.push(m);
        }
    }
    for hit in &facts.cpu {
        if hit.rule == rule.id || hit.rule == rank_rule.id {
            stated_texts.push(&hit.text);
        }
    }
    if let Some(e) = facts
        .device_error
        .as_ref()
        .filter(|_| matches!(root, Root::NoKernelLine(_)))
    {
        stated_texts.push(&e.message);
    }
    for text in stated_texts {
        let s = values::stated(text);
        for v in s.values {
            if !f.values.contains(&v) {
                f.values.push(v);
            }
        }
        if f.bound.is_none() {
            f.bound = s.bound;
        }
    }
    // A line whose evidence gave the rule's bound may state the value that ran past it.
    for s in facts
        .stated
        .iter()
        .filter(|s| s.bound.is_some() && s.bound == f.bound)
    {
        for v in &s.values {
            if !f.values.contains(v) {
                f.values.push(*v);
            }
        }
    }
    if let Some(Bound {
        high: Some(Scalar::Int(h)),
        ..
    }) = f.bound
    {
        if f.values.is_empty() && f.op_family == OpFamily::Inductor {
            evidence.insert(
                "bound_note".into(),
                json!(format!("the indexed dimension has size {h}")),
            );
        }
    }
    if let Some(name) = facts
        .inputs
        .get(first_input(root, facts))
        .map(|i| i.name.clone())
    {
        if facts.inputs.len() > 1 {
            evidence.insert("input".into(), json!(name));
        }
    }
    if let Some(place) = &facts.notebook {
        // A notebook is rerun with the guard in a cell, not `devassert run` (see `advice`).
        evidence.insert("notebook".into(), json!(place));
    }
    f.evidence = evidence;
    Some(f)
}

fn first_input(root: &Root<'_>, facts: &Facts) -> usize {
    match root {
        Root::Assert(g) => g.first.input,
        Root::NoKernelLine(e) | Root::RocmAbort(e) | Root::IllegalAccess(e) => e.first.input,
        Root::Cpu(i) => facts.cpu[*i].pos.input,
    }
}

fn split_file_line(s: &str) -> Option<(String, u64)> {
    let (file, line) = s.rsplit_once(':')?;
    Some((file.to_string(), line.trim().parse().ok()?))
}

fn fallout(facts: &Facts, order: &[usize], roots: &[Root<'_>]) -> Vec<Fallout> {
    let mut items: Vec<(Pos, Fallout)> = Vec::new();
    let ima_root = roots.iter().any(|r| matches!(r, Root::IllegalAccess(_)));
    let rocm_root = roots.iter().any(|r| matches!(r, Root::RocmAbort(_)));
    for e in &facts.host {
        let mut count = e.count;
        match e.kind {
            HostKind::IllegalAccess if ima_root => count -= 1,
            // The ROCm abort's own lines are the root, their repeats fallout.
            HostKind::LaunchFailure | HostKind::HsaAbort if rocm_root => count -= 1,
            _ => {}
        }
        if count == 0 {
            continue;
        }
        let fo = Fallout {
            kind: e.kind.fallout_kind().to_string(),
            message: e.message.clone(),
            count,
            ranks: e.ranks.iter().take(RANKS_LISTED).collect(),
            ranks_total: ranks_total(&e.ranks),
            ranks_max: ranks_max(&e.ranks),
            ranks_uncounted: ranks_uncounted(&e.ranks),
            ranks_total_at_least: e.ranks.untracked() > 0,
            line: Some(e.first.line),
        };
        items.push((e.first, fo));
    }
    for &i in order.iter().skip(1) {
        let g = &facts.groups[i];
        let mut message = match &g.kernel {
            Some(k) => format!("{k}: `{}`", g.assertion),
            None => format!("`{}`", g.assertion),
        };
        if let Some(s) = g.source() {
            message.push_str(&format!(" ({s})"));
        }
        let fo = Fallout {
            kind: "later_assert".into(),
            message,
            count: g.lines,
            ranks: g.ranks.iter().take(RANKS_LISTED).collect(),
            ranks_total: ranks_total(&g.ranks),
            ranks_max: ranks_max(&g.ranks),
            ranks_uncounted: ranks_uncounted(&g.ranks),
            ranks_total_at_least: g.ranks.untracked() > 0,
            line: Some(g.first.line),
        };
        items.push((g.first, fo));
    }
    items.sort_by_key(|(p, _)| *p);
    items.into_iter().map(|(_, f)| f).collect()
}

//! From what the reader kept to a [`Report`]: the root failure (the earliest
//! assertion group, or the device-side assert error when no kernel line was
//! captured, or a ROCm abort, an illegal memory access, a host-side CPU
//! message), its rule, the traceback's place (a reliable `location` or only
//! `noticed_at`), the ranked causes, and everything after it as fallout.

mod decided;
mod fallout;
mod place;
mod rank_list;
mod root;

use crate::errors::HostKind;
use crate::ranks::RankSet;
use crate::reader::{AssertGroup, Facts};
use crate::traceback::Traceback;
use crate::values;
use devassert_core::catalog::fallback;
use devassert_core::{
    ids, Bound, Catalog, Command, CompiledRule, DeviceAssert, Finding, InputSummary, OpFamily,
    Report, Scalar, SourceLocation,
};
use fallout::fallout;
use place::{
    chain_before, code_above, cpu_raiser, device_related, frames_text, kernel_name, loc, op_guess,
    pick_traceback, pytorch_wrapper, synchronous,
};
use rank_list::rank_evidence;
use root::{first_input, group_order, host, roots, Root};
use serde_json::{json, Map};

pub fn diagnose(facts: &Facts, catalog: &Catalog) -> Report {
    let mut report = Report::new(Command::Explain);
    report.inputs = Some(inputs(facts));
    if catalog.rules().is_empty() {
        // No rule to tie a finding to (a catalog built without rule files).
        return report;
    }
    let order: Vec<usize> = group_order(facts)
        .into_iter()
        .filter(|&i| owned(catalog, &facts.groups[i]))
        .collect();
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

/// Whether a group is a device assertion: a bare one (its assertion alone,
/// no path, no coordinates) only when a rule's own assertion owns it, not
/// prose that says "Assertion `x` failed".
fn owned(catalog: &Catalog, g: &AssertGroup) -> bool {
    !g.bare
        || catalog
            .match_assert_any_file(&DeviceAssert {
                file: "",
                kernel: None,
                assertion: &g.assertion,
            })
            .is_some()
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
                if g.triples.capped() {
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
                let mut rule = catalog
                    .get(id)
                    .or_else(|| catalog.get(fallback::NO_KERNEL_LINE))?;
                // No device line, but a host line may name the kernel's source.
                if matches!(root, Root::NoKernelLine(_)) {
                    let named = std::iter::once(e.message.as_str())
                        .chain(facts.host.iter().map(|h| h.message.as_str()))
                        .find_map(|m| crate::infer::rule_for_host_message(catalog, m));
                    if let Some(r) = named {
                        rule = r;
                        evidence.insert(
                            "inferred".into(),
                            json!("the rule of the kernel source the error line names"),
                        );
                    }
                }
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
            Root::CutTraceback(_) => (
                catalog.get(ids::TRACEBACK_WITHOUT_ERROR_LINE.as_str())?,
                None,
                RankSet::default(),
                None,
            ),
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
    let tb = match root {
        Root::CutTraceback(tb) => Some(*tb),
        _ => pick_traceback(facts, &ranks, cpu_text),
    };
    // The error line's code when the log cut its frame line: the innermost frame's.
    let error_at = match root {
        Root::Cpu(i) => facts.cpu.get(*i).map(|h| h.pos),
        Root::NoKernelLine(e) | Root::RocmAbort(e) | Root::IllegalAccess(e) => Some(e.first),
        Root::Assert(_) => facts.device_error.as_ref().map(|e| e.first),
        Root::CutTraceback(_) => None,
    };
    let code_above = code_above(facts, error_at);
    let rule = cpu_text
        .and_then(|m| cpu_raiser(catalog, tb, code_above, rule, m))
        .unwrap_or(rule);
    let mut f = catalog.finding(rule);
    if let Some(fam) = family {
        f.op_family = fam;
    }
    let mut tbs: Vec<&Traceback> = tb.into_iter().collect();
    if let Some(prev) = tb.and_then(|t| chain_before(facts, t)) {
        tbs.push(prev);
    }
    // Place: reliable only from a synchronous traceback, a DSA launch site, or a host-side error.
    if let Some(tb) = tb {
        let innermost = if tb.innermost_first {
            tb.frames.first()
        } else {
            tb.frames.last()
        };
        let frame = tb.user_frame().or(innermost);
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
    // A cut traceback's causes, where its frames name no op, are those of a
    // device-side assert without its kernel line (its rule only says what
    // the log lacks).
    let mut rank_rule = match root {
        Root::CutTraceback(_) => catalog.get(fallback::NO_KERNEL_LINE).unwrap_or(rule),
        _ => rule,
    };
    // The faulting kernel of a memory checker's report, if the log is one.
    let checker_kernel = catalog.device_kernel(&facts.hits);
    if matches!(
        root,
        Root::NoKernelLine(_) | Root::IllegalAccess(_) | Root::RocmAbort(_) | Root::CutTraceback(_)
    ) {
        if let Some(k) = checker_kernel.filter(|_| matches!(root, Root::IllegalAccess(_))) {
            evidence.insert("kernel".into(), json!(kernel_name(k)));
        }
        if let Some((guess, from)) = op_guess(catalog, tb, code_above, checker_kernel) {
            f.op_family = guess.op_family;
            rank_rule = guess;
            evidence.insert(
                "op_guess".into(),
                json!(format!("{} {} ({from})", guess.id, guess.name)),
            );
        }
        if matches!(root, Root::CutTraceback(_)) {
            evidence.insert("error_line_missing".into(), json!(true));
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
    let mut frames = frames_text(&tbs);
    frames.extend(code_above.filter(|c| !pytorch_wrapper(c)));
    let ranked = catalog.rank(rank_rule, &frames, assertion.as_deref(), &facts.hits);
    f.causes = ranked.causes;
    let mut fixes = ranked.fixes;
    if matches!(root, Root::CutTraceback(_)) {
        // Getting the error line comes before what the causes' rule advises.
        let own = std::mem::take(&mut f.fixes);
        f.fixes = std::mem::replace(&mut fixes, own);
    }
    for x in std::mem::take(&mut f.fixes) {
        devassert_core::catalog::push_fix(&mut fixes, &x);
    }
    if checker_kernel.is_some() {
        // The log is a memory checker's report already.
        let rerun = |x: &String| !x.contains("compute-sanitizer");
        fixes.retain(rerun);
        for c in &mut f.causes {
            c.fixes.retain(rerun);
        }
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
        if hit.rule == rule.id
            || hit.rule == rank_rule.id
            || rule.states_cpu_message(&hit.text)
            || rank_rule.states_cpu_message(&hit.text)
        {
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
    // The values the failure itself states (not a length or size a log
    // line's evidence captured): what the facts engine reads.
    let mut failure_values = Vec::new();
    for text in stated_texts {
        let s = values::stated(text);
        for v in s.values {
            if !failure_values.contains(&v) {
                failure_values.push(v);
            }
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
            if !failure_values.contains(v) {
                failure_values.push(*v);
            }
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
    // The causes re-decided by the facts the log states (values, bound, lines, frames).
    let decided = decided::decide(
        catalog,
        &facts.hits,
        &frames,
        catalog.values_of(f.op_family, &rank_rule.id),
        &failure_values,
        f.bound.as_ref(),
        std::mem::take(&mut f.causes),
    );
    f.fixes.retain(|x| !decided.refutes_fix(x));
    f.causes = decided.causes;
    if !decided.ruled_out.is_empty() {
        evidence.insert("ruled_out".into(), json!(decided.ruled_out));
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

fn split_file_line(s: &str) -> Option<(String, u64)> {
    let (file, line) = s.rsplit_once(':')?;
    Some((file.to_string(), line.trim().parse().ok()?))
}

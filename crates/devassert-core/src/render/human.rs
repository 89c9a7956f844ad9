//! The terminal rendering: what happened, where, why, and what to do next.

use super::inert;
use super::options::RenderOptions;
use super::ranks::{rank_list, RanksBeyond};
use super::ruled_out::ruled_out_lines;
use super::values_line::values_line;
use crate::finding::{Fallout, Finding, Report, Sample};
use crate::place::SourceLocation;
use crate::sections::Command;
use crate::source::SourceRoot;
use crate::vocabulary::Severity;
use serde_json::Value;
use std::fmt::Write;

struct Paint {
    on: bool,
}

impl Paint {
    fn wrap(&self, code: &str, s: &str) -> String {
        if self.on {
            format!("\x1b[{code}m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    }
    fn bold(&self, s: &str) -> String {
        self.wrap("1", s)
    }
    fn dim(&self, s: &str) -> String {
        self.wrap("2", s)
    }
    fn sev(&self, sev: Severity, s: &str) -> String {
        let code = match sev {
            Severity::Error => "1;31",
            Severity::Warning => "1;33",
            Severity::Note => "1;36",
        };
        self.wrap(code, s)
    }
    fn blue(&self, s: &str) -> String {
        self.wrap("1;34", s)
    }
    fn green(&self, s: &str) -> String {
        self.wrap("32", s)
    }
}

/// `report` is the inert copy whose strings are safe to print (the words
/// of a suggested command were quoted for the shell before, by `advice`).
pub(super) fn render(report: &Report, opts: &RenderOptions) -> String {
    let p = Paint { on: opts.color };
    // One root (and one read budget) for every snippet of the run.
    let src = match &opts.sources {
        Some(s) => Some(s.clone()),
        None => opts
            .source_root
            .as_deref()
            .and_then(SourceRoot::new)
            .map(std::rc::Rc::new),
    };
    let src = src.as_deref();
    let mut out = sections(report, opts);
    let unread = report.exit_code == 2
        && matches!(
            report.command,
            Command::Scan | Command::Check | Command::Explain
        );
    // The scan table has said "nothing scanned" already: no second summary.
    let said_nothing_scanned = !opts.quiet
        && report
            .scan
            .as_ref()
            .is_some_and(|s| s.files.is_empty() && !s.errors.is_empty());
    if report.findings.is_empty() && unread {
        // Not an all-clear: part of the input was never read.
        if !said_nothing_scanned {
            let _ = writeln!(
                out,
                "no findings in what could be read; some input could not be used (see the errors)"
            );
        }
    } else if report.findings.is_empty() {
        let what = match report.command {
            Command::Explain | Command::Run => "no device-side failure found",
            Command::Scan | Command::Check => "no findings",
        };
        let _ = writeln!(out, "{}", p.green(what));
    }
    for (i, f) in report.findings.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        finding(&mut out, &p, f, opts, src);
    }
    // `-q` is findings only: a fallout header with its list left out says nothing.
    if !report.fallout.is_empty() && !opts.quiet {
        fallout(&mut out, &p, &report.fallout);
    }
    out
}

/// What the command read, above its findings: the scan's table of arrays,
/// the model directory's summary (not with `--quiet`).
fn sections(report: &Report, opts: &RenderOptions) -> String {
    match (&report.scan, &report.model) {
        (Some(scan), _) if !opts.quiet => {
            super::scan_table::render(scan, &report.findings, opts.verbose)
        }
        (None, Some(model)) if !opts.quiet => {
            super::model_summary::render(model, report.data.as_ref())
        }
        _ => String::new(),
    }
}

fn finding(
    out: &mut String,
    p: &Paint,
    f: &Finding,
    opts: &RenderOptions,
    src: Option<&SourceRoot>,
) {
    let sev = f.shown_severity();
    let caught = if f.caught {
        format!(" {}", p.dim("(caught by the program)"))
    } else {
        String::new()
    };
    let _ = writeln!(
        out,
        "{}{} {}{caught}",
        p.sev(sev, &format!("{}[{}]", sev.as_str(), f.rule)),
        p.bold(&format!(" {}:", f.name)),
        p.bold(&f.summary)
    );
    let gutter = p.blue("   |");
    if let Some(loc) = &f.location {
        let _ = writeln!(out, "  {} {loc}", p.blue("-->"));
        snippet(out, p, loc, src);
        if let Some(n) = &f.noticed_at {
            let _ = writeln!(out, "{gutter} noticed later at {n}");
        }
    } else if let Some(n) = &f.noticed_at {
        let _ = writeln!(
            out,
            "  {} {n}  {}",
            p.blue("-->"),
            p.dim("(where Python noticed it)")
        );
        snippet(out, p, n, src);
        // A log cut before its error line does not say the failure was CUDA's.
        let surfaced = if f.evidence.contains_key("error_line_missing") {
            "the log stops inside this traceback: if its error was a device-side assert, this line is where it surfaced, not where it happened"
        } else {
            "this line is where the error surfaced, not where it happened: CUDA reports kernel failures at the next synchronisation"
        };
        let _ = writeln!(out, "{gutter} {}", p.bold(surfaced));
    }
    evidence(out, p, f);
    if let Some(line) = values_line(f) {
        let _ = writeln!(out, "{gutter} {line}");
    }
    if let Some(line) = samples(f) {
        let _ = writeln!(out, "{gutter} {line}");
    }
    let shown_places = if opts.verbose { f.locations.len() } else { 5 };
    for l in f.locations.iter().take(shown_places) {
        let mut s = String::from("at ");
        if let Some(file) = &l.file {
            let _ = write!(s, "{file} ");
        }
        match (&l.position, l.document, l.row, l.offset) {
            (Some(pos), ..) => {
                let _ = write!(s, "position {pos:?}");
            }
            (None, Some(d), Some(r), Some(o)) => {
                let _ = write!(s, "document {d}, sequence {r}, token {o}");
            }
            (None, _, Some(r), Some(o)) => {
                let _ = write!(s, "row {r}, offset {o}");
            }
            (None, _, Some(r), None) => {
                let _ = write!(s, "row {r}");
            }
            // A finding about a whole file (its dtype) names no place in it.
            _ if l.value.is_none() && l.index == 0 && l.file.is_some() => {
                s.truncate(s.trim_end().len());
            }
            _ => {
                let _ = write!(s, "index {}", l.index);
            }
        }
        if let Some(v) = l.value {
            let _ = write!(s, ": {v}");
        }
        let _ = writeln!(out, "{gutter} {s}");
    }
    // Every offending value sits at a place: the true count, not the
    // number of places the finding happens to list, says how many remain.
    let places = f.count.map_or(f.locations.len() as u64, |c| {
        c.max(f.locations.len() as u64)
    });
    let shown = f.locations.len().min(shown_places) as u64;
    if !f.locations.is_empty() && places > shown {
        let _ = writeln!(out, "{gutter} … {} more places", places - shown);
    }
    if opts.verbose {
        evidence_all(out, p, f);
    }
    // `-q`: the finding, its place and values; no causes, no next steps.
    if opts.quiet {
        return;
    }
    if !f.causes.is_empty() {
        causes(out, p, f, opts.verbose);
    }
    for line in ruled_out_lines(f) {
        let _ = writeln!(out, "  {}", p.dim(&line));
    }
    let _ = writeln!(out, "{}", p.bold("next steps:"));
    let mut n = 0;
    // Settled (`advice::settle`): the causes' fixes in rank order, each once.
    for fix in &f.fixes {
        n += 1;
        let _ = writeln!(out, "  {n}. {fix}");
    }
    n += 1;
    let _ = writeln!(
        out,
        "  {n}. {}",
        p.dim(&format!("read more: devassert rule {}", f.rule))
    );
}

/// `-v`: everything the finding rests on, as the JSON has it (kernel,
/// ranks, raise id, worker, pid, files compared, …), one key a line.
fn evidence_all(out: &mut String, p: &Paint, f: &Finding) {
    if f.evidence.is_empty() {
        return;
    }
    let gutter = p.blue("   |");
    let _ = writeln!(out, "{gutter} {}", p.bold("evidence:"));
    for (k, v) in &f.evidence {
        let v = match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let _ = writeln!(out, "{gutter}   {k}: {}", truncate(&v, 200));
    }
}

/// The causes as a ranking, most likely first: their shares come from the
/// catalog's judgement, not from crashes counted, so no percentages.
fn causes(out: &mut String, p: &Paint, f: &Finding, verbose: bool) {
    let title = if f.causes.iter().any(|c| c.established) {
        "causes:"
    } else {
        "likely causes, most likely first:"
    };
    let _ = writeln!(out, "{}", p.bold(title));
    // `-v`: every cause.
    let shown = if verbose { f.causes.len() } else { 4 };
    for (i, c) in f.causes.iter().take(shown).enumerate() {
        match (&c.proof, c.established) {
            (Some(proof), true) => {
                let _ = writeln!(
                    out,
                    "  {}. {} ({}): {}\n     {} {proof}",
                    i + 1,
                    p.bold(&c.id),
                    p.sev(Severity::Error, "established"),
                    c.why,
                    p.bold("proof:")
                );
            }
            _ => {
                let _ = writeln!(out, "  {}. {}: {}", i + 1, p.bold(&c.id), c.why);
            }
        }
    }
}

/// The DataLoader side of a guard finding: which dataset samples the
/// offending rows came from, and the worker that loaded them.
fn samples(f: &Finding) -> Option<String> {
    const SHOWN: usize = 8;
    let worker = f.evidence.get("worker").filter(|w| !w.is_null());
    let mut line = match f.samples.as_slice() {
        [] => String::new(),
        [one] => match one.row {
            Some(row) => format!(
                "dataset sample {} (row {row} of the batch)",
                one.dataset_index
            ),
            None => format!("dataset sample {}", one.dataset_index),
        },
        many => {
            let shown: Vec<String> = many.iter().take(SHOWN).map(Sample::to_string).collect();
            let more = if many.len() > SHOWN {
                format!(", … {} more", many.len() - SHOWN)
            } else {
                String::new()
            };
            format!("dataset samples {}{more} of the batch", shown.join(", "))
        }
    };
    if let Some(w) = worker {
        let w = w.as_str().map_or_else(|| w.to_string(), str::to_string);
        if line.is_empty() {
            line = format!("in DataLoader worker {w}");
        } else {
            let _ = write!(line, ", loaded by DataLoader worker {w}");
        }
    }
    if f.samples_certain == Some(false) {
        if f.samples.is_empty() {
            line.push_str(if line.is_empty() { "" } else { "; " });
            line.push_str("the batch could not be tied to its dataset samples");
        } else {
            // The guard says why (two fetched batches hold the tensor, ...).
            let why = f
                .evidence
                .get("samples_note")
                .and_then(Value::as_str)
                .unwrap_or("the batch may not map to these dataset indices one to one");
            let _ = write!(line, " (not certain: {why})");
        }
    }
    (!line.is_empty()).then_some(line)
}

fn snippet(out: &mut String, p: &Paint, loc: &SourceLocation, src: Option<&SourceRoot>) {
    let gutter = p.blue("   |");
    // The log names the file; only a `.py` under the source root is read (see `source`).
    // A notebook cell's line comes from the log alone (`code`): no file holds it.
    let text = src.and_then(|s| s.read(loc.source_file()?));
    let lines: Vec<&str> = match &text {
        Some(t) => t.lines().collect(),
        None => Vec::new(),
    };
    let idx = loc.line as usize;
    if idx >= 1 && idx <= lines.len() {
        let lo = idx.saturating_sub(1).max(1);
        let hi = (idx + 1).min(lines.len());
        let width = hi.to_string().len().max(3);
        for n in lo..=hi {
            let marker = if n == idx {
                p.sev(Severity::Error, ">")
            } else {
                " ".to_string()
            };
            let num = p.blue(&format!("{n:>width$} |"));
            let _ = writeln!(out, "{marker}{num} {}", inert::line(lines[n - 1]));
        }
    } else if let Some(code) = &loc.code {
        let _ = writeln!(out, "{gutter} {}", code.trim());
    }
}

fn evidence(out: &mut String, p: &Paint, f: &Finding) {
    let gutter = p.blue("   |");
    let e = &f.evidence;
    let s = |k: &str| e.get(k).and_then(Value::as_str);
    if let Some(kernel) = s("kernel") {
        let mut line = format!("kernel {}", p.bold(kernel));
        if let Some(a) = s("assertion") {
            let _ = write!(line, ": `{a}` failed");
        }
        if let Some(src) = s("source") {
            let _ = write!(line, " ({src})");
        }
        let _ = writeln!(out, "{gutter} {line}");
    } else if let Some(a) = s("assertion") {
        let _ = writeln!(out, "{gutter} assertion `{a}` failed");
    }
    let n = |k: &str| e.get(k).and_then(Value::as_u64);
    let mut spread = Vec::new();
    if let Some(t) = n("threads") {
        spread.push(format!("{t} thread{}", if t == 1 { "" } else { "s" }));
    }
    if let Some(b) = n("blocks") {
        spread.push(format!("{b} block{}", if b == 1 { "" } else { "s" }));
    }
    if let Some(ranks) = e
        .get("ranks")
        .and_then(Value::as_array)
        .filter(|r| !r.is_empty())
    {
        let mut r: Vec<i64> = ranks.iter().filter_map(Value::as_i64).collect();
        r.sort_unstable();
        r.dedup();
        spread.push(rank_list(&r, RanksBeyond::of_evidence(e)));
    }
    if !spread.is_empty() {
        let _ = writeln!(out, "{gutter} failed in {}", spread.join(", "));
    }
    if let Some(op) = s("op") {
        let mut line = format!("op {}", p.bold(op));
        if let Some(arg) = s("argument") {
            let _ = write!(line, ", argument `{arg}`");
        }
        if let Some(shape) = e.get("shape").filter(|v| !v.is_null()) {
            let _ = write!(line, ", shape {shape}");
        }
        for k in ["dtype", "device"] {
            if let Some(v) = s(k) {
                let _ = write!(line, ", {v}");
            }
        }
        let _ = writeln!(out, "{gutter} {line}");
    }
    if let Some(msg) = s("message") {
        let _ = writeln!(out, "{gutter} error: {msg}");
    }
    if let Some(guess) = s("op_guess") {
        // What the causes below are ranked as, and what said so.
        let _ = writeln!(out, "{gutter} op guessed: {guess}");
    }
    if let Some(note) = s("note") {
        let _ = writeln!(out, "{gutter} {note}");
    }
}

fn fallout(out: &mut String, p: &Paint, items: &[Fallout]) {
    let total: u64 = items.iter().map(|f| f.count).sum();
    let _ = writeln!(
        out,
        "\n{} {}",
        p.bold("fallout:"),
        p.dim(&format!(
            "{total} later error{} caused by the failure above; not root causes, ignore them",
            if total == 1 { "" } else { "s" }
        ))
    );
    for f in items.iter().take(8) {
        let times = if f.count > 1 {
            format!("{}× ", f.count)
        } else {
            String::new()
        };
        let ranks = if f.ranks.is_empty() {
            String::new()
        } else {
            let mut r = f.ranks.clone();
            r.sort_unstable();
            r.dedup();
            format!(" ({})", rank_list(&r, RanksBeyond::of_fallout(f)))
        };
        let _ = writeln!(out, "  - {times}{}{ranks}", truncate(&f.message, 140));
    }
    if items.len() > 8 {
        let _ = writeln!(out, "  - … {} more kinds", items.len() - 8);
    }
}

fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(n).collect();
        t.push('…');
        t
    }
}

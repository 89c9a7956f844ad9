//! One diagnosis of a run: the guards' findings merged with what the log
//! shows, and the paths in it made relative to the working directory.

use devassert_core::{Catalog, Command, Finding, Report};
use serde_json::{json, Value};
use std::path::Path;

/// Guard findings first (they carry the real line and values); the log's
/// findings are kept for rules the guard did not see (custom kernels,
/// compiled regions, ops the guard does not cover); the log's fallout is kept.
pub fn merge(guard: Vec<Finding>, log: Report, catalog: &Catalog) -> Report {
    let mut report = Report::new(Command::Run);
    for mut f in guard {
        // The guard's fixes already fit the program (its libraries, labels
        // or ids); the catalog's generic ones would contradict them.
        if let Some(rule) = catalog.get(&f.rule) {
            let base = catalog.finding(rule);
            f.name = base.name;
            f.summary = base.summary;
        }
        report.findings.push(f);
    }
    // A finding the program caught did not end it: the log's failure stands.
    let seen: Vec<String> = report
        .findings
        .iter()
        .filter(|f| !f.caught)
        .map(|f| f.rule.clone())
        .collect();
    let from_guard = !report.findings.is_empty();
    for mut f in log.findings {
        if seen.contains(&f.rule) {
            continue;
        }
        // Once the guard stopped an op, host-side errors are its own traceback.
        if from_guard && !f.evidence.contains_key("kernel") && !f.evidence.contains_key("assertion")
        {
            continue;
        }
        f.evidence.insert("source".into(), json!("log"));
        report.findings.push(f);
    }
    report.fallout = log.fallout;
    report
}

/// Paths under `cwd` are shown relative to it.
pub fn relativize(report: &mut Report, cwd: &Path) {
    let rel = |file: &mut String| {
        if let Ok(p) = Path::new(file.as_str()).strip_prefix(cwd) {
            *file = p.display().to_string();
        }
    };
    for f in &mut report.findings {
        if let Some(l) = f.location.as_mut() {
            rel(&mut l.file);
        }
        if let Some(Value::Object(inner)) = f.evidence.get_mut("inner_frame") {
            if let Some(Value::String(file)) = inner.get_mut("file") {
                rel(file);
            }
        }
    }
}

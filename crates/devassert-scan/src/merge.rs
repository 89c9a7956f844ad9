//! `devassert scan --merge`: shard reports into one. Counts are summed,
//! values and their counts merged, the first locations kept (in shard
//! order), causes re-ranked on the merged values.

use crate::findings::{explain_range, listed, Check};
use crate::options::{Bounds, Target};
use devassert_core::{
    Command, Finding, Report, RuleId, Scalar, ScanSection, Severity, UnknownRule,
};
use serde_json::{json, Value};
use std::collections::HashMap;

fn key(f: &Finding) -> (String, String, Severity) {
    let check = f
        .evidence
        .get("check")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    (f.rule.clone(), check, f.severity)
}

fn int(v: Option<&Value>) -> Option<i64> {
    v.and_then(Value::as_i64)
}

fn counts(f: &Finding) -> HashMap<i64, u64> {
    let mut m = HashMap::new();
    for (i, v) in f.values.iter().enumerate() {
        if let Scalar::Int(v) = v {
            *m.entry(*v).or_insert(0) += f.value_counts.get(i).copied().unwrap_or(1);
        }
    }
    m
}

fn merge_into(acc: &mut Finding, f: &Finding, limit: usize) {
    acc.count = match (acc.count, f.count) {
        (Some(a), Some(b)) => Some(a + b),
        (a, b) => a.or(b),
    };
    for l in &f.locations {
        if acc.locations.len() < limit {
            acc.locations.push(l.clone());
        }
    }
    let files =
        int(acc.evidence.get("files")).unwrap_or(0) + int(f.evidence.get("files")).unwrap_or(0);
    acc.evidence.insert("files".into(), json!(files));
    for (k, pick) in [("min", i64::min as fn(i64, i64) -> i64), ("max", i64::max)] {
        if let Some(v) = match (int(acc.evidence.get(k)), int(f.evidence.get(k))) {
            (Some(a), Some(b)) => Some(pick(a, b)),
            (a, b) => a.or(b),
        } {
            acc.evidence.insert(k.into(), json!(v));
        }
    }
    if acc.evidence.get("check").and_then(Value::as_str) == Some("range") {
        let mut m = counts(acc);
        for (v, c) in counts(f) {
            *m.entry(v).or_insert(0) += c;
        }
        (acc.values, acc.value_counts) = listed(&m);
    } else {
        for v in &f.values {
            if !acc.values.contains(v) {
                acc.values.push(*v);
            }
        }
    }
}

/// A shard report that no scan of this version could have written.
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    #[error(transparent)]
    UnknownRule(#[from] UnknownRule),
    #[error("a range finding of rule {0}, which no range check reports")]
    NotARangeRule(RuleId),
}

/// Merge shard reports, keeping at most `limit` locations per finding.
pub fn merge_reports(reports: &[Report], limit: usize) -> Result<Report, MergeError> {
    let mut out = Report::new(Command::Scan);
    let mut merged: Vec<Finding> = Vec::new();
    let mut section: Option<ScanSection> = None;
    let mut any_unreadable = false;
    for r in reports {
        any_unreadable |= r.exit_code == 2;
        if let Some(s) = &r.scan {
            match section.as_mut() {
                Some(acc) => {
                    acc.files.extend(s.files.iter().cloned());
                    acc.errors.extend(s.errors.iter().cloned());
                    acc.scan.files += s.scan.files;
                    acc.scan.bytes += s.scan.bytes;
                    acc.scan.seconds += s.scan.seconds;
                }
                None => section = Some(s.clone()),
            }
        }
        for f in &r.findings {
            match merged.iter_mut().find(|m| key(m) == key(f)) {
                Some(acc) => merge_into(acc, f, limit),
                None => {
                    let mut f = f.clone();
                    f.locations.truncate(limit);
                    merged.push(f);
                }
            }
        }
    }
    for f in &mut merged {
        if f.evidence.get("check").and_then(Value::as_str) != Some("range") {
            continue;
        }
        let Some(b) = f.bound else { continue };
        let (Some(Scalar::Int(low)), Some(Scalar::Int(high))) = (b.low, b.high) else {
            continue;
        };
        let target = if f.evidence.get("target").and_then(Value::as_str) == Some("labels") {
            Target::Labels
        } else {
            Target::Tokens
        };
        let rule = RuleId::parse(&f.rule)?;
        let check = Check::of_rule(rule).ok_or(MergeError::NotARangeRule(rule))?;
        let values = counts(f);
        // Re-ranked from the merged values; the rule's own fixes come back from the catalog.
        f.fixes = crate::findings::base(rule).fixes;
        // The whole column's range, over every shard's files.
        let column = section.as_ref().and_then(|s| {
            let lo = s.files.iter().filter_map(|x| x.min).min()?;
            let hi = s.files.iter().filter_map(|x| x.max).max()?;
            Some((lo, hi))
        });
        explain_range(f, &values, Bounds::new(low, high), target, check, column);
    }
    out.findings = merged;
    let errors = section.as_ref().is_some_and(|s| !s.errors.is_empty());
    out.exit_code = devassert_core::exit_code(&out.findings, any_unreadable || errors);
    if let Some(s) = section.as_mut() {
        s.scan.shard = None;
        s.scan.merged = Some(reports.len() as u64);
    }
    out.scan = section;
    Ok(out)
}

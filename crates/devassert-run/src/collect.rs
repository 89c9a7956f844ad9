//! Reading the findings the guards of every process wrote
//! (`reports/guard-<pid>.jsonl`) and merging repeats (the same failure on
//! several ranks or workers becomes one finding with all their ranks).

use crate::caught::ExitRecords;
use devassert_core::{Finding, RuleId};
use serde_json::Value;
use std::path::Path;

/// What the guards of one run wrote: their findings, and a warning for each
/// line or file that could not be read (a guard newer than this binary, a
/// crash mid-write) so that nothing the guard saw vanishes without a word.
#[derive(Debug, Default)]
pub struct Collected {
    pub findings: Vec<Finding>,
    pub warnings: Vec<String>,
}

/// The guard findings of one run, first written first within each process.
/// Each is marked `caught` when the program handled it (see
/// [`crate::caught`]); `program_exited_ok`: the command exited 0.
pub fn collect_findings(reports: &Path, program_exited_ok: bool) -> Collected {
    let mut out = Collected::default();
    let Ok(entries) = std::fs::read_dir(reports) else {
        return out;
    };
    let exits = ExitRecords::read(reports);
    let mut files: Vec<_> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("guard-") && n.ends_with(".jsonl"))
        })
        .collect();
    // Earliest-written file first: the process that failed first leads.
    files.sort_by_key(|p| std::fs::metadata(p).and_then(|m| m.modified()).ok());
    for path in files {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) => {
                out.warnings
                    .push(format!("cannot read the guard report {name}: {e}"));
                continue;
            }
        };
        for (n, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            match read_line(line) {
                Ok(mut f) => {
                    // What the program did with the raise decides, not what a guard wrote.
                    f.caught = exits.caught(&f, program_exited_ok);
                    merge(&mut out.findings, f);
                }
                Err(why) => out
                    .warnings
                    .push(format!("guard report {name} line {}: {why}", n + 1)),
            }
        }
    }
    out
}

/// One finding of a guard's report, with a rule this binary knows.
fn read_line(line: &str) -> Result<Finding, String> {
    let f: Finding = serde_json::from_str(line).map_err(|e| format!("not a finding ({e})"))?;
    RuleId::parse(&f.rule).map_err(|e| e.to_string())?;
    Ok(f)
}

fn key(f: &Finding) -> (String, Option<(String, u64)>, Option<Value>) {
    (
        f.rule.clone(),
        f.location.as_ref().map(|l| (l.file.clone(), l.line)),
        f.evidence.get("argument").cloned(),
    )
}

fn merge(out: &mut Vec<Finding>, f: Finding) {
    let k = key(&f);
    if let Some(prev) = out.iter_mut().find(|p| key(p) == k) {
        let mut ranks: Vec<Value> = prev
            .evidence
            .get("ranks")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        for r in f
            .evidence
            .get("ranks")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if !ranks.contains(r) {
                ranks.push(r.clone());
            }
        }
        if !ranks.is_empty() {
            prev.evidence.insert("ranks".into(), Value::Array(ranks));
        }
        let n = prev
            .evidence
            .get("occurrences")
            .and_then(Value::as_u64)
            .unwrap_or(1);
        prev.evidence
            .insert("occurrences".into(), Value::from(n + 1));
        // One uncaught repeat makes the merged failure uncaught.
        prev.caught &= f.caught;
        return;
    }
    out.push(f);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(rank: i64, line: u64) -> String {
        format!(
            r#"{{"rule":"DA101","name":"embedding-index-out-of-range","op_family":"index_select","summary":"s","evidence":{{"argument":"input","ranks":[{rank}]}},"location":{{"file":"t.py","line":{line},"function":"f"}},"noticed_at":null,"values":[7],"bound":{{"low":0,"high":5}},"causes":[],"fixes":[]}}"#
        )
    }

    #[test]
    fn merges_ranks_of_the_same_failure_and_warns_of_junk() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("guard-1.jsonl"),
            format!("{}\nnot json\n", line(0, 3)),
        )
        .unwrap();
        std::fs::write(
            dir.path().join("guard-2.jsonl"),
            format!("{}\n{}\n", line(1, 3), line(1, 9)),
        )
        .unwrap();
        std::fs::write(dir.path().join("other.txt"), line(5, 3)).unwrap();
        let collected = collect_findings(dir.path(), false);
        assert_eq!(
            collected.warnings.len(),
            1,
            "the line that is not JSON: {:?}",
            collected.warnings
        );
        assert!(
            collected.warnings[0].starts_with("guard report guard-1.jsonl line 2: not a finding")
        );
        let found = collected.findings;
        assert_eq!(found.len(), 2);
        let ranks = found[0].evidence["ranks"].as_array().unwrap();
        assert_eq!(ranks.len(), 2);
        assert_eq!(found[1].location.as_ref().unwrap().line, 9);
    }

    #[test]
    fn a_new_op_family_or_an_unknown_rule_is_a_warning_not_silence() {
        let dir = tempfile::tempdir().unwrap();
        let new_family = line(0, 3).replace("index_select", "some_future_family");
        let unknown_rule = line(0, 4).replace("DA101", "DA999");
        std::fs::write(
            dir.path().join("guard-1.jsonl"),
            format!("{new_family}\n{unknown_rule}\n{}\n", line(0, 5)),
        )
        .unwrap();
        let collected = collect_findings(dir.path(), false);
        assert_eq!(collected.findings.len(), 1);
        assert_eq!(collected.warnings.len(), 2, "{:?}", collected.warnings);
        assert!(
            collected.warnings[0].contains("line 1")
                && collected.warnings[0].contains("some_future_family")
        );
        assert!(
            collected.warnings[1].contains("line 2") && collected.warnings[1].contains("DA999")
        );
    }

    #[test]
    fn a_missing_directory_has_no_findings() {
        let c = collect_findings(Path::new("/nonexistent/devassert"), false);
        assert!(c.findings.is_empty() && c.warnings.is_empty());
    }

    #[test]
    fn a_repeat_that_was_not_caught_makes_the_merged_finding_uncaught() {
        let dir = tempfile::tempdir().unwrap();
        let with_id = |id: &str| {
            line(0, 3).replace(
                r#""ranks":[0]"#,
                &format!(r#""ranks":[0],"raise_id":"{id}""#),
            )
        };
        std::fs::write(
            dir.path().join("guard-7.jsonl"),
            format!("{}\n{}\n", with_id("7-1"), with_id("7-2")),
        )
        .unwrap();
        std::fs::write(
            dir.path().join("exit-7.json"),
            r#"{"pid": 7, "uncaught": []}"#,
        )
        .unwrap();
        let found = collect_findings(dir.path(), false).findings;
        assert_eq!(found.len(), 1);
        assert!(found[0].caught, "both raises were caught");
        std::fs::write(
            dir.path().join("exit-7.json"),
            r#"{"pid": 7, "uncaught": ["7-2"]}"#,
        )
        .unwrap();
        let found = collect_findings(dir.path(), false).findings;
        assert!(!found[0].caught, "the second one ended the program");
        // A guard cannot claim a finding was caught: the collector decides.
        let caught_line = line(0, 3).replacen('{', r#"{"caught":true,"#, 1);
        std::fs::write(dir.path().join("guard-7.jsonl"), caught_line).unwrap();
        assert!(!collect_findings(dir.path(), false).findings[0].caught);
    }
}

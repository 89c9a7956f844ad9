//! Reading the findings the guards of every process wrote
//! (`reports/guard-<pid>.jsonl`) and merging repeats (the same failure on
//! several ranks or workers becomes one finding with all their ranks).

use crate::caught::ExitRecords;
use devassert_core::Finding;
use serde_json::Value;
use std::path::Path;

/// The guard findings of one run, first written first within each process;
/// lines that are not findings are skipped. Each is marked `caught` when the
/// program handled it (see [`crate::caught`]); `program_exited_ok`: the
/// command exited 0.
pub fn collect_findings(reports: &Path, program_exited_ok: bool) -> Vec<Finding> {
    let Ok(entries) = std::fs::read_dir(reports) else {
        return Vec::new();
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
    let mut out: Vec<Finding> = Vec::new();
    for path in files {
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let Ok(mut f) = serde_json::from_str::<Finding>(line) else {
                continue;
            };
            // What the program did with the raise decides, not what a guard wrote.
            f.caught = exits.caught(&f, program_exited_ok);
            merge(&mut out, f);
        }
    }
    out
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
    fn merges_ranks_of_the_same_failure_and_skips_junk() {
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
        let found = collect_findings(dir.path(), false);
        assert_eq!(found.len(), 2);
        let ranks = found[0].evidence["ranks"].as_array().unwrap();
        assert_eq!(ranks.len(), 2);
        assert_eq!(found[1].location.as_ref().unwrap().line, 9);
    }

    #[test]
    fn a_missing_directory_has_no_findings() {
        assert!(collect_findings(Path::new("/nonexistent/devassert"), false).is_empty());
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
        let found = collect_findings(dir.path(), false);
        assert_eq!(found.len(), 1);
        assert!(found[0].caught, "both raises were caught");
        std::fs::write(
            dir.path().join("exit-7.json"),
            r#"{"pid": 7, "uncaught": ["7-2"]}"#,
        )
        .unwrap();
        let found = collect_findings(dir.path(), false);
        assert!(!found[0].caught, "the second one ended the program");
        // A guard cannot claim a finding was caught: the collector decides.
        let caught_line = line(0, 3).replacen('{', r#"{"caught":true,"#, 1);
        std::fs::write(dir.path().join("guard-7.jsonl"), caught_line).unwrap();
        assert!(!collect_findings(dir.path(), false)[0].caught);
    }
}

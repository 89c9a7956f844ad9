//! Reading the findings the guards of every process wrote
//! (`reports/guard-<pid>.jsonl`) and merging repeats: the same failure on
//! several ranks or workers becomes one finding with all their ranks, led by
//! the raise that ended the run; within one process, distinct raises stay
//! distinct findings (a program that caught two has two).

use crate::caught::{process, ExitRecords};
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
                    merge(&mut out.findings, f, &exits);
                }
                Err(why) => out
                    .warnings
                    .push(format!("guard report {name} line {}: {why}", n + 1)),
            }
        }
    }
    ended_first(&mut out.findings, &exits);
    out
}

/// Among the findings that were not caught, the one that ended the run
/// comes first, whichever process wrote first (a DataLoader worker whose
/// raise the parent never re-raised, say); caught ones keep their place.
fn ended_first(findings: &mut [Finding], exits: &ExitRecords) {
    let slots: Vec<usize> = (0..findings.len())
        .filter(|&i| !findings[i].caught)
        .collect();
    let mut uncaught: Vec<Finding> = slots.iter().map(|&i| findings[i].clone()).collect();
    uncaught.sort_by_key(|f| !exits.ended(f));
    for (slot, f) in slots.into_iter().zip(uncaught) {
        findings[slot] = f;
    }
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

/// Distinct raises of one process with the same rule, line and argument
/// listed at most (a loop that catches every batch's failure); the rest are
/// counted in the last one's `occurrences`.
const LISTED_PER_PROCESS: usize = 8;

/// The same failure seen again: the same values at the same places of the
/// same samples.
fn same_failure(a: &Finding, b: &Finding) -> bool {
    a.values == b.values && a.locations == b.locations && a.samples == b.samples
}

fn merge(out: &mut Vec<Finding>, f: Finding, exits: &ExitRecords) {
    let k = key(&f);
    let pid = process(&f);
    let same_key: Vec<usize> = (0..out.len()).filter(|&i| key(&out[i]) == k).collect();
    let mine: Vec<usize> = same_key
        .iter()
        .copied()
        .filter(|&i| pid.is_some() && process(&out[i]) == pid)
        .collect();
    let into = same_key
        .iter()
        .copied()
        .find(|&i| process(&out[i]) != pid || pid.is_none())
        .or_else(|| mine.iter().copied().find(|&i| same_failure(&out[i], &f)))
        .or_else(|| {
            mine.last()
                .copied()
                .filter(|_| mine.len() >= LISTED_PER_PROCESS)
        });
    match into {
        Some(i) => combine(&mut out[i], f, exits),
        None => out.push(f),
    }
}

/// Fold `f` into `prev`: ranks joined, occurrences counted, uncaught if
/// either was; `f`'s facts lead when its raise ended the run and `prev`'s
/// did not.
fn combine(prev: &mut Finding, f: Finding, exits: &ExitRecords) {
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
    let n = prev
        .evidence
        .get("occurrences")
        .and_then(Value::as_u64)
        .unwrap_or(1);
    // One uncaught repeat makes the merged failure uncaught.
    let caught = prev.caught && f.caught;
    if exits.ended(&f) && !exits.ended(prev) {
        *prev = f;
    }
    if !ranks.is_empty() {
        prev.evidence.insert("ranks".into(), Value::Array(ranks));
    }
    prev.evidence
        .insert("occurrences".into(), Value::from(n + 1));
    prev.caught = caught;
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

    /// Raise `n` of process `pid` at `line` with the bad `value`.
    fn raised(pid: u64, n: u32, line: u64, value: i64, sample: Option<u64>) -> String {
        let samples = sample.map_or(String::new(), |s| {
            format!(r#","samples":[{{"dataset_index":{s},"row":0}}],"samples_certain":true"#)
        });
        format!(
            r#"{{"rule":"DA101","name":"embedding-index-out-of-range","op_family":"index_select","summary":"s","evidence":{{"argument":"input","pid":{pid},"raise_id":"{pid}-{n}"}},"location":{{"file":"t.py","line":{line},"function":"f"}},"noticed_at":null,"values":[{value}],"bound":{{"low":0,"high":5}},"causes":[],"fixes":[]{samples}}}"#
        )
    }

    /// Write a guard report with a given age (file times are too coarse to
    /// order files written in a row).
    fn report(dir: &Path, pid: u64, lines: &[String], seconds_ago: u64) {
        let path = dir.join(format!("guard-{pid}.jsonl"));
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
        let when = std::time::SystemTime::now() - std::time::Duration::from_secs(seconds_ago);
        std::fs::File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_modified(when)
            .unwrap();
    }

    #[test]
    fn the_raise_that_ended_the_run_leads_its_failure_and_the_report() {
        // Workers 20 and 21 fail at line 3 on samples 9 and 6; worker 20 and
        // a process failing at line 4 wrote first, but the DataLoader parent
        // (pid 5) re-raised worker 21's raise, and that ended the run.
        let dir = tempfile::tempdir().unwrap();
        report(dir.path(), 30, &[raised(30, 1, 4, 9, None)], 30);
        report(dir.path(), 20, &[raised(20, 1, 3, 7, Some(9))], 20);
        report(dir.path(), 21, &[raised(21, 1, 3, 8, Some(6))], 10);
        std::fs::write(
            dir.path().join("exit-5.json"),
            r#"{"pid": 5, "uncaught": ["21-1"]}"#,
        )
        .unwrap();
        let found = collect_findings(dir.path(), false).findings;
        assert_eq!(found.len(), 2, "{found:#?}");
        assert_eq!(found[0].evidence["raise_id"], "21-1");
        assert_eq!(found[0].samples[0].dataset_index, 6);
        assert_eq!(found[0].evidence["occurrences"], 2);
        assert!(!found[0].caught);
        assert_eq!(found[1].location.as_ref().unwrap().line, 4);
        // Without the parent's record nothing says which ended it: first written first.
        std::fs::remove_file(dir.path().join("exit-5.json")).unwrap();
        let found = collect_findings(dir.path(), false).findings;
        assert_eq!(found[0].location.as_ref().unwrap().line, 4);
        assert_eq!(found[1].evidence["raise_id"], "20-1");
    }

    #[test]
    fn every_distinct_raise_a_process_caught_is_listed() {
        let dir = tempfile::tempdir().unwrap();
        // Raises 1 and 2 differ; raise 3 repeats raise 2 exactly.
        let mut lines = vec![
            raised(7, 1, 3, 7, Some(1)),
            raised(7, 2, 3, 8, Some(2)),
            raised(7, 3, 3, 8, Some(2)),
        ];
        report(dir.path(), 7, &lines, 0);
        std::fs::write(
            dir.path().join("exit-7.json"),
            r#"{"pid": 7, "uncaught": []}"#,
        )
        .unwrap();
        let found = collect_findings(dir.path(), false).findings;
        assert_eq!(found.len(), 2, "{found:#?}");
        assert!(found.iter().all(|f| f.caught));
        assert_eq!(found[1].evidence["occurrences"], 2);
        // A loop that catches every batch's failure: the first few are listed.
        lines.extend((4..=12).map(|n| raised(7, n, 3, 7, Some(u64::from(n)))));
        report(dir.path(), 7, &lines, 0);
        let found = collect_findings(dir.path(), false).findings;
        assert_eq!(found.len(), LISTED_PER_PROCESS);
        let counted: u64 = found
            .iter()
            .map(|f| {
                f.evidence
                    .get("occurrences")
                    .and_then(Value::as_u64)
                    .unwrap_or(1)
            })
            .sum();
        assert_eq!(counted, 12);
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

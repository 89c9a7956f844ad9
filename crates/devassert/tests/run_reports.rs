//! `devassert run` reading what the guards wrote, with hand-written guard
//! reports (the child writes them as a guard would): caught findings, exit
//! records, DataLoader samples and workers.

mod common;

use serde_json::{json, Value};

/// A guard finding as the guard writes it, for the child's pid `PID`.
fn finding(n: u32, line: u64, extra: Value) -> Value {
    let mut f = json!({
        "rule": "DA114", "name": "index-copy-out-of-range", "op_family": "index",
        "summary": "s", "severity": "error",
        "evidence": {"op": "index_copy", "argument": "index", "source": "guard",
                     "raise_id": format!("PID-{n}")},
        "location": {"file": "train.py", "line": line, "function": "step"},
        "noticed_at": null, "values": [9], "bound": {"low": 0, "high": 4},
        "causes": [], "fixes": []
    });
    if let (Some(f), Some(extra)) = (f.as_object_mut(), extra.as_object()) {
        for (k, v) in extra {
            if k == "evidence" {
                for (ek, ev) in v.as_object().unwrap() {
                    f["evidence"]
                        .as_object_mut()
                        .unwrap()
                        .insert(ek.clone(), ev.clone());
                }
            } else {
                f.insert(k.clone(), v.clone());
            }
        }
    }
    f
}

/// Run a child that writes `findings` to its guard report, an exit record
/// listing `uncaught` raise numbers when `uncaught` is given, and exits with
/// `code`. Returns (exit code, stderr, JSON report).
fn run(findings: &[Value], uncaught: Option<&[u32]>, code: i32) -> (i32, String, Value) {
    let dir = tempfile::tempdir().unwrap();
    let lines: Vec<String> = findings.iter().map(Value::to_string).collect();
    std::fs::write(dir.path().join("findings.jsonl"), lines.join("\n")).unwrap();
    let record = match uncaught {
        Some(ns) => {
            let ids: Vec<String> = ns.iter().map(|n| format!("\"PID-{n}\"")).collect();
            format!("{{\"pid\": PID, \"uncaught\": [{}]}}", ids.join(", "))
        }
        None => String::new(),
    };
    let script = format!(
        r#"
import os, sys
pid = str(os.getpid())
rep = os.environ["DEVASSERT_REPORT_DIR"]
text = open(sys.argv[1]).read().replace("PID", pid)
open(os.path.join(rep, "guard-" + pid + ".jsonl"), "w").write(text + "\n")
record = {record:?}
if record:
    open(os.path.join(rep, "exit-" + pid + ".json"), "w").write(record.replace("PID", pid))
sys.exit({code})
"#
    );
    let report = dir.path().join("run.json");
    let out = common::bin()
        .current_dir(dir.path())
        .args(["--color", "never", "run", "--report"])
        .arg(&report)
        .arg("--")
        .arg(common::python())
        .args(["-c", &script])
        .arg(dir.path().join("findings.jsonl"))
        .output()
        .unwrap();
    let text = std::fs::read_to_string(&report).unwrap();
    common::assert_contract(&[&text]);
    let json = serde_json::from_str(&text).unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        json,
    )
}

#[test]
fn a_program_that_caught_the_error_and_exited_0_did_not_fail() {
    let (code, stderr, json) = run(&[finding(1, 5, json!({}))], None, 0);
    assert_eq!(code, 0);
    let head = stderr
        .lines()
        .find(|l| l.contains("[DA114]"))
        .unwrap_or_default();
    assert!(
        head.starts_with("note[DA114] index-copy-out-of-range:")
            && head.ends_with("(caught by the program)"),
        "{stderr}"
    );
    assert!(!stderr.contains("error["), "{stderr}");
    assert!(stderr.contains("the command exited 0"), "{stderr}");
    assert_eq!(json["exit_code"], 0);
    assert_eq!(json["findings"][0]["caught"], true);
}

#[test]
fn exit_records_tell_caught_from_uncaught() {
    // Raise 1 (line 5) was caught; raise 2 (line 9) ended the program.
    let findings = [finding(1, 5, json!({})), finding(2, 9, json!({}))];
    let (code, stderr, json) = run(&findings, Some(&[2]), 1);
    assert_eq!(code, 1);
    let f = json["findings"].as_array().unwrap();
    assert_eq!(f.len(), 2, "{json:#}");
    assert_eq!(f[0]["caught"], true);
    assert!(f[1].get("caught").is_none(), "{json:#}");
    assert!(
        stderr.contains("note[DA114]") && stderr.contains("error[DA114]"),
        "{stderr}"
    );
    // Without an exit record the process died: nothing is known caught.
    let (_, _, json) = run(&findings, None, 1);
    assert!(json["findings"][0].get("caught").is_none(), "{json:#}");
}

#[test]
fn dataset_samples_and_the_worker_are_named() {
    let f = finding(
        1,
        5,
        json!({"evidence": {"worker": 1}, "samples": [{"dataset_index": 1042, "row": 2}],
               "samples_certain": true}),
    );
    let (code, stderr, json) = run(&[f], None, 1);
    assert_eq!(code, 1);
    let start = stderr.find("error[DA114]").expect("a diagnosis");
    let end = stderr.find("devassert: full output in").unwrap();
    insta::assert_snapshot!("run_dataset_sample", &stderr[start..end]);
    assert_eq!(
        json["findings"][0]["samples"],
        json!([{"dataset_index": 1042, "row": 2}])
    );
    assert_eq!(json["findings"][0]["samples_certain"], true);
    assert_eq!(json["findings"][0]["evidence"]["worker"], 1);

    let f = finding(
        1,
        5,
        json!({"samples": [{"dataset_index": 3, "row": 0}, {"dataset_index": 8, "row": 1}],
               "samples_certain": false}),
    );
    let (_, stderr, _) = run(&[f], None, 1);
    assert!(
        stderr.contains("dataset samples 3 (row 0), 8 (row 1) of the batch (not certain"),
        "{stderr}"
    );
    // The guard's reason, when it gives one.
    let f = finding(
        1,
        5,
        json!({"evidence": {"samples_note": "2 batches the DataLoader returned may hold this tensor"},
               "samples": [{"dataset_index": 3, "row": 0}], "samples_certain": false}),
    );
    let (_, stderr, _) = run(&[f], None, 1);
    assert!(
        stderr.contains(
            "dataset sample 3 (row 0 of the batch) (not certain: 2 batches the DataLoader returned may hold this tensor)"
        ),
        "{stderr}"
    );
}

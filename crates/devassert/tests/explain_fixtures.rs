//! Every labelled crash log (the public corpus and our own formats) through
//! the built binary: op family right, the established cause in the top 3,
//! the rule, and whether the place is reported as reliable.

mod common;

use serde_json::Value;
use std::path::Path;

fn explain_json(files: &[&Path]) -> Value {
    let out = explain_bytes(files);
    serde_json::from_slice(&out).unwrap_or_else(|e| panic!("json for {files:?}: {e}"))
}

/// The JSON document explain printed for `files`.
fn explain_bytes(files: &[&Path]) -> Vec<u8> {
    let out = common::bin()
        .arg("explain")
        .arg("--format")
        .arg("json")
        .args(files)
        .output()
        .expect("run devassert");
    assert!(
        out.status.code().is_some_and(|c| c == 0 || c == 1),
        "exit {:?}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn labels(dir: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(dir.join("labels.jsonl")).expect("labels.jsonl");
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("label line"))
        .collect()
}

/// Checks one label against the report; returns what is wrong.
fn check(label: &Value, report: &Value) -> Vec<String> {
    let id = label["id"].as_str().unwrap_or("?");
    let mut bad = Vec::new();
    let Some(f) = report["findings"].get(0) else {
        return vec![format!("{id}: no finding")];
    };
    let family = label["op_family"].as_str().unwrap_or("unknown");
    if family != "unknown" && f["op_family"] != family {
        bad.push(format!("{id}: op_family {} != {family}", f["op_family"]));
    }
    if let Some(rule) = label.get("rule").and_then(Value::as_str) {
        if f["rule"] != rule {
            bad.push(format!("{id}: rule {} != {rule}", f["rule"]));
        }
    }
    let cause = label["cause"].as_str().unwrap_or("unknown");
    if cause != "unknown" {
        let top: Vec<&str> = f["causes"]
            .as_array()
            .map(|c| c.iter().take(3).filter_map(|c| c["id"].as_str()).collect())
            .unwrap_or_default();
        if !top.contains(&cause) {
            bad.push(format!("{id}: cause {cause} not in top 3 {top:?}"));
        }
    }
    if let Some(reliable) = label.get("reliable_location").and_then(Value::as_bool) {
        if f["location"].is_null() == reliable {
            bad.push(format!(
                "{id}: location {} but reliable_location {reliable}",
                f["location"]
            ));
        }
        if !reliable && !f["location"].is_null() {
            bad.push(format!("{id}: an unreliable place reported as location"));
        }
    }
    if let Some(ranks) = label.get("ranks") {
        if &f["evidence"]["ranks"] != ranks {
            bad.push(format!("{id}: ranks {} != {ranks}", f["evidence"]["ranks"]));
        }
    }
    if let Some(kinds) = label.get("fallout").and_then(Value::as_array) {
        let got: Vec<&str> = report["fallout"]
            .as_array()
            .map(|a| a.iter().filter_map(|x| x["kind"].as_str()).collect())
            .unwrap_or_default();
        for k in kinds.iter().filter_map(Value::as_str) {
            if !got.contains(&k) {
                bad.push(format!("{id}: fallout {k} missing from {got:?}"));
            }
        }
    }
    if let Some(b) = label.get("bound").and_then(Value::as_array) {
        if f["bound"]["low"] != b[0] || f["bound"]["high"] != b[1] {
            bad.push(format!("{id}: bound {} != {b:?}", f["bound"]));
        }
    }
    if report["exit_code"] != 1 {
        bad.push(format!("{id}: exit_code {}", report["exit_code"]));
    }
    bad
}

#[test]
fn corpus_logs_are_diagnosed() {
    let dir = common::fixtures().join("logs/corpus");
    let mut bad = Vec::new();
    let all = labels(&dir);
    assert!(all.len() >= 24, "the corpus has {} labels", all.len());
    let mut docs = Vec::new();
    for label in &all {
        let file = dir.join(format!("{}.log", label["id"].as_str().expect("id")));
        docs.push(explain_bytes(&[&file]));
        let report = serde_json::from_slice(docs.last().expect("doc")).expect("json");
        bad.extend(check(label, &report));
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    common::assert_contract(&docs);
}

#[test]
fn own_logs_are_diagnosed() {
    let dir = common::fixtures().join("logs/own");
    let mut bad = Vec::new();
    let all = labels(&dir);
    assert!(all.len() >= 15);
    let mut docs = Vec::new();
    for label in &all {
        let files: Vec<_> = label["files"]
            .as_array()
            .expect("files")
            .iter()
            .map(|f| dir.join(f.as_str().expect("file name")))
            .collect();
        let refs: Vec<&Path> = files.iter().map(|p| p.as_path()).collect();
        docs.push(explain_bytes(&refs));
        let report = serde_json::from_slice(docs.last().expect("doc")).expect("json");
        bad.extend(check(label, &report));
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    common::assert_contract(&docs);
}

#[test]
fn split_pair_needs_both_halves() {
    let dir = common::fixtures().join("logs/own");
    let out_only = explain_json(&[&dir.join("split-job.out")]);
    assert!(
        out_only["findings"][0]["noticed_at"].is_null(),
        "the .out half has no traceback"
    );
    let both = explain_json(&[&dir.join("split-job.out"), &dir.join("split-job.err")]);
    assert_eq!(both["findings"][0]["noticed_at"]["line"], 120);
    assert_eq!(both["findings"][0]["evidence"]["count"], 6);
    let names: Vec<&str> = both["inputs"]
        .as_array()
        .expect("inputs")
        .iter()
        .filter_map(|i| i["name"].as_str())
        .collect();
    assert_eq!(names.len(), 2);
}

#[test]
fn a_folder_of_rank_logs_is_one_crash() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let own = common::fixtures().join("logs/own");
    std::fs::copy(own.join("split-job.out"), tmp.path().join("rank0.out")).expect("copy");
    std::fs::copy(own.join("split-job.err"), tmp.path().join("rank0.err")).expect("copy");
    std::fs::write(tmp.path().join("rank1.log"), "[E1105 03:12:44.903881913 ProcessGroupNCCL.cpp:616] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=808, OpType=ALLREDUCE, Timeout(ms)=600000) ran for 600020 milliseconds before timing out.\n").expect("write");
    let r = explain_json(&[tmp.path()]);
    assert_eq!(r["findings"][0]["rule"], "DA201");
    assert_eq!(
        r["findings"][0]["evidence"]["ranks"],
        serde_json::json!([0])
    );
    let timeout = r["fallout"]
        .as_array()
        .expect("fallout")
        .iter()
        .find(|f| f["kind"] == "nccl_timeout")
        .expect("nccl fallout");
    assert_eq!(timeout["ranks"], serde_json::json!([1]));
}

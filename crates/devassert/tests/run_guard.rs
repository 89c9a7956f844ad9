//! `devassert run` with real PyTorch on CPU: every guarded op with a planted
//! bad value, every guarded op at legal edge values, DataLoader workers and
//! torchrun ranks.

mod common;

use serde_json::Value;
use std::path::{Path, PathBuf};

fn guard_fixture(name: &str) -> PathBuf {
    common::fixtures().join("guard").join(name)
}

/// Line number of the line tagged `# M:<marker>` in a fixture.
fn marker_line(file: &Path, marker: &str) -> u64 {
    let text = std::fs::read_to_string(file).unwrap();
    let tag = format!("# M:{marker}");
    let n = text
        .lines()
        .position(|l| l.trim_end().ends_with(&tag))
        .unwrap_or_else(|| panic!("no {tag} in {}", file.display()));
    n as u64 + 1
}

/// Run `devassert run [extra] -- CMD…` in the fixture folder; (exit code, report, stdout).
fn run(extra: &[&str], cmd: &[&str]) -> (i32, Value, Vec<u8>) {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("report.json");
    let out = common::bin()
        .current_dir(guard_fixture(""))
        .arg("run")
        .arg("--report")
        .arg(&report)
        .args(extra)
        .arg("--")
        .args(cmd)
        .output()
        .unwrap();
    let code = out.status.code().unwrap_or(-1);
    let text = std::fs::read_to_string(&report).unwrap_or_else(|_| {
        panic!(
            "no report; stderr: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    common::assert_contract(&[&text]);
    (code, serde_json::from_str(&text).unwrap(), out.stdout)
}

fn py() -> String {
    common::python().display().to_string()
}

struct Expect {
    marker: &'static str,
    rule: &'static str,
    family: &'static str,
    values: &'static str,
    low: &'static str,
    high: &'static str,
    cause: &'static str,
}

const fn e(
    marker: &'static str,
    rule: &'static str,
    family: &'static str,
    values: &'static str,
    low: &'static str,
    high: &'static str,
    cause: &'static str,
) -> Expect {
    Expect {
        marker,
        rule,
        family,
        values,
        low,
        high,
        cause,
    }
}

const EXPECTED: &[Expect] = &[
    e(
        "embedding",
        "DA101",
        "index_select",
        "[50257,50258]",
        "0",
        "50257",
        "added_tokens_no_resize",
    ),
    e(
        "embedding_negative",
        "DA101",
        "index_select",
        "[-1]",
        "0",
        "10",
        "negative_index",
    ),
    e(
        "positions",
        "DA101",
        "index_select",
        "[8,9]",
        "0",
        "8",
        "seq_len_gt_max_positions",
    ),
    e(
        "embedding_bag",
        "DA102",
        "embedding_bag",
        "[12]",
        "0",
        "10",
        "token_id_ge_vocab",
    ),
    e(
        "embedding_bag_offsets",
        "DA103",
        "embedding_bag",
        "[1]",
        "0",
        "3",
        "unknown",
    ),
    e(
        "cross_entropy",
        "DA201",
        "nll_loss",
        "[255]",
        "0",
        "4",
        "ignore_label_not_ignored",
    ),
    e(
        "nll_loss",
        "DA201",
        "nll_loss",
        "[4]",
        "0",
        "4",
        "label_ge_num_classes",
    ),
    e(
        "cross_entropy_2d",
        "DA202",
        "nll_loss2d",
        "[255]",
        "0",
        "3",
        "ignore_label_not_ignored",
    ),
    e(
        "bce_input",
        "DA203",
        "bce",
        "[3.0]",
        "0.0",
        "1.0",
        "bce_on_logits",
    ),
    e(
        "bce_target",
        "DA204",
        "bce",
        "[2.0]",
        "0.0",
        "1.0",
        "bce_target_range",
    ),
    e(
        "multinomial",
        "DA301",
        "multinomial",
        "[\"nan\"]",
        "0.0",
        "\"inf\"",
        "nan_inf_probs",
    ),
    e(
        "multinomial_zero",
        "DA302",
        "multinomial",
        "[0.0]",
        "0.0",
        "null",
        "nan_inf_probs",
    ),
    e(
        "gather",
        "DA121",
        "gather_scatter",
        "[5]",
        "0",
        "5",
        "index_ge_dim_size",
    ),
    e(
        "scatter",
        "DA121",
        "gather_scatter",
        "[7]",
        "0",
        "5",
        "index_ge_dim_size",
    ),
    e(
        "scatter_add",
        "DA121",
        "gather_scatter",
        "[4]",
        "0",
        "4",
        "index_ge_dim_size",
    ),
    e(
        "scatter_reduce",
        "DA121",
        "gather_scatter",
        "[-1]",
        "0",
        "5",
        "negative_index",
    ),
    e(
        "index_select",
        "DA101",
        "index_select",
        "[4]",
        "0",
        "4",
        "index_ge_dim_size",
    ),
    e(
        "index_add",
        "DA113",
        "index",
        "[5]",
        "0",
        "5",
        "index_ge_dim_size",
    ),
    e(
        "index_copy",
        "DA114",
        "index",
        "[6]",
        "0",
        "4",
        "index_ge_dim_size",
    ),
    e(
        "index_fill",
        "DA115",
        "index",
        "[-6]",
        "-5",
        "5",
        "negative_index",
    ),
    e(
        "getitem",
        "DA111",
        "index",
        "[4]",
        "-4",
        "4",
        "index_ge_dim_size",
    ),
    e(
        "getitem_dim1",
        "DA111",
        "index",
        "[-6]",
        "-5",
        "5",
        "negative_index",
    ),
    e(
        "setitem",
        "DA111",
        "index",
        "[9]",
        "-4",
        "4",
        "index_ge_dim_size",
    ),
    e(
        "index_put",
        "DA111",
        "index",
        "[5]",
        "-5",
        "5",
        "index_ge_dim_size",
    ),
    e(
        "take",
        "DA112",
        "index",
        "[20]",
        "-20",
        "20",
        "index_ge_dim_size",
    ),
    e(
        "take_along_dim",
        "DA112",
        "index",
        "[5]",
        "-5",
        "5",
        "index_ge_dim_size",
    ),
    e(
        "one_hot",
        "DA122",
        "one_hot",
        "[3]",
        "0",
        "3",
        "label_ge_num_classes",
    ),
    e(
        "bincount",
        "DA123",
        "bincount",
        "[-1]",
        "0",
        "null",
        "negative_index",
    ),
    e(
        "ctc_loss",
        "DA205",
        "ctc_loss",
        "[7]",
        "0",
        "5",
        "label_ge_num_classes",
    ),
    e(
        "multi_margin",
        "DA206",
        "unknown",
        "[5]",
        "0",
        "5",
        "label_ge_num_classes",
    ),
    e(
        "bernoulli",
        "DA303",
        "unknown",
        "[1.5]",
        "0.0",
        "1.0",
        "unknown",
    ),
    e(
        "poisson", "DA304", "unknown", "[-1.0]", "0.0", "null", "unknown",
    ),
    e(
        "repeat_interleave",
        "DA501",
        "unknown",
        "[-1]",
        "0",
        "null",
        "negative_index",
    ),
];

#[test]
fn every_guarded_op_with_a_bad_value_is_stopped_at_its_line() {
    let file = guard_fixture("bad_ops.py");
    let (code, report, stdout) = run(&["--guard", "strict"], &[&py(), "bad_ops.py"]);
    assert_eq!(code, 0, "the program catches every DeviceAssertPrevented");
    assert_eq!(report["command"], "run");
    assert_eq!(report["exit_code"], 0);
    let findings = report["findings"].as_array().unwrap();
    let caught = String::from_utf8_lossy(&stdout);
    assert_eq!(
        caught.split_whitespace().count(),
        EXPECTED.len(),
        "caught: {caught}"
    );
    for ex in EXPECTED {
        let line = marker_line(&file, ex.marker);
        let f = findings
            .iter()
            .find(|f| f["location"]["line"] == line)
            .unwrap_or_else(|| panic!("no finding at line {line} ({})", ex.marker));
        assert_eq!(f["rule"], ex.rule, "{}", ex.marker);
        assert_eq!(f["op_family"], ex.family, "{}", ex.marker);
        assert_eq!(f["location"]["file"], "bad_ops.py", "{}", ex.marker);
        assert_eq!(f["values"].to_string(), ex.values, "{}", ex.marker);
        assert_eq!(f["bound"]["low"].to_string(), ex.low, "{}", ex.marker);
        assert_eq!(f["bound"]["high"].to_string(), ex.high, "{}", ex.marker);
        assert_eq!(f["causes"][0]["id"], ex.cause, "{}", ex.marker);
        assert_eq!(f["evidence"]["source"], "guard");
        assert!(
            !f["locations"].as_array().unwrap().is_empty(),
            "{}: first positions",
            ex.marker
        );
    }
    assert_eq!(findings.len(), EXPECTED.len());
}

#[test]
fn take_along_dim_is_checked_at_the_default_level() {
    // CPU torch wraps an index past the dimension silently and CUDA fails
    // gather's device assert: the default level stops it, as strict does.
    let (_, report, _) = run(&[], &[&py(), "bad_ops.py"]);
    let line = marker_line(&guard_fixture("bad_ops.py"), "take_along_dim");
    let findings = report["findings"].as_array().unwrap();
    let f = findings
        .iter()
        .find(|f| f["location"]["line"] == line)
        .expect("a finding at the take_along_dim line");
    assert_eq!(f["rule"], "DA112");
    assert_eq!(f["values"].to_string(), "[5]");
    assert_eq!(findings.len(), EXPECTED.len());
}

#[test]
fn legal_edge_values_give_no_finding_and_the_same_output() {
    let (code, report, stdout) = run(&[], &[&py(), "clean_ops.py"]);
    assert_eq!(code, 0);
    assert_eq!(
        report["findings"].as_array().unwrap().len(),
        0,
        "{report:#}"
    );
    let plain = std::process::Command::new(common::python())
        .arg("clean_ops.py")
        .current_dir(guard_fixture(""))
        .output()
        .unwrap();
    assert!(plain.status.success());
    assert_eq!(
        String::from_utf8_lossy(&stdout),
        String::from_utf8_lossy(&plain.stdout)
    );
    assert!(stdout.len() > 100);
}

#[test]
fn dataloader_workers_are_guarded() {
    let (code, report, _) = run(&[], &[&py(), "dataloader.py"]);
    assert_eq!(code, 1, "the worker's error reaches the main process");
    let f = &report["findings"][0];
    assert_eq!(f["rule"], "DA111");
    assert_eq!(f["values"].to_string(), "[12]");
    assert_eq!(f["location"]["file"], "dataloader.py");
    assert_eq!(
        f["location"]["line"],
        marker_line(&guard_fixture("dataloader.py"), "worker")
    );
    // Raised inside dataset[5] in a worker: the sample is 5 itself.
    assert_eq!(f["samples"].to_string(), r#"[{"dataset_index":5}]"#);
    assert_eq!(f["samples_certain"], true);
    assert!(f["evidence"]["worker"].is_u64(), "{f:#}");
}

#[test]
fn the_report_leads_with_the_worker_raise_that_ended_the_run() {
    // Two workers fail at the same line (samples 3 and 5); the parent
    // re-raised sample 3's, whichever worker wrote its report first.
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("report.json");
    let out = common::bin()
        .current_dir(guard_fixture(""))
        .args(["--color", "never", "run", "--report"])
        .arg(&report)
        .args(["--", &py(), "two_workers.py"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    let f = &report["findings"][0];
    assert_eq!(
        f["samples"].to_string(),
        r#"[{"dataset_index":3}]"#,
        "{report:#}"
    );
    assert_eq!(f["values"].to_string(), "[23]");
    assert_eq!(f["evidence"]["worker"], 1);
    assert!(f.get("caught").is_none(), "{report:#}");
    // The traceback and the diagnosis after it name the same sample.
    let diagnosis = stderr.find("error[DA111]").expect("a diagnosis");
    assert!(
        stderr[..diagnosis].contains("dataset sample 3, loaded by DataLoader worker 1"),
        "{stderr}"
    );
    assert!(stderr[diagnosis..].contains("dataset sample 3"), "{stderr}");
    assert!(
        !stderr[diagnosis..].contains("dataset sample 5"),
        "{stderr}"
    );
}

#[test]
fn every_finding_a_program_caught_is_reported() {
    let (code, report, _) = run(&[], &[&py(), "caught_twice.py"]);
    assert_eq!(code, 0);
    let findings = report["findings"].as_array().unwrap();
    let values: Vec<String> = findings.iter().map(|f| f["values"].to_string()).collect();
    assert_eq!(values, ["[12]", "[13]"], "{report:#}");
    let line = marker_line(&guard_fixture("caught_twice.py"), "lookup");
    assert!(findings
        .iter()
        .all(|f| f["caught"] == true && f["location"]["line"] == line));
}

#[test]
fn on_bad_batch_skip_finishes_the_run_and_quarantines_the_sample() {
    let dir = tempfile::tempdir().unwrap();
    let quarantine = dir.path().join("bad.jsonl");
    let q = quarantine.display().to_string();
    let (code, report, stdout) = run(
        &[
            "--on-bad-batch",
            "skip",
            "--quarantine",
            &q,
            "--max-skips",
            "2",
        ],
        &[&py(), "skip_bad_batch.py"],
    );
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(String::from_utf8_lossy(&stdout), "trained\n");
    let findings = report["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 1, "{report:#}");
    assert_eq!(findings[0]["caught"], true);
    assert_eq!(findings[0]["evidence"]["skipped"], true);
    let text = std::fs::read_to_string(&quarantine).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 1, "{text}");
    assert_eq!(lines[0]["dataset_index"], 5);
    assert_eq!(lines[0]["step"], 2);
    assert_eq!(
        lines[0]["location"]["line"],
        marker_line(&guard_fixture("skip_bad_batch.py"), "lookup")
    );
}

#[test]
fn quarantine_without_skip_is_refused_before_the_command_starts() {
    let out = common::bin()
        .env_remove("DEVASSERT_ON_BAD_BATCH")
        .args([
            "run",
            "--quarantine",
            "bad.jsonl",
            "--",
            &py(),
            "-c",
            "print('ran')",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    assert!(String::from_utf8_lossy(&out.stderr)
        .contains("--quarantine and --max-skips apply to --on-bad-batch skip only"));
}

#[test]
fn torchrun_findings_carry_the_failing_rank() {
    let torchrun = common::python().with_file_name("torchrun");
    let (code, report, _) = run(
        &["--no-blocking"],
        &[
            &torchrun.display().to_string(),
            "--nproc_per_node",
            "2",
            "--master_port",
            "29631",
            "ddp.py",
        ],
    );
    assert_ne!(code, 0);
    let findings = report["findings"].as_array().unwrap();
    let guard: Vec<_> = findings
        .iter()
        .filter(|f| f["evidence"]["source"] == "guard")
        .collect();
    assert_eq!(guard.len(), 1, "{report:#}");
    assert_eq!(guard[0]["rule"], "DA101");
    assert_eq!(guard[0]["evidence"]["ranks"].to_string(), "[1]");
    assert_eq!(guard[0]["values"].to_string(), "[21,22,23]");
    assert_eq!(
        guard[0]["location"]["line"],
        marker_line(&guard_fixture("ddp.py"), "ddp")
    );
}

#[test]
fn the_diagnosis_on_stderr_names_the_line_values_and_fix() {
    let dir = tempfile::tempdir().unwrap();
    let out = common::bin()
        .current_dir(guard_fixture(""))
        .args(["--color", "never", "run", "--log"])
        .arg(dir.path().join("run.log"))
        .arg("--")
        .arg(common::python())
        .arg("added_tokens.py")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("devassert.DeviceAssertPreventedIndexError: index out of range in self\ndevassert: embedding: argument `input`"),
        "{stderr}"
    );
    let start = stderr
        .find("error[DA101]")
        .expect("the diagnosis follows the child's output");
    let end = stderr.find("devassert: full output in").unwrap();
    insta::assert_snapshot!("run_added_tokens", &stderr[start..end]);
    assert!(stderr[end..].contains("run.log"));
}

/// The guard package `run` writes for the child holds its subpackages: a
/// program under `devassert run` imports the callbacks from the same copy
/// of devassert that guards it.
#[test]
fn the_child_imports_the_integrations_subpackage_of_the_written_guard() {
    let code = "import os, devassert, devassert.integrations as i; \
                assert os.path.dirname(i.__file__) == os.path.join(os.path.dirname(devassert.__file__), 'integrations'); \
                print('integrations from', i.__file__)";
    let (code, report, stdout) = run(&[], &[&py(), "-c", code]);
    assert_eq!(code, 0, "{report}");
    let text = String::from_utf8_lossy(&stdout);
    assert!(text.contains("integrations from"), "{text}");
    assert!(
        !text.contains("/python/devassert/"),
        "imported the source tree, not the written guard: {text}"
    );
}

//! The contract every command shares (docs/json.md): the exit codes, where
//! machine output goes, inputs checked before any work starts, no clean
//! result for inputs that were never read, and every JSON document valid
//! against docs/devassert-1.schema.json.

mod common;

use predicates::prelude::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;

fn own(name: &str) -> PathBuf {
    common::fixtures().join("logs/own").join(name)
}

fn devassert(args: &[&str], cwd: &Path) -> Output {
    common::bin()
        .current_dir(cwd)
        .args(args)
        .output()
        .expect("run devassert")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A raw u16 token file holding `ids`.
fn tokens(dir: &Path, name: &str, ids: &[u16]) -> PathBuf {
    let p = dir.join(name);
    let bytes: Vec<u8> = ids.iter().flat_map(|i| i.to_le_bytes()).collect();
    std::fs::write(&p, bytes).expect("write tokens");
    p
}

/// A model directory with only a config: pad_token_id 9 of 8 rows is a finding.
fn model(dir: &Path, pad: u32) -> PathBuf {
    let m = dir.join(format!("model-pad-{pad}"));
    std::fs::create_dir_all(&m).expect("mkdir");
    std::fs::write(
        m.join("config.json"),
        format!(r#"{{"vocab_size": 8, "pad_token_id": {pad}, "model_type": "gpt2"}}"#),
    )
    .expect("write config");
    m
}

/// A shell child that prints to both streams, writes a crash log on stderr
/// when asked, and exits with `code`.
fn child(log: Option<&Path>, code: i32) -> Vec<String> {
    let crash = log.map_or(String::new(), |l| format!("cat '{}' >&2; ", l.display()));
    vec![
        "sh".into(),
        "-c".into(),
        format!("echo child-stdout; echo child-stderr >&2; {crash}exit {code}"),
    ]
}

fn run_args<'a>(flags: &[&'a str], cmd: &'a [String]) -> Vec<&'a str> {
    let mut v = vec!["run"];
    v.extend_from_slice(flags);
    v.push("--");
    v.extend(cmd.iter().map(String::as_str));
    v
}

#[test]
fn one_exit_code_convention_for_every_command() {
    let d = tempfile::tempdir().expect("tempdir");
    let cwd = d.path();
    let clean_log = cwd.join("clean.log");
    std::fs::write(&clean_log, "epoch 1 loss 0.5\n").expect("write");
    let bad = tokens(cwd, "bad.bin", &[1, 2, 70]);
    let good = tokens(cwd, "good.bin", &[1, 2, 3]);
    let p = |p: &Path| p.to_str().expect("utf-8 path").to_string();
    let cases: Vec<(Vec<String>, i32)> = vec![
        // 1: an error-level finding is reported.
        (vec!["explain".into(), p(&own("launch-blocking.log"))], 1),
        (
            vec!["scan".into(), p(&bad), "--vocab".into(), "50".into()],
            1,
        ),
        (vec!["check".into(), p(&model(cwd, 9))], 1),
        // 0: none.
        (vec!["explain".into(), p(&clean_log)], 0),
        (
            vec!["scan".into(), p(&good), "--vocab".into(), "50".into()],
            0,
        ),
        (vec!["check".into(), p(&model(cwd, 0))], 0),
        // 2: an input cannot be used.
        (vec!["explain".into(), p(&cwd.join("nope.log"))], 2),
        (
            vec![
                "scan".into(),
                p(&cwd.join("nope.bin")),
                "--vocab".into(),
                "50".into(),
            ],
            2,
        ),
        (vec!["check".into(), p(&cwd.join("nope"))], 2),
    ];
    for (args, want) in cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = devassert(&args, cwd);
        assert_eq!(
            out.status.code(),
            Some(want),
            "{args:?}: {}",
            text(&out.stderr)
        );
        // The same code in the JSON, for every format.
        let mut json_args = vec!["--format", "json"];
        json_args.extend(&args);
        let out = devassert(&json_args, cwd);
        assert_eq!(out.status.code(), Some(want), "{json_args:?}");
        if want != 2 {
            let v: Value = serde_json::from_slice(&out.stdout).expect("json");
            assert_eq!(v["exit_code"], want, "{json_args:?}");
            common::assert_contract(&[&out.stdout]);
        }
        let mut gh = vec!["--format", "github"];
        gh.extend(&args);
        let out = devassert(&gh, cwd);
        assert_eq!(out.status.code(), Some(want), "{gh:?}");
        // An ::error annotation always fails the step.
        if text(&out.stdout).contains("::error") {
            assert_eq!(want, 1, "{gh:?}");
        }
    }
}

#[test]
fn run_keeps_the_childs_code_unless_asked_for_the_diagnosis() {
    let d = tempfile::tempdir().expect("tempdir");
    let crash = child(Some(&own("launch-blocking.log")), 3);
    let clean = child(None, 5);
    let code =
        |flags: &[&str], cmd: &[String]| devassert(&run_args(flags, cmd), d.path()).status.code();
    assert_eq!(
        code(&[], &crash),
        Some(3),
        "the child's own code by default"
    );
    assert_eq!(code(&["--exit-code", "child"], &clean), Some(5));
    assert_eq!(
        code(&["--exit-code", "diagnosis"], &crash),
        Some(1),
        "a failure found"
    );
    assert_eq!(
        code(&["--exit-code", "diagnosis"], &clean),
        Some(0),
        "none found"
    );
    let report = d.path().join("r.json");
    let r = report.to_str().expect("utf-8");
    assert_eq!(
        code(&["--exit-code", "diagnosis", "--report", r], &crash),
        Some(1)
    );
    let v: Value = serde_json::from_slice(&std::fs::read(&report).expect("report")).expect("json");
    assert_eq!(
        (v["exit_code"].as_i64(), v["child"]["exit_code"].as_i64()),
        (Some(1), Some(3))
    );
    common::assert_contract(&[std::fs::read(&report).expect("report")]);
}

#[test]
fn run_format_json_is_the_only_thing_on_stdout() {
    let d = tempfile::tempdir().expect("tempdir");
    let report = d.path().join("r.json");
    for cmd in [
        child(Some(&own("multirank-fallout-first.log")), 1),
        child(None, 0),
    ] {
        let mut flags = vec!["--format", "json", "--report"];
        flags.push(report.to_str().expect("utf-8"));
        let out = devassert(&run_args(&flags, &cmd), d.path());
        let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "stdout is not one JSON document ({e}):\n{}",
                text(&out.stdout)
            )
        });
        assert_eq!(v["command"], "run");
        let err = text(&out.stderr);
        // The child's stdout went to stderr (two pipes: no order between them).
        assert!(
            err.contains("child-stdout\n") && err.contains("child-stderr\n"),
            "{err}"
        );
        // The same document as --report.
        let file: Value =
            serde_json::from_slice(&std::fs::read(&report).expect("report")).expect("json");
        assert_eq!(v, file);
        common::assert_contract(&[&out.stdout]);
    }
    // GitHub annotations are machine output too: only them on stdout.
    let cmd = child(Some(&own("launch-blocking.log")), 1);
    let out = devassert(&run_args(&["--format", "github"], &cmd), d.path());
    let stdout = text(&out.stdout);
    assert!(stdout.lines().all(|l| l.starts_with("::")), "{stdout}");
    assert!(stdout.contains("::error"), "{stdout}");
}

#[test]
fn inputs_are_checked_before_any_work_starts() {
    let d = tempfile::tempdir().expect("tempdir");
    let marker = d.path().join("child-ran");
    let cmd = vec!["touch".to_string(), marker.display().to_string()];
    let out = devassert(
        &run_args(&["--report", "/nonexistent-dir/r.json"], &cmd),
        d.path(),
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("cannot write the report /nonexistent-dir/r.json"));
    assert!(
        !marker.exists(),
        "the child ran before the report path was checked"
    );
    // A command that cannot start leaves no empty report behind.
    let report = d.path().join("r.json");
    let out = devassert(
        &["run", "--report", "r.json", "--", "/nonexistent/program"],
        d.path(),
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(!report.exists(), "an empty report was left");

    // Impossible numbers are refused by the parser, naming the flag.
    let t = tokens(d.path(), "t.bin", &[1]);
    let t = t.to_str().expect("utf-8");
    let log = own("launch-blocking.log");
    let log = log.to_str().expect("utf-8");
    for (args, flag) in [
        (vec!["scan", t, "--vocab", "0"], "--vocab"),
        (vec!["scan", t, "--classes", "0"], "--classes"),
        (
            vec!["scan", t, "--vocab", "5", "--max-len", "0"],
            "--max-len",
        ),
        (
            vec!["scan", t, "--vocab", "5", "--threads", "0"],
            "--threads",
        ),
        (vec!["scan", t, "--vocab", "5", "--limit", "0"], "--limit"),
        (vec!["explain", log, "--data", t, "--vocab", "0"], "--vocab"),
        (
            vec!["explain", log, "--data", t, "--classes", "0"],
            "--classes",
        ),
    ] {
        let out = devassert(&args, d.path());
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = text(&out.stderr);
        assert!(
            err.contains(flag) && err.contains("must be at least 1"),
            "{args:?}: {err}"
        );
    }

    let out = devassert(&["check", "nonexist"], d.path());
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("nonexist: no such file or directory"),
        "{}",
        text(&out.stderr)
    );

    // --model is read before the log: a wrong one fails at once.
    let out = devassert(&["explain", log, "--model", "no-model"], d.path());
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("no-model: no such file or directory"));
    let out = devassert(
        &["explain", log, "--data", "no-data.bin", "--vocab", "5"],
        d.path(),
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("no-data.bin: --data: no such file or directory"));
}

#[test]
fn a_path_flag_takes_one_value_and_never_swallows_the_positional() {
    let d = tempfile::tempdir().expect("tempdir");
    let m = model(d.path(), 9);
    let data = tokens(d.path(), "ids.bin", &[1, 7]);
    let (m, data) = (m.to_str().expect("utf-8"), data.to_str().expect("utf-8"));
    // --data before the model dir, and repeated.
    let out = devassert(&["--format", "json", "check", "--data", data, m], d.path());
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert!(v["data"]["tokens"].is_object(), "{v}");
    let out = devassert(&["check", "--data", data, "--data", data, m], d.path());
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));

    // explain: the log after --data is the log, not data (it used to be
    // swallowed, and explain read an empty stdin and said all was well).
    let log = own("launch-blocking.log");
    let log = log.to_str().expect("utf-8");
    common::bin()
        .current_dir(d.path())
        .args(["explain", "--data", data, log, "--vocab", "5"])
        .write_stdin("")
        .assert()
        .code(1)
        .stdout(
            predicate::str::contains("read ").and(predicate::str::contains("launch-blocking.log")),
        );
}

#[test]
fn nothing_readable_is_never_a_clean_result() {
    let d = tempfile::tempdir().expect("tempdir");
    let empty = d.path().join("empty");
    std::fs::create_dir(&empty).expect("mkdir");
    let opaque = d.path().join("checkpoints");
    std::fs::create_dir(&opaque).expect("mkdir");
    // A legacy (pickle) checkpoint: no data format. (A zip one is read as
    // npz and fails on its members: exit 2 as well.)
    std::fs::write(opaque.join("model.pt"), b"\x80\x02c__builtin__\nset\n").expect("write");
    std::fs::write(opaque.join("notes.txt"), "loss went down\n").expect("write");

    let out = devassert(&["scan", "empty", "--vocab", "10"], d.path());
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.contains("empty: no data file in this folder"), "{err}");
    // One summary, and not an all-clear; -q keeps the summary.
    assert_eq!(
        text(&out.stdout),
        "nothing scanned: 1 input could not be used\n"
    );
    let out = devassert(&["scan", "-q", "empty", "--vocab", "10"], d.path());
    assert_eq!(
        text(&out.stdout),
        "no findings in what could be read; some input could not be used (see the errors)\n"
    );

    let out = devassert(&["scan", "checkpoints", "--vocab", "10"], d.path());
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains("checkpoints: no data file in this folder: skipped 2 files")
            && err.contains("model.pt, notes.txt"),
        "{err}"
    );
    let out = devassert(
        &["--format", "json", "scan", "checkpoints", "--vocab", "10"],
        d.path(),
    );
    let v: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["exit_code"], 2);
    assert_eq!(v["errors"][0]["file"], "checkpoints");
    common::assert_contract(&[&out.stdout]);

    // A folder with data files and others: the data is scanned, no error.
    tokens(&opaque, "ids.bin", &[1, 2]);
    let out = devassert(&["scan", "checkpoints", "--vocab", "10"], d.path());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));

    let out = devassert(&["explain", "empty"], d.path());
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("empty: a directory with no log files"));
    // Only binary files (a zip checkpoint): no log, not a clean one.
    let ckpt = d.path().join("ckpt");
    std::fs::create_dir(&ckpt).expect("mkdir");
    std::fs::write(ckpt.join("model.pt"), b"PK\x03\x04\x14\x00\x00\x00\x08\x00").expect("write");
    let out = devassert(&["explain", "ckpt"], d.path());
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stdout));
    let err = text(&out.stderr);
    assert!(
        err.contains("ckpt: a directory with no log files in it (skipped: ckpt/model.pt)"),
        "{err}"
    );
    let out = devassert(&["check", "empty"], d.path());
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("not a Hugging Face model directory"));

    // An empty stdin in CI: not "no device-side failure found".
    common::bin()
        .arg("explain")
        .write_stdin("")
        .assert()
        .code(2)
        .stdout("")
        .stderr(predicate::str::contains(
            "nothing to explain: stdin is empty",
        ));
}

#[test]
fn github_annotations_point_at_the_file_the_finding_is_about() {
    let d = tempfile::tempdir().expect("tempdir");
    let m = model(d.path(), 9);
    let out = devassert(&["--format", "github", "check", "model-pad-9"], d.path());
    let gh = text(&out.stdout);
    assert!(
        gh.starts_with("::error file=model-pad-9/config.json,"),
        "{gh}"
    );
    drop(m);

    // Only a line where Python noticed it: that line did nothing wrong, no anchor.
    let out = devassert(
        &[
            "--format",
            "github",
            "explain",
            own("multirank-fallout-first.log").to_str().expect("utf-8"),
        ],
        d.path(),
    );
    let gh = text(&out.stdout);
    let v: Value = serde_json::from_slice(
        &devassert(
            &[
                "--format",
                "json",
                "explain",
                own("multirank-fallout-first.log").to_str().expect("utf-8"),
            ],
            d.path(),
        )
        .stdout,
    )
    .expect("json");
    assert!(v["findings"][0]["location"].is_null() && v["findings"][0]["noticed_at"].is_object());
    assert!(
        gh.starts_with("::error title=") && !gh.contains("file="),
        "{gh}"
    );

    // The user's line, when the log gives it reliably.
    let out = devassert(
        &[
            "--format",
            "github",
            "explain",
            own("launch-blocking.log").to_str().expect("utf-8"),
        ],
        d.path(),
    );
    let gh = text(&out.stdout);
    assert!(
        gh.contains("file=/home/ana/chat/finetune_gpt2.py,line=96,"),
        "{gh}"
    );
}

#[test]
fn rule_json_is_in_the_envelope() {
    let d = tempfile::tempdir().expect("tempdir");
    let all = devassert(&["--format", "json", "rule"], d.path());
    let one = devassert(&["--format", "json", "rule", "DA101"], d.path());
    common::assert_contract(&[&all.stdout, &one.stdout]);
    let one: Value = serde_json::from_slice(&one.stdout).expect("json");
    assert_eq!(one["rules"].as_array().map(Vec::len), Some(1));
    assert!(one["rules"][0]["page"]
        .as_str()
        .is_some_and(|p| p.contains("DA101")));
}

/// The human output with the temp folder and timings made stable.
fn stable(s: &[u8], dir: &Path) -> String {
    let t = text(s).replace(&dir.display().to_string(), "[TMP]");
    let secs = regex::Regex::new(r"in [0-9]+\.[0-9]+ s(, [0-9]+ MiB/s)?").expect("regex");
    secs.replace_all(&t, "in [SECONDS]").into_owned()
}

#[test]
fn quiet_and_verbose_explain() {
    let d = tempfile::tempdir().expect("tempdir");
    let log = own("multirank-fallout-first.log");
    let log = log.to_str().expect("utf-8");
    let q = devassert(&["--color", "never", "-q", "explain", log], d.path());
    let q = stable(&q.stdout, d.path());
    assert!(!q.contains("causes:") && !q.contains("next steps:"), "{q}");
    insta::assert_snapshot!(
        "explain_quiet",
        q.replace(&common::fixtures().display().to_string(), "[FIXTURES]")
    );
    let v = devassert(&["--color", "never", "-v", "explain", log], d.path());
    let v = stable(&v.stdout, d.path());
    assert!(v.contains("evidence:") && v.contains("bytes"), "{v}");
    insta::assert_snapshot!(
        "explain_verbose",
        v.replace(&common::fixtures().display().to_string(), "[FIXTURES]")
    );
}

#[test]
fn quiet_and_verbose_scan() {
    let d = tempfile::tempdir().expect("tempdir");
    tokens(d.path(), "a.bin", &[1, 2, 70, 71]);
    let q = devassert(
        &["--color", "never", "-q", "scan", "a.bin", "--vocab", "50"],
        d.path(),
    );
    let q = stable(&q.stdout, d.path());
    assert!(
        !q.contains("causes:") && !q.contains("next steps:") && !q.contains("min..max"),
        "{q}"
    );
    insta::assert_snapshot!("scan_quiet", q);
    let v = devassert(
        &["--color", "never", "-v", "scan", "a.bin", "--vocab", "50"],
        d.path(),
    );
    let v = stable(&v.stdout, d.path());
    assert!(v.contains("evidence:") && v.contains("MiB"), "{v}");
    insta::assert_snapshot!("scan_verbose", v);
}

#[test]
fn quiet_and_verbose_check() {
    let d = tempfile::tempdir().expect("tempdir");
    model(d.path(), 9);
    let q = devassert(
        &["--color", "never", "-q", "check", "model-pad-9"],
        d.path(),
    );
    let q = stable(&q.stdout, d.path());
    assert!(
        !q.contains("causes:") && !q.contains("next steps:") && !q.contains("config "),
        "{q}"
    );
    insta::assert_snapshot!("check_quiet", q);
    let v = devassert(
        &["--color", "never", "-v", "check", "model-pad-9"],
        d.path(),
    );
    let v = stable(&v.stdout, d.path());
    assert!(v.contains("evidence:"), "{v}");
    insta::assert_snapshot!("check_verbose", v);
}

#[test]
fn quiet_and_verbose_run() {
    let d = tempfile::tempdir().expect("tempdir");
    let cmd = child(Some(&own("launch-blocking.log")), 1);
    let logf = d.path().join("out.log");
    let logf = logf.to_str().expect("utf-8");
    let run = |flag: &str| {
        let mut args = vec!["--color", "never", flag];
        args.extend(run_args(&["--log", logf], &cmd));
        let out = devassert(&args, d.path());
        assert_eq!(out.status.code(), Some(1));
        let err = stable(&out.stderr, d.path())
            .replace(&common::fixtures().display().to_string(), "[FIXTURES]");
        // The diagnosis, after the child's own output.
        let at = err.find("\nerror[").expect("a diagnosis");
        err[at + 1..].to_string()
    };
    let q = run("-q");
    assert!(!q.contains("causes:") && !q.contains("next steps:"), "{q}");
    insta::assert_snapshot!("run_quiet", q);
    let v = run("-v");
    assert!(
        v.contains("evidence:") && v.contains("likely causes"),
        "{v}"
    );
    insta::assert_snapshot!("run_verbose", v);
}

#[test]
fn json_errors_are_one_document_on_stdout_for_every_command() {
    let d = tempfile::tempdir().expect("tempdir");
    let cases: &[(&[&str], &str, &str)] = &[
        (
            &["explain", "nope.log"],
            "explain",
            "nope.log: no such file or directory",
        ),
        (
            &["check", "nope"],
            "check",
            "nope: no such file or directory",
        ),
        (&["rule", "DA999"], "rule", "no rule \"DA999\""),
        (
            &["scan", "--merge", "nope.json"],
            "scan",
            "cannot read nope.json",
        ),
        // Bad flags and values: clap's message, on one line.
        (
            &["scan", "x.bin", "--vocab", "0"],
            "scan",
            "invalid value '0' for '--vocab <N>': must be at least 1",
        ),
        (
            &["run"],
            "run",
            "the following required arguments were not provided: <CMD>...",
        ),
    ];
    let mut docs = Vec::new();
    for (args, command, says) in cases {
        let mut json_args = vec!["--format", "json"];
        json_args.extend(*args);
        let out = devassert(&json_args, d.path());
        assert_eq!(out.status.code(), Some(2), "{json_args:?}");
        let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "{json_args:?}: not one JSON document ({e}): {}",
                text(&out.stdout)
            )
        });
        assert_eq!(v["command"], *command, "{json_args:?}");
        assert_eq!(v["exit_code"], 2, "{json_args:?}");
        let error = v["error"].as_str().unwrap_or_default();
        assert!(error.contains(says), "{json_args:?}: {error}");
        // The same words on stderr, for a person (clap breaks its lines).
        let first = says.split(" <CMD>").next().unwrap_or(says);
        assert!(text(&out.stderr).contains(first), "{json_args:?}");
        docs.push(out.stdout);
    }
    common::assert_contract(&docs);
    // Human output keeps stdout empty on an error, as before.
    let out = devassert(&["explain", "nope.log"], d.path());
    assert_eq!(
        (out.status.code(), text(&out.stdout)),
        (Some(2), String::new())
    );
    // The child's own `--format json` is the child's.
    let out = devassert(
        &["run", "--", "sh", "-c", "exit 3", "--format", "json"],
        d.path(),
    );
    assert_eq!(out.status.code(), Some(3));
}

#[test]
fn quiet_explain_prints_no_fallout_header() {
    let d = tempfile::tempdir().expect("tempdir");
    let log = own("multirank-fallout-first.log");
    let log = log.to_str().expect("utf-8");
    let q = devassert(&["--color", "never", "-q", "explain", log], d.path());
    let q = text(&q.stdout);
    assert!(q.contains("error[DA101]") && !q.contains("fallout"), "{q}");
    let full = devassert(&["--color", "never", "explain", log], d.path());
    assert!(text(&full.stdout).contains("fallout:"));
}

#[test]
fn github_annotations_name_every_data_file_that_holds_bad_values() {
    let d = tempfile::tempdir().expect("tempdir");
    tokens(d.path(), "a.bin", &[1, 70, 2]);
    tokens(d.path(), "b.bin", &[1, 2, 3]);
    tokens(d.path(), "c.bin", &[99, 1, 99, 80]);
    let out = devassert(
        &[
            "--format", "github", "scan", "a.bin", "b.bin", "c.bin", "--vocab", "50",
        ],
        d.path(),
    );
    assert_eq!(out.status.code(), Some(1));
    let gh = text(&out.stdout);
    let lines: Vec<&str> = gh.lines().collect();
    assert_eq!(lines.len(), 2, "{gh}");
    assert!(
        lines[0].starts_with("::error file=a.bin,title=DA101 "),
        "{gh}"
    );
    assert!(lines[0].contains("; values 70 outside [0, 50)"), "{gh}");
    assert!(
        lines[1].starts_with("::error file=c.bin,title=DA101 "),
        "{gh}"
    );
    assert!(lines[1].contains("; values 99, 80 outside [0, 50)"), "{gh}");
}

#[test]
fn long_cache_paths_do_not_widen_the_scan_table() {
    let d = tempfile::tempdir().expect("tempdir");
    let deep = d
        .path()
        .join("huggingface/datasets/user___corpus/default/0.0.0/0123456789abcdef0123456789abcdef");
    std::fs::create_dir_all(&deep).expect("mkdir");
    tokens(&deep, "corpus-train-00000-of-00002.bin", &[1, 2, 3]);
    tokens(&deep, "corpus-train-00001-of-00002.bin", &[4, 70]);
    tokens(d.path(), "short.bin", &[5]);
    let out = devassert(
        &[
            "--color",
            "never",
            "scan",
            "huggingface",
            "short.bin",
            "--vocab",
            "50",
        ],
        d.path(),
    );
    let human = stable(&out.stdout, d.path());
    let table: String = human.lines().take(4).map(|l| format!("{l}\n")).collect();
    insta::assert_snapshot!("scan_long_paths", table);
    assert!(
        human.lines().take(4).all(|l| l.chars().count() < 110),
        "{human}"
    );
    // -v and the JSON keep whole paths.
    let v = devassert(
        &[
            "--color",
            "never",
            "-v",
            "scan",
            "huggingface",
            "--vocab",
            "50",
        ],
        d.path(),
    );
    assert!(text(&v.stdout)
        .contains("0123456789abcdef0123456789abcdef/corpus-train-00001-of-00002.bin"));
    let j = devassert(
        &["--format", "json", "scan", "huggingface", "--vocab", "50"],
        d.path(),
    );
    let j: Value = serde_json::from_slice(&j.stdout).expect("json");
    assert!(j["files"][1]["file"].as_str().is_some_and(
        |f| f.ends_with("0123456789abcdef0123456789abcdef/corpus-train-00001-of-00002.bin")
    ));
}

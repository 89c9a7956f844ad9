//! Issue 41: no panic on any text, and a crash is never a clean result.
//! The issue's inputs (a device line whose path follows a multi-byte
//! space) give the finding an ASCII space gives, through `explain` and
//! through `run`; a reader that crashes anyway (the test hook of
//! devassert-log's `test-hooks` feature, on in this build of the binary)
//! is an internal error naming the input and the line, exit 2, under every
//! `--exit-code`.

mod common;

use serde_json::Value;

const HOOK: &str = "DEVASSERT_TEST_PANIC_ON";

fn realistic(space: &str) -> String {
    format!(
        "[rank0]:{space}/pytorch/aten/src/ATen/native/cuda/Indexing.cu:1553: indexSelectLargeIndex: block: [7,0,0], thread: [64,0,0] Assertion `srcIndex < srcSelectDimSize` failed.\n\
         RuntimeError: CUDA error: device-side assert triggered\n"
    )
}

/// Every multi-byte whitespace character.
fn spaces() -> Vec<String> {
    (0x80..=0x10ffff)
        .filter_map(char::from_u32)
        .filter(|c| c.is_whitespace())
        .map(String::from)
        .collect()
}

fn explain_json(input: &[u8]) -> (Option<i32>, Value, String) {
    let out = common::bin()
        .args(["explain", "--format", "json", "--no-source", "-"])
        .write_stdin(input.to_vec())
        .output()
        .expect("run devassert");
    let report = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (
        out.status.code(),
        report,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn explain_reads_a_device_line_after_a_unicode_space() {
    let (code, ascii, _) = explain_json(realistic(" ").as_bytes());
    assert_eq!(code, Some(1));
    assert_eq!(ascii["findings"][0]["op_family"], "index_select");
    for sp in spaces() {
        let (code, pasted, stderr) = explain_json(realistic(&sp).as_bytes());
        assert_eq!(code, Some(1), "{sp:?}: {stderr}");
        assert_eq!(pasted["findings"], ascii["findings"], "{sp:?}");
    }
}

/// `printf '\xc2\x85:5:Assertion s failed\n' | devassert explain -`: the issue's shortest input.
#[test]
fn explain_reads_the_issues_shortest_input() {
    let input = b"\xc2\x85:5:Assertion s failed\n";
    let (code, pasted, stderr) = explain_json(input);
    let (ascii_code, ascii, _) = explain_json(b" :5:Assertion s failed\n");
    assert_eq!(code, ascii_code, "{stderr}");
    assert_eq!(pasted["findings"], ascii["findings"]);
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn explain_reports_a_crashed_reader_as_an_internal_error() {
    let log = "ok\nRuntimeError: CUDA error: device-side assert triggered CRASH-HERE\nmore\n";
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("crash.log");
    std::fs::write(&path, log).expect("write the log");
    for input in [Some(&path), None] {
        let mut cmd = common::bin();
        cmd.env(HOOK, "CRASH-HERE").arg("explain");
        match input {
            Some(p) => cmd.arg(p),
            None => cmd.arg("-").write_stdin(log),
        };
        let out = cmd.output().expect("run devassert");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        let name = input.map_or("-".to_string(), |p| p.display().to_string());
        assert!(
            stderr.contains(&format!(
                "devassert: error: internal error reading {name} at line 2: injected by {HOOK}"
            )),
            "{stderr}"
        );
        assert!(stderr.contains("this is a bug in devassert"), "{stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
        assert!(out.stdout.is_empty());
    }
}

/// A child that prints the issue's line and exits 1: the failure is
/// reported (the reader no longer crashes on it).
#[test]
fn run_reports_the_line_after_a_unicode_space() {
    for exit_code in ["child", "diagnosis"] {
        let out = common::bin()
            .args([
                "run",
                "--guard",
                "off",
                "--exit-code",
                exit_code,
                "--format",
                "json",
                "--",
            ])
            .args([
                "sh",
                "-c",
                &format!("printf '%s' '{}' >&2; exit 1", realistic("\u{a0}")),
            ])
            .output()
            .expect("run devassert");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{exit_code}: {stderr}");
        let report: Value = serde_json::from_slice(&out.stdout).expect("a JSON report");
        assert_eq!(
            report["findings"][0]["op_family"], "index_select",
            "{stderr}"
        );
        assert_eq!(report["exit_code"], 1);
    }
}

/// An injected panic of the log reader under `run`: an internal error that
/// names the log and the line, exit 2 whichever exit code was asked for,
/// also when the child itself exited 0.
#[test]
fn run_reports_a_crashed_log_reader() {
    let dir = tempfile::tempdir().expect("tempdir");
    for (exit_code, child) in [
        ("diagnosis", 0),
        ("diagnosis", 1),
        ("child", 0),
        ("child", 1),
    ] {
        let log = dir.path().join(format!("{exit_code}-{child}.log"));
        let report = dir.path().join(format!("{exit_code}-{child}.json"));
        let script = format!(
            "echo starting >&2; echo 'RuntimeError: CUDA error: device-side assert triggered CRASH-HERE' >&2; echo after >&2; exit {child}"
        );
        let out = common::bin()
            .env(HOOK, "CRASH-HERE")
            .args(["run", "--guard", "off", "--exit-code", exit_code, "--log"])
            .arg(&log)
            .arg("--report")
            .arg(&report)
            .args(["--", "sh", "-c", &script])
            .output()
            .expect("run devassert");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{exit_code} {child}: {stderr}");
        assert!(
            stderr.contains(&format!(
                "devassert: error: internal error reading {} at line 2: injected by {HOOK}",
                log.display()
            )),
            "{stderr}"
        );
        assert!(!stderr.contains("no device-side failure found"), "{stderr}");
        let written: Value =
            serde_json::from_slice(&std::fs::read(&report).expect("the report")).expect("JSON");
        assert_eq!(written["exit_code"], 2);
        // The log on disk is complete all the same.
        let kept = std::fs::read_to_string(&log).expect("the log");
        assert!(
            kept.contains("CRASH-HERE") && kept.contains("after"),
            "{kept}"
        );
    }
}

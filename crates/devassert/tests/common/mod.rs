//! Shared by the CLI tests: the built binary, fixture paths, and the Python
//! of the test venv (made by `scripts/venv` when `DEVASSERT_TEST_PYTHON` is unset).
#![allow(dead_code)]

pub mod scan_data;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

pub fn bin() -> assert_cmd::Command {
    let mut cmd =
        assert_cmd::Command::cargo_bin("devassert").expect("devassert binary is built for tests");
    // `devassert run` keeps its run folders here, not in the user's cache.
    cmd.env(
        "DEVASSERT_RUNS_DIR",
        Path::new(env!("CARGO_TARGET_TMPDIR")).join("devassert-runs"),
    );
    cmd
}

/// The report of `explain --format json` on `log`, read from stdin (source
/// lines left out).
pub fn explain_json(log: &str) -> serde_json::Value {
    let out = bin()
        .args(["explain", "--format", "json", "--no-source", "-"])
        .write_stdin(log)
        .output()
        .expect("run devassert");
    serde_json::from_slice(&out.stdout).expect("json")
}

/// The first finding of `explain --format json` on `log`.
pub fn explain_first(log: &str) -> serde_json::Value {
    explain_json(log)["findings"][0].clone()
}

/// A finding's cause ids, in rank order.
pub fn cause_ids(f: &serde_json::Value) -> Vec<&str> {
    f["causes"]
        .as_array()
        .map(|a| a.iter().filter_map(|c| c["id"].as_str()).collect())
        .unwrap_or_default()
}

/// The `why` of the finding's cause `id` (panics when it has none).
pub fn cause_why<'a>(f: &'a serde_json::Value, id: &str) -> &'a str {
    f["causes"]
        .as_array()
        .and_then(|a| a.iter().find(|c| c["id"] == id))
        .and_then(|c| c["why"].as_str())
        .unwrap_or_else(|| panic!("no cause {id}: {f}"))
}

pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("repo root")
}

/// The test venv's python (torch, numpy, pyarrow, Pillow, transformers).
pub fn python() -> PathBuf {
    static PY: OnceLock<PathBuf> = OnceLock::new();
    PY.get_or_init(|| {
        if let Some(p) = std::env::var_os("DEVASSERT_TEST_PYTHON") {
            return PathBuf::from(p);
        }
        let out = std::process::Command::new(repo_root().join("scripts/venv"))
            .output()
            .expect("run scripts/venv");
        assert!(
            out.status.success(),
            "scripts/venv failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
    })
    .clone()
}

/// Running (a zombie waiting for its reaper counts as gone).
pub fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| !rest.starts_with('Z')),
        Err(_) => false,
    }
}

/// Peak resident memory of this test process's waited-for children, in bytes.
pub fn children_peak_rss() -> u64 {
    // SAFETY: getrusage fills the struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) };
    usage.ru_maxrss as u64 * 1024
}

/// Validate JSON documents devassert wrote against the contract's schema
/// (docs/devassert-1.schema.json, with the venv's `jsonschema`: no Rust
/// validator to build). One Python process per call: batch where there are many.
pub fn assert_contract<T: AsRef<[u8]>>(docs: &[T]) {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut paths = Vec::new();
    for (i, doc) in docs.iter().enumerate() {
        let p = dir.path().join(format!("doc-{i}.json"));
        std::fs::write(&p, doc.as_ref()).expect("write doc");
        paths.push(p);
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/validate_contract.py");
    let out = std::process::Command::new(python())
        .arg(script)
        .args(&paths)
        .output()
        .expect("run validate_contract.py");
    if !out.status.success() {
        // Name the documents that failed, not only the temp files.
        let mut msg = String::from_utf8_lossy(&out.stdout).into_owned();
        for (i, doc) in docs.iter().enumerate() {
            let tag = format!("doc-{i}.json");
            if msg.contains(&tag) {
                let text = String::from_utf8_lossy(doc.as_ref());
                msg.push_str(&format!("\n--- {tag}:\n{}", &text[..text.len().min(3000)]));
            }
        }
        panic!(
            "not devassert/1 (docs/devassert-1.schema.json):\n{msg}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

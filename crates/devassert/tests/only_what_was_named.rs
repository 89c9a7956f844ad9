//! Issue 27, item 5: symlinks inside a data or log folder are not followed
//! out of the folder the user named, and a loop, a dangling link or an
//! unreadable entry is reported and skipped while the rest is read.
#![cfg(unix)]

mod common;

use serde_json::Value;
use std::os::unix::fs::symlink;
use std::path::Path;

const SECRET: &str = "https://user:ghp_SECRET123@github.com";

/// base/{secret.csv, secret.log, data/}: data holds one real CSV with an
/// out-of-range label and links: out of the folder, dangling, a loop.
fn hostile_folder(base: &Path) -> std::path::PathBuf {
    let data = base.join("data");
    std::fs::create_dir_all(data.join("sub")).expect("mkdir");
    std::fs::write(base.join("secret.csv"), format!("{SECRET},label\n1,2\n")).expect("write");
    std::fs::write(data.join("sub/train.csv"), "label\n1\n7\n").expect("write");
    symlink(data.join("sub/train.csv"), data.join("inside.csv")).expect("link");
    symlink(base.join("secret.csv"), data.join("creds.csv")).expect("link");
    symlink(base, data.join("up")).expect("link");
    symlink(data.join("missing.csv"), data.join("dangling.csv")).expect("link");
    symlink(data.join("loop-b.csv"), data.join("loop-a.csv")).expect("link");
    symlink(data.join("loop-a.csv"), data.join("loop-b.csv")).expect("link");
    data
}

#[test]
fn scan_does_not_follow_links_out_of_the_folder() {
    let d = tempfile::tempdir().expect("tempdir");
    let base = d.path().canonicalize().expect("canonical");
    let data = hostile_folder(&base);
    let out = common::bin()
        .args(["--format", "json", "scan"])
        .arg(&data)
        .args(["--classes", "5", "--column", "label"])
        .output()
        .expect("run devassert");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stdout.contains("ghp_") && !stderr.contains("ghp_"),
        "{stdout}\n{stderr}"
    );
    // Some entries could not be used: exit 2, with the rest scanned.
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    let r: Value = serde_json::from_str(&stdout).expect("JSON");
    let errors: Vec<(String, String)> = r["errors"]
        .as_array()
        .expect("errors")
        .iter()
        .map(|e| {
            let name = e["file"].as_str().unwrap_or_default();
            let name = Path::new(name)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned());
            (
                name.unwrap_or_default(),
                e["error"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    let why = |name: &str| {
        errors
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, w)| w.clone())
            .unwrap_or_else(|| panic!("no error for {name}: {errors:?}"))
    };
    assert!(why("creds.csv").contains("outside"), "{errors:?}");
    assert!(why("up").contains("outside"), "{errors:?}");
    assert!(why("dangling.csv").contains("dangling"), "{errors:?}");
    assert!(why("loop-a.csv").contains("loop"), "{errors:?}");
    // The real file, and the link to it inside the folder, were scanned.
    let files: Vec<&str> = r["files"]
        .as_array()
        .expect("files")
        .iter()
        .filter_map(|f| f["file"].as_str())
        .collect();
    assert_eq!(files.len(), 2, "{files:?}");
    assert!(
        r["findings"].as_array().is_some_and(|f| !f.is_empty()),
        "{stdout}"
    );
}

#[test]
fn explain_reads_the_folder_once_and_skips_what_it_cannot_use() {
    let d = tempfile::tempdir().expect("tempdir");
    let base = d.path().canonicalize().expect("canonical");
    let logs = base.join("logs");
    std::fs::create_dir_all(logs.join("a")).expect("mkdir");
    std::fs::copy(
        common::fixtures().join("logs/own/multirank-fallout-first.log"),
        logs.join("a/rank0.log"),
    )
    .expect("copy");
    std::fs::write(base.join("secret.log"), format!("{SECRET}\n")).expect("write");
    symlink(base.join("secret.log"), logs.join("other.log")).expect("link");
    symlink(logs.join("gone.log"), logs.join("dangling.log")).expect("link");
    symlink(logs.join("loop2"), logs.join("loop1")).expect("link");
    symlink(logs.join("loop1"), logs.join("loop2")).expect("link");
    // 32 links to the folder and its parent: followed, they multiply the reads.
    for i in 0..16 {
        symlink(&logs, logs.join(format!("self{i:02}"))).expect("link");
        symlink(logs.join("a"), logs.join(format!("a{i:02}"))).expect("link");
    }
    let start = std::time::Instant::now();
    let out = common::bin()
        .args(["explain", "--format", "json"])
        .arg(&logs)
        .output()
        .expect("run devassert");
    let took = start.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(matches!(out.status.code(), Some(0 | 1)), "{stderr}");
    assert!(took.as_secs() < 20, "{took:?}");
    let r: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let inputs = r["inputs"].as_array().expect("inputs");
    assert_eq!(inputs.len(), 1, "{inputs:?}");
    assert!(!r["findings"].as_array().expect("findings").is_empty());
    assert!(!String::from_utf8_lossy(&out.stdout).contains("ghp_"));
    for (entry, why) in [
        ("other.log", "outside"),
        ("dangling.log", "dangling"),
        ("loop1", "loop"),
    ] {
        assert!(
            stderr.lines().any(|l| l.starts_with("devassert: warning: ")
                && l.contains(entry)
                && l.contains(why)),
            "{entry}: {stderr}"
        );
    }
}

#[test]
fn check_does_not_read_text_files_linked_from_outside() {
    let d = tempfile::tempdir().expect("tempdir");
    let base = d.path().canonicalize().expect("canonical");
    let model = base.join("model");
    std::fs::create_dir_all(&model).expect("mkdir");
    std::fs::write(model.join("config.json"), r#"{"vocab_size": 8}"#).expect("write");
    std::fs::write(
        base.join("stolen.json"),
        format!(r#"{{"model": {{"vocab": {{"{SECRET}": 0}}}}}}"#),
    )
    .expect("write");
    symlink(base.join("stolen.json"), model.join("tokenizer.json")).expect("link");
    let out = common::bin()
        .arg("check")
        .arg(&model)
        .output()
        .expect("run devassert");
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.status.code(), Some(2), "{all}");
    assert!(!all.contains("ghp_"), "{all}");
    assert!(
        all.contains("tokenizer.json: a symlink to") && all.contains("not followed"),
        "{all}"
    );
    // A Hugging Face hub snapshot links into its repository's blobs: read.
    let repo = base.join("models--org--m");
    let snap = repo.join("snapshots/abc");
    std::fs::create_dir_all(&snap).expect("mkdir");
    std::fs::create_dir_all(repo.join("blobs")).expect("mkdir");
    std::fs::write(repo.join("blobs/c0ffee"), r#"{"vocab_size": 8}"#).expect("write");
    symlink("../../blobs/c0ffee", snap.join("config.json")).expect("link");
    let out = common::bin()
        .arg("check")
        .arg(&snap)
        .output()
        .expect("run devassert");
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

//! Issue 27, item 6: what devassert writes is the user's alone whatever the
//! umask, and `check` refuses config values no model can have.

mod common;

#[cfg(unix)]
#[test]
fn logs_reports_and_run_folders_are_private_under_any_umask() {
    use std::os::unix::fs::MetadataExt;
    let mode = |p: &std::path::Path| std::fs::metadata(p).expect("stat").mode() & 0o777;
    for umask in ["000", "022", "277"] {
        let d = tempfile::tempdir().expect("tempdir");
        let runs = d.path().join("cache/devassert/runs");
        let (log, report) = (d.path().join("out.log"), d.path().join("run.json"));
        let bin = assert_cmd::cargo::cargo_bin("devassert");
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!("umask {umask} && exec \"$0\" \"$@\""))
            .arg(&bin)
            .args(["run", "--log"])
            .arg(&log)
            .arg("--report")
            .arg(&report)
            .args(["--", "echo", "hello"])
            .env("DEVASSERT_RUNS_DIR", &runs)
            .output()
            .expect("run devassert");
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(mode(&log), 0o600, "--log under umask {umask}");
        assert_eq!(mode(&report), 0o600, "--report under umask {umask}");
        assert_eq!(std::fs::read_to_string(&log).expect("log"), "hello\n");
        for dir in [d.path().join("cache"), runs.clone()] {
            assert_eq!(mode(&dir), 0o700, "{} under umask {umask}", dir.display());
        }
        let run_dirs: Vec<_> = std::fs::read_dir(&runs)
            .expect("runs")
            .map(|e| e.expect("entry").path())
            .collect();
        assert_eq!(run_dirs.len(), 1);
        assert_eq!(mode(&run_dirs[0]), 0o700, "run folder under umask {umask}");
        // The guard's reports folder, where its processes write.
        let reports = run_dirs[0].join("reports");
        assert_eq!(mode(&reports), 0o700, "reports under umask {umask}");
    }
}

/// `--report` and `--log` through a link someone left there: refused before
/// the command starts (exit 2), the file the link names untouched.
#[cfg(unix)]
#[test]
fn report_and_log_are_never_written_through_a_link() {
    for flag in ["--report", "--log"] {
        let d = tempfile::tempdir().expect("tempdir");
        let target = d.path().join("bashrc");
        std::fs::write(&target, "precious\n").expect("write");
        let link = d.path().join("out");
        std::os::unix::fs::symlink(&target, &link).expect("symlink");
        let marker = d.path().join("ran");
        let out = common::bin()
            .args(["run", flag])
            .arg(&link)
            .args(["--", "touch"])
            .arg(&marker)
            .env("DEVASSERT_RUNS_DIR", d.path().join("runs"))
            .output()
            .expect("run devassert");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{flag}: {err}");
        assert!(err.contains("symbolic link"), "{flag}: {err}");
        assert_eq!(
            std::fs::read_to_string(&target).expect("read"),
            "precious\n"
        );
        assert!(std::fs::symlink_metadata(&link)
            .expect("link")
            .file_type()
            .is_symlink());
        assert!(!marker.exists(), "{flag}: the command must not start");
    }
}

/// A runs folder that cannot be written (read-only, or not a folder) does
/// not stop the job: it runs, guarded, and devassert says there is no run
/// record where the user expects it, and where the log went instead.
#[cfg(unix)]
#[test]
fn an_unwritable_runs_folder_does_not_stop_the_job() {
    let d = tempfile::tempdir().expect("tempdir");
    // A file where a folder should be: unwritable even for root.
    let blocked = d.path().join("file");
    std::fs::write(&blocked, "").expect("write");
    let tmp = d.path().join("tmp");
    std::fs::create_dir(&tmp).expect("tmp");
    let out = common::bin()
        .args(["run", "--", "sh", "-c", "echo hello; exit 3"])
        .env("DEVASSERT_RUNS_DIR", blocked.join("runs"))
        .env("TMPDIR", &tmp)
        .output()
        .expect("run devassert");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "the job's own status: {err}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "hello\n");
    assert!(
        err.contains("warning: no run record could be written"),
        "{err}"
    );
    assert!(
        err.contains(&blocked.join("runs").display().to_string()),
        "{err}"
    );
    // The log went to the private temporary folder, and says so.
    let logs: Vec<_> = walk(&tmp)
        .into_iter()
        .filter(|p| p.ends_with("output.log"))
        .collect();
    assert_eq!(logs.len(), 1, "{err}");
    assert_eq!(std::fs::read_to_string(&logs[0]).expect("log"), "hello\n");
    let folder = logs[0].parent().expect("run folder");
    assert!(err.contains(&folder.display().to_string()), "{err}");
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

fn check(config: &str) -> (Option<i32>, String) {
    let d = tempfile::tempdir().expect("tempdir");
    std::fs::write(d.path().join("config.json"), config).expect("write config");
    let out = common::bin()
        .arg("check")
        .arg(d.path())
        .output()
        .expect("run devassert");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn check_refuses_impossible_config_values() {
    for (config, says) in [
        (
            r#"{"model_type": "bert", "vocab_size": -5, "pad_token_id": 0}"#,
            "vocab_size is -5: a size cannot be negative",
        ),
        (
            r#"{"vocab_size": "30522"}"#,
            r#"vocab_size is the string "30522": write it as a number"#,
        ),
        (
            r#"{"vocab_size": 30522.5}"#,
            "vocab_size is 30522.5: not a whole number",
        ),
        (
            r#"{"vocab_size": 8, "max_position_embeddings": -512}"#,
            "max_position_embeddings is -512",
        ),
        (
            r#"{"vocab_size": 8, "pad_token_id": "0"}"#,
            "pad_token_id is the string",
        ),
        (
            r#"{"text_config": {"vocab_size": [1]}}"#,
            "text_config.vocab_size is [1]: not a number",
        ),
    ] {
        let (code, err) = check(config);
        assert_eq!(code, Some(2), "{config}: {err}");
        assert!(
            err.contains("config.json: ") && err.contains(says),
            "{config}: {err}"
        );
        assert!(!err.contains("below 0"), "{err}");
    }
    // A whole number written as a float, and a -1 id, are legal.
    let (code, err) = check(r#"{"vocab_size": 8.0, "pad_token_id": -1}"#);
    assert!(matches!(code, Some(0 | 1)), "{err}");
}

/// The guard's own reports (`guard-<pid>.jsonl`, `exit-<pid>.json`) are
/// 0600 under umask 000 too: they hold the program's values.
#[cfg(unix)]
#[test]
fn the_guards_reports_are_private_under_umask_000() {
    use std::os::unix::fs::MetadataExt;
    let d = tempfile::tempdir().expect("tempdir");
    let code =
        "from devassert._checks import report\nreport.emit({'rule': 'DA101', 'evidence': {}})\n";
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg("umask 000 && exec \"$0\" -c \"$1\"")
        .arg(common::python())
        .arg(code)
        .env("PYTHONPATH", common::repo_root().join("python"))
        .env("DEVASSERT_REPORT_DIR", d.path())
        .output()
        .expect("run python");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let files: Vec<_> = std::fs::read_dir(d.path())
        .expect("reports")
        .map(|e| e.expect("entry").path())
        .collect();
    assert_eq!(files.len(), 2, "{files:?}");
    for f in files {
        let mode = std::fs::metadata(&f).expect("stat").mode() & 0o777;
        assert_eq!(mode, 0o600, "{}", f.display());
    }
}

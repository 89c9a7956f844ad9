//! `devassert run` as a supervisor: exit codes, byte-exact pass-through of both
//! streams, the user's sitecustomize, no torch import for programs without
//! torch, and Ctrl-C reaching the child without leaving orphans.

mod common;

use common::alive;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn devassert_run(code: &str) -> std::process::Output {
    common::bin()
        .args(["run", "--"])
        .arg(common::python())
        .args(["-c", code])
        .output()
        .unwrap()
}

#[test]
fn exits_with_the_childs_status() {
    assert_eq!(devassert_run("pass").status.code(), Some(0));
    assert_eq!(
        devassert_run("import sys; sys.exit(3)").status.code(),
        Some(3)
    );
    let killed = devassert_run("import os, signal; os.kill(os.getpid(), signal.SIGTERM)");
    assert_eq!(killed.status.code(), Some(128 + 15));
}

#[test]
fn both_streams_pass_through_byte_for_byte() {
    let code = r#"
import sys
out, err = sys.stdout.buffer, sys.stderr.buffer
for i in range(200):
    out.write(b"line %d \xff\xfe\r" % i); out.flush()
    err.write(b"err %d\n" % i); err.flush()
out.write(b"no newline at the end")
"#;
    let out = devassert_run(code);
    let mut want = Vec::new();
    for i in 0..200 {
        want.extend_from_slice(format!("line {i} ").as_bytes());
        want.extend_from_slice(b"\xff\xfe\r");
    }
    want.extend_from_slice(b"no newline at the end");
    assert_eq!(out.stdout, want);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let want_err: String = (0..200).map(|i| format!("err {i}\n")).collect();
    assert!(stderr.starts_with(&want_err), "{stderr}");
    assert!(
        stderr.contains("devassert: full output in "),
        "the note names the log"
    );
}

#[test]
fn the_log_keeps_the_whole_output() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("run.log");
    let out = common::bin()
        .args(["run", "--log"])
        .arg(&log)
        .arg("--")
        .arg(common::python())
        .args([
            "-c",
            "import sys; print('to stdout'); print('to stderr', file=sys.stderr)",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(
        text.contains("to stdout\n") && text.contains("to stderr\n"),
        "{text}"
    );
}

#[test]
fn environment_is_set_and_the_users_sitecustomize_still_runs() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("sitecustomize.py"),
        "import os\nos.environ['USER_SITE_RAN'] = 'yes'\n",
    )
    .unwrap();
    let code = "import os, sys; print(os.environ.get('USER_SITE_RAN'), 'devassert' in sys.modules, 'torch' in sys.modules, os.environ['TORCH_USE_CUDA_DSA'], repr(os.environ['CUDA_VISIBLE_DEVICES']))";
    let out = common::bin()
        .env("PYTHONPATH", dir.path())
        .env_remove("CUDA_LAUNCH_BLOCKING")
        .args(["run", "--cpu", "--"])
        .arg(common::python())
        .args(["-c", code])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "yes True False 1 ''\n",
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The variables `devassert run` controls, as the child sees them.
fn child_env(flags: &[&str], env: &[(&str, &str)]) -> String {
    let code = "import os; print(*(os.environ.get(k, '-') for k in ('CUDA_LAUNCH_BLOCKING', 'TORCHDYNAMO_DISABLE', 'TORCH_COMPILE_DISABLE', 'DEVASSERT_GUARD')))";
    let mut cmd = common::bin();
    cmd.env_remove("CUDA_LAUNCH_BLOCKING")
        .env_remove("TORCHDYNAMO_DISABLE")
        .env_remove("TORCH_COMPILE_DISABLE")
        .env_remove("DEVASSERT_GUARD");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd
        .arg("run")
        .args(flags)
        .arg("--")
        .arg(common::python())
        .args(["-c", code])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

#[test]
fn full_speed_by_default_blocking_and_eager_on_request() {
    assert_eq!(child_env(&[], &[]), "- - - on");
    assert_eq!(child_env(&["--no-blocking"], &[]), "- - - on");
    assert_eq!(child_env(&["--blocking"], &[]), "1 - - on");
    assert_eq!(child_env(&["--eager"], &[]), "- 1 1 on");
    // The user's own setting is theirs to keep.
    assert_eq!(child_env(&[], &[("CUDA_LAUNCH_BLOCKING", "1")]), "1 - - on");
}

#[test]
fn the_async_level_reaches_the_guard() {
    assert_eq!(child_env(&["--guard", "async"], &[]), "- - - async");
    assert_eq!(
        child_env(&[], &[("DEVASSERT_GUARD", "async")]),
        "- - - async"
    );
    assert_eq!(
        child_env(&["--guard", "strict"], &[("DEVASSERT_GUARD", "async")]),
        "- - - strict"
    );
}

/// A program that dies of a device-side assert the guard never saw: it
/// replays a real crash log on stderr and exits 1.
fn replay_crash(log: &str, extra: &[&str]) -> (String, serde_json::Value) {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("run.json");
    let code = "import sys; sys.stderr.write(open(sys.argv[1]).read()); sys.exit(1)";
    let out = common::bin()
        .args(["run", "--color", "never", "--report"])
        .arg(&report)
        .args(extra)
        .arg("--")
        .arg(common::python())
        .args(["-c", code])
        .arg(log)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let json = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    (String::from_utf8_lossy(&out.stderr).into_owned(), json)
}

#[test]
fn an_assert_the_guard_did_not_stop_names_the_rerun_command() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("kernel.log");
    std::fs::write(
        &log,
        "/pytorch/aten/src/ATen/native/cuda/Indexing.cu:1141: indexSelectLargeIndex: block: [3,0,0], thread: [7,0,0] Assertion `srcIndex < srcSelectDimSize` failed.\n\
         Traceback (most recent call last):\n  File \"train.py\", line 9, in <module>\n    loss.item()\n\
         RuntimeError: CUDA error: device-side assert triggered\n",
    )
    .unwrap();
    let (stderr, json) = replay_crash(log.to_str().unwrap(), &[]);
    let want = format!(
        "devassert run --blocking --eager -- {} -c 'import sys; sys.stderr.write(open(sys.argv[1]).read()); sys.exit(1)' {}",
        common::python().display(),
        log.display()
    );
    assert!(
        stderr.contains("the guard did not stop this device-side assert"),
        "{stderr}"
    );
    assert!(stderr.contains(&want), "{stderr}");
    assert!(
        !stderr.contains("find the real line and the values: devassert run --"),
        "no generic rerun step inside run: {stderr}"
    );
    assert_eq!(json["findings"][0]["evidence"]["rerun"], want.as_str());
    let start = stderr.find("error[DA101]").expect("a diagnosis");
    let end = stderr.find("devassert: full output in").unwrap();
    let shown = stderr[start..end]
        .replace(&common::python().display().to_string(), "PYTHON")
        .replace(&log.display().to_string(), "LOG");
    insta::assert_snapshot!("run_unstopped_assert", shown);
    assert!(json["findings"][0]["fixes"][0]
        .as_str()
        .unwrap()
        .ends_with(&want));
}

#[test]
fn a_compiled_regions_assert_points_to_eager() {
    let log = common::fixtures().join("logs/own/inductor-tmp-path.log");
    let (stderr, json) = replay_crash(log.to_str().unwrap(), &["--blocking"]);
    assert!(
        stderr.contains("does not see the ops of compiled regions"),
        "{stderr}"
    );
    let rerun = json["findings"][0]["evidence"]["rerun"].as_str().unwrap();
    assert!(
        rerun.starts_with("devassert run --blocking --eager -- "),
        "{rerun}"
    );
    // Already eager (an ahead-of-time compiled kernel): nothing to turn on.
    let (_, json) = replay_crash(log.to_str().unwrap(), &["--eager"]);
    assert!(json["findings"][0]["evidence"].get("rerun").is_none());
}

/// The run folders under `runs`, oldest first.
fn run_folders(runs: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut v: Vec<_> = std::fs::read_dir(runs)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    v.sort();
    v
}

#[test]
fn each_run_has_a_folder_that_keeps_the_log_but_not_the_guard() {
    let cache = tempfile::tempdir().unwrap();
    let code = "import os; print(os.environ['DEVASSERT_REPORT_DIR'])";
    let out = common::bin()
        .env_remove("DEVASSERT_RUNS_DIR")
        .env("XDG_CACHE_HOME", cache.path())
        .args(["run", "--"])
        .arg(common::python())
        .args(["-c", code])
        .output()
        .unwrap();
    assert!(out.status.success());
    let runs = cache.path().join("devassert/runs");
    let folders = run_folders(&runs);
    assert_eq!(folders.len(), 1, "{folders:?}");
    let run = &folders[0];
    let name = run.file_name().unwrap().to_string_lossy().into_owned();
    // <UTC time>-<pid>: 20261204T163652Z-4242
    assert!(
        name.len() > 17 && &name[8..9] == "T" && &name[15..17] == "Z-",
        "{name}"
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        run.join("reports").display().to_string(),
        "the guard reports into the run's folder"
    );
    assert!(run.join("output.log").is_file());
    assert!(run.join("reports").is_dir());
    assert!(
        !run.join("site").exists(),
        "the guard's copy is left behind"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "full output in {}",
            run.join("output.log").display()
        )),
        "{stderr}"
    );
}

#[test]
fn without_a_home_runs_go_to_a_private_temp_folder() {
    let tmp = tempfile::tempdir().unwrap();
    // SAFETY: getuid cannot fail.
    let private = tmp
        .path()
        .join(format!("devassert-{}", unsafe { libc::getuid() }));
    let run = |tmp: &std::path::Path| {
        common::bin()
            .env_remove("DEVASSERT_RUNS_DIR")
            .env_remove("XDG_CACHE_HOME")
            .env_remove("HOME")
            .env("TMPDIR", tmp)
            .args(["run", "--"])
            .arg(common::python())
            .args(["-c", "pass"])
            .output()
            .unwrap()
    };
    let out = run(tmp.path());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(run_folders(&private.join("runs")).len(), 1);
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&private).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o700);
    // A folder others can write is not trusted with the guard.
    std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o777)).unwrap();
    let out = run(tmp.path());
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("not a private directory"), "{stderr}");
}

#[test]
fn the_oldest_run_folders_are_pruned() {
    let runs = tempfile::tempdir().unwrap();
    for i in 0..20 {
        std::fs::create_dir(runs.path().join(format!("20240101T0000{i:02}Z-999999999"))).unwrap();
    }
    std::fs::create_dir(runs.path().join("not-a-run")).unwrap();
    let out = common::bin()
        .env("DEVASSERT_RUNS_DIR", runs.path())
        .args(["run", "--"])
        .arg(common::python())
        .args(["-c", "pass"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let names: Vec<String> = run_folders(runs.path())
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 21, "{names:?}");
    assert!(!names.contains(&"20240101T000000Z-999999999".to_string()));
    assert!(names.contains(&"20240101T000001Z-999999999".to_string()));
    assert!(names.contains(&"not-a-run".to_string()));
}

#[test]
fn a_missing_command_is_a_clear_error() {
    let out = common::bin()
        .args(["run", "--", "/nonexistent/devassert-no-such-program"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr)
        .contains("cannot start /nonexistent/devassert-no-such-program"));
}

#[test]
fn ctrl_c_reaches_the_child_and_leaves_no_orphans() {
    let code = r#"
import subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
try:
    # Printed inside the try: the test's SIGINT may arrive right after this line.
    print(child.pid, flush=True)
    time.sleep(300)
except KeyboardInterrupt:
    print("interrupted", flush=True)
    raise
"#;
    let mut sup = Command::new(assert_cmd::cargo::cargo_bin("devassert"))
        .env(
            "DEVASSERT_RUNS_DIR",
            std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("devassert-runs"),
        )
        .args(["run", "--"])
        .arg(common::python())
        .args(["-c", code])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(sup.stdout.take().unwrap()).lines();
    let grandchild: i32 = lines.next().unwrap().unwrap().trim().parse().unwrap();
    assert!(alive(grandchild));
    // SAFETY: interrupting the devassert process this test started.
    unsafe {
        libc::kill(sup.id() as i32, libc::SIGINT);
    }
    let status = sup.wait().unwrap();
    assert_eq!(lines.next().unwrap().unwrap(), "interrupted");
    assert_eq!(status.code(), Some(128 + 2));
    let deadline = Instant::now() + Duration::from_secs(10);
    while alive(grandchild) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        !alive(grandchild),
        "the grandchild {grandchild} outlived the run"
    );
}

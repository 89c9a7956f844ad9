//! `devassert run` as a supervisor: exit codes, byte-exact pass-through of both
//! streams, the user's sitecustomize, no torch import for programs without
//! torch, and Ctrl-C reaching the child without leaving orphans.

mod common;

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
    let code = "import os, sys; print(os.environ.get('USER_SITE_RAN'), 'devassert' in sys.modules, 'torch' in sys.modules, os.environ['CUDA_LAUNCH_BLOCKING'], os.environ['TORCH_USE_CUDA_DSA'], repr(os.environ['CUDA_VISIBLE_DEVICES']))";
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
        "yes True False 1 1 ''\n",
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
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

/// Running (a zombie waiting for its reaper counts as gone).
fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| !rest.starts_with('Z')),
        Err(_) => false,
    }
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

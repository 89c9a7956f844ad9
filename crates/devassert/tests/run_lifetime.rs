//! `devassert run` neither outlives nor outwaits its job: the child dies with
//! devassert however devassert dies, a closed pipe downstream reaches the
//! child, a background process holding the output does not keep the run
//! waiting, scheduler signals reach the child, and the log is exactly the
//! output (or says it is not).

mod common;

use common::alive;

use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn supervisor(args: &[&str]) -> Command {
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("devassert"));
    cmd.env(
        "DEVASSERT_RUNS_DIR",
        std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("devassert-runs"),
    )
    .arg("run")
    .args(args);
    cmd
}

fn shell(script: &str) -> Command {
    let mut cmd = supervisor(&["--"]);
    cmd.args(["sh", "-c", script]);
    cmd
}

fn gone_within(pid: i32, limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    while alive(pid) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    !alive(pid)
}

fn wait_within(child: &mut Child, limit: Duration) -> Option<std::process::ExitStatus> {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(st) = child.try_wait().unwrap() {
            return Some(st);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The pid the child prints on its first line.
fn first_pid(child: &mut Child) -> i32 {
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let pid = lines.next().unwrap().unwrap().trim().parse().unwrap();
    // Keep reading in the background so the child never blocks on a full pipe.
    std::thread::spawn(move || for _ in lines {});
    pid
}

#[test]
fn the_child_dies_when_devassert_is_killed() {
    let mut sup = shell("echo $$; exec sleep 300")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let child = first_pid(&mut sup);
    assert!(alive(child));
    sup.kill().unwrap(); // SIGKILL: nothing of devassert runs after it
    let _ = sup.wait();
    assert!(
        gone_within(child, Duration::from_secs(5)),
        "the child {child} outlived a killed devassert"
    );
}

#[test]
fn scheduler_signals_reach_the_child_and_devassert_stays() {
    // Slurm's warning before a time limit is SIGUSR1; before this change it
    // killed devassert and left the child running.
    let mut sup = shell("trap 'echo got-usr1; exit 7' USR1; echo $$; while :; do sleep 0.05; done")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(sup.stdout.take().unwrap()).lines();
    let _child: i32 = lines.next().unwrap().unwrap().trim().parse().unwrap();
    // SAFETY: signalling the devassert process this test started.
    unsafe {
        libc::kill(sup.id() as i32, libc::SIGUSR1);
    }
    let st = wait_within(&mut sup, Duration::from_secs(10)).expect("the run ends");
    assert_eq!(lines.next().unwrap().unwrap(), "got-usr1");
    assert_eq!(st.code(), Some(7), "the child's own exit code");
}

#[test]
fn a_closed_pipe_downstream_ends_the_child_as_without_devassert() {
    // `devassert run -- prog | head -1`: the child writes forever.
    let mut sup = shell("while :; do echo y; done")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut out = sup.stdout.take().unwrap();
    let mut first = [0u8; 2];
    out.read_exact(&mut first).unwrap();
    assert_eq!(&first, b"y\n");
    drop(out); // what `head -1` does after its line
    let st = wait_within(&mut sup, Duration::from_secs(5));
    assert!(
        st.is_some(),
        "devassert kept the child writing into a closed pipe"
    );
    // The child died of SIGPIPE, as it would in `prog | head -1`.
    assert_eq!(st.unwrap().code(), Some(128 + libc::SIGPIPE));
}

#[test]
fn a_background_process_holding_the_output_does_not_keep_the_run() {
    let started = Instant::now();
    let mut sup = shell("sleep 30 & echo done")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let st = wait_within(&mut sup, Duration::from_secs(15)).expect("the run ends");
    assert!(st.success());
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "took {:?}",
        started.elapsed()
    );
    let mut err = String::new();
    sup.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    assert!(
        err.contains("still held its output open"),
        "says why the log may miss output: {err}"
    );
}

#[test]
fn the_log_is_exactly_the_output() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("run.log");
    let out = supervisor(&["--log", log.to_str().unwrap(), "--"])
        .args(["sh", "-c", "printf 'a line\\nno newline at the end'"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(
        std::fs::read(&log).unwrap(),
        b"a line\nno newline at the end"
    );
}

#[test]
fn a_log_that_could_not_be_written_is_called_incomplete() {
    // /dev/full: every write fails with ENOSPC, as on a full disk.
    let out = supervisor(&["--log", "/dev/full", "--"])
        .args(["sh", "-c", "echo some output"])
        .output()
        .unwrap();
    assert!(out.status.success(), "the run keeps the child's status");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("the log /dev/full is incomplete"), "{err}");
    assert!(!err.contains("full output in"), "{err}");
}

#[test]
fn an_error_names_its_cause_once() {
    let out = supervisor(&["--log", "/nonexistent-dir/run.log", "--"])
        .args(["sh", "-c", "true"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.matches("os error 2").count(), 1, "{err}");
}

#[test]
fn a_slow_log_reader_never_holds_the_output_up() {
    // Back-to-back assertion messages on one line are the reader's slowest
    // input; 24 MB of them written at once must pass straight through and
    // land whole in the log, whatever the reader manages to read.
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("run.log");
    let glued = "/pytorch/aten/src/ATen/native/cuda/Indexing.cu:1141: indexSelectLargeIndex: block: [1,0,0], \
                 thread: [0,0,0] Assertion `srcIndex < srcSelectDimSize` failed.";
    let script = format!(
        "import sys\nline = ({glued:?} * 2000 + '\\n').encode()\nfor _ in range(24_000_000 // len(line)):\n    sys.stdout.buffer.write(line)\n"
    );
    let started = Instant::now();
    let out = supervisor(&["--guard", "off", "--log", log.to_str().unwrap(), "--"])
        .arg(common::python())
        .args(["-c", &script])
        .output()
        .unwrap();
    assert!(out.status.success());
    let written = std::fs::metadata(&log).unwrap().len();
    assert_eq!(
        written as usize,
        out.stdout.len(),
        "the log holds all of it"
    );
    assert!(written > 20_000_000);
    assert!(
        started.elapsed() < Duration::from_secs(40),
        "took {:?}",
        started.elapsed()
    );
    // The test build's reader is far slower than 24 MB at once: it skipped,
    // and the closing lines say so.
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("the log reader fell behind and skipped"),
        "{err}"
    );
}

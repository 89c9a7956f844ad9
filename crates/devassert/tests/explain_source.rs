//! `explain` reads source only from regular `.py` files under the current
//! directory (or `--source-root`): a crafted log naming any other file
//! prints nothing of it, in every output format.

mod common;

use std::path::Path;

const SECRET: &str = "SECRET-7f3a-do-not-print";

/// A crash whose only user frame is `file`, line `line`.
fn log_naming(file: &str, line: u32) -> String {
    format!(
        "../aten/src/ATen/native/cuda/Indexing.cu:1289: indexSelectLargeIndex: block: [3,0,0], thread: [5,0,0] Assertion `srcIndex < srcSelectDimSize` failed.\n\
         Traceback (most recent call last):\n  File \"{file}\", line {line}, in <module>\n    out = model(ids)\n\
         RuntimeError: CUDA error: device-side assert triggered\n"
    )
}

fn explain(cwd: &Path, log: &Path, format: &str, extra: &[&str]) -> String {
    let out = common::bin()
        .current_dir(cwd)
        .env("HOME", cwd.join("home"))
        .args(["explain", "--color", "never", "--format", format])
        .args(extra)
        .arg(log)
        .output()
        .expect("run devassert");
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8")
}

struct Layout {
    _dir: tempfile::TempDir,
    base: std::path::PathBuf,
    root: std::path::PathBuf,
}

/// base/{proj/, outside/secret.py, home/.ssh/id_rsa}; proj holds train.py and
/// link.py -> ../outside/secret.py.
fn layout() -> Layout {
    let dir = tempfile::tempdir().expect("tempdir");
    let base = dir.path().canonicalize().expect("canonical");
    let root = base.join("proj");
    std::fs::create_dir_all(&root).expect("mkdir");
    std::fs::create_dir_all(base.join("outside")).expect("mkdir");
    std::fs::create_dir_all(base.join("home/.ssh")).expect("mkdir");
    let body = format!("{SECRET} = 1\n{SECRET} = 2\n{SECRET} = 3\n");
    std::fs::write(base.join("outside/secret.py"), &body).expect("write");
    std::fs::write(base.join("home/.ssh/id_rsa"), &body).expect("write");
    std::fs::write(root.join("notes.txt"), &body).expect("write");
    std::fs::write(
        root.join("train.py"),
        "import torch\nout = model(ids)  # VISIBLE-LINE\nprint(out)\n",
    )
    .expect("write");
    #[cfg(unix)]
    std::os::unix::fs::symlink(base.join("outside/secret.py"), root.join("link.py"))
        .expect("symlink");
    Layout {
        _dir: dir,
        base,
        root,
    }
}

fn assert_nothing_of(l: &Layout, named: &str, forbidden: &[&str]) {
    let log = l.base.join("crash.log");
    std::fs::write(&log, log_naming(named, 2)).expect("write log");
    for format in ["human", "json", "github"] {
        let out = explain(&l.root, &log, format, &[]);
        for bad in forbidden {
            assert!(
                !out.contains(bad),
                "{format} output for a frame in {named} shows {bad:?}:\n{out}"
            );
        }
    }
}

#[test]
fn etc_passwd_is_not_shown() {
    let l = layout();
    let passwd = std::fs::read_to_string("/etc/passwd").unwrap_or_default();
    let lines: Vec<&str> = passwd.lines().take(3).filter(|s| !s.is_empty()).collect();
    assert_nothing_of(&l, "/etc/passwd", &lines);
    // Walking up from the root does not get there either.
    assert_nothing_of(&l, "../../../../../../../../etc/passwd", &lines);
}

#[test]
fn ssh_key_is_not_shown() {
    let l = layout();
    assert_nothing_of(&l, "~/.ssh/id_rsa", &[SECRET]);
    let abs = l.base.join("home/.ssh/id_rsa");
    assert_nothing_of(&l, &abs.to_string_lossy(), &[SECRET]);
}

#[test]
fn non_py_file_under_the_root_is_not_shown() {
    let l = layout();
    assert_nothing_of(&l, "notes.txt", &[SECRET]);
}

#[cfg(unix)]
#[test]
fn symlink_out_of_the_root_is_not_followed() {
    let l = layout();
    assert_nothing_of(&l, "link.py", &[SECRET]);
    assert_nothing_of(&l, &l.root.join("link.py").to_string_lossy(), &[SECRET]);
}

#[test]
fn py_outside_the_root_is_not_shown() {
    let l = layout();
    let outside = l.base.join("outside/secret.py");
    assert_nothing_of(&l, &outside.to_string_lossy(), &[SECRET]);
    assert_nothing_of(&l, "../outside/secret.py", &[SECRET]);
}

#[test]
fn py_under_the_root_is_shown_unless_turned_off() {
    let l = layout();
    let log = l.base.join("crash.log");
    std::fs::write(&log, log_naming("train.py", 2)).expect("write log");
    assert!(explain(&l.root, &log, "human", &[]).contains("VISIBLE-LINE"));
    assert!(!explain(&l.root, &log, "human", &["--no-source"]).contains("VISIBLE-LINE"));
    // From elsewhere, --source-root points at the project.
    let root = l.root.to_string_lossy().into_owned();
    assert!(!explain(&l.base, &log, "human", &[]).contains("VISIBLE-LINE"));
    assert!(explain(&l.base, &log, "human", &["--source-root", &root]).contains("VISIBLE-LINE"));
    // A root that holds the secret's folder does show it: the check is the root, not the name.
    let outside = l.base.join("outside/secret.py");
    std::fs::write(&log, log_naming(&outside.to_string_lossy(), 2)).expect("write log");
    let base = l.base.to_string_lossy().into_owned();
    assert!(explain(&l.root, &log, "human", &["--source-root", &base]).contains(SECRET));
}

/// A frame naming a FIFO under the root: explain neither blocks on it nor
/// reads it (the source reader opens with O_NONBLOCK, then checks the
/// descriptor is a regular file).
#[cfg(unix)]
#[test]
fn a_fifo_named_by_a_frame_never_blocks() {
    let l = layout();
    let fifo = l.root.join("pipe.py");
    let c = std::ffi::CString::new(fifo.to_string_lossy().as_bytes()).expect("path");
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let log = l.base.join("crash.log");
    std::fs::write(&log, log_naming("pipe.py", 2)).expect("write log");
    let out = common::bin()
        .current_dir(&l.root)
        .args(["explain", "--color", "never"])
        .arg(&log)
        .timeout(std::time::Duration::from_secs(20))
        .output()
        .expect("run devassert");
    assert_eq!(out.status.code(), Some(1), "{out:?}");
}

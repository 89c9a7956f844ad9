//! The source reader against a log's author who also controls the project
//! folder: between the reader's check of a path and its open, a directory
//! is swapped for a symlink out of the root, or a source file for a FIFO,
//! as fast as the kernel allows (atomic `renameat2(RENAME_EXCHANGE)` in a
//! loop on another thread). Whatever moment each read lands on, it returns
//! the file inside the root or nothing; never the outside file, and never
//! blocks.
#![cfg(target_os = "linux")]

use devassert_core::source::SourceRoot;
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

const INSIDE: &str = "inside = 1\n";
const SECRET: &str = "token = 'ghp_outside_the_root'\n";
/// How long each test races (the 21-in-1,500 leak of issue 27 shows within it).
const RACE: Duration = Duration::from_secs(2);
/// A read slower than this is a hang (a FIFO opened without O_NONBLOCK blocks forever).
const HANG: Duration = Duration::from_secs(10);

fn c(p: &Path) -> CString {
    CString::new(p.as_os_str().as_bytes()).expect("path without NUL")
}

/// Swap two directory entries atomically (both exist before and after).
fn exchange(a: &Path, b: &Path) -> bool {
    let (a, b) = (c(a), c(b));
    // SAFETY: two valid NUL-terminated paths; the call only renames.
    let r = unsafe {
        libc::syscall(
            libc::SYS_renameat2,
            libc::AT_FDCWD,
            a.as_ptr(),
            libc::AT_FDCWD,
            b.as_ptr(),
            libc::RENAME_EXCHANGE,
        )
    };
    r == 0
}

/// What the reads saw while `a` and `b` were exchanged in a loop: (inside, none).
fn race(root: &Path, file: &'static str, a: PathBuf, b: PathBuf) -> (u64, u64) {
    let stop = Arc::new(AtomicBool::new(false));
    let swaps = Arc::new(AtomicU64::new(0));
    let swapper = {
        let (stop, swaps) = (stop.clone(), swaps.clone());
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                assert!(
                    exchange(&a, &b),
                    "renameat2 failed: {}",
                    std::io::Error::last_os_error()
                );
                swaps.fetch_add(1, Ordering::Relaxed);
            }
        })
    };
    // The reads run on their own thread so that a blocked one fails the test.
    let (tx, rx) = mpsc::channel();
    let root = root.to_path_buf();
    let reader = std::thread::spawn(move || {
        let start = Instant::now();
        while start.elapsed() < RACE {
            // A fresh root each time: a root reads each file once.
            let s = SourceRoot::new(&root).expect("root");
            if tx.send(s.read(file).map(|t| t.to_string())).is_err() {
                return;
            }
        }
    });
    let (mut inside, mut none) = (0, 0);
    loop {
        match rx.recv_timeout(HANG) {
            Ok(Some(text)) => {
                assert_eq!(
                    text, INSIDE,
                    "a read returned a file other than the one inside the root"
                );
                inside += 1;
            }
            Ok(None) => none += 1,
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
            Err(mpsc::RecvTimeoutError::Timeout) => panic!("a source read blocked for {HANG:?}"),
        }
    }
    stop.store(true, Ordering::Relaxed);
    reader.join().expect("reader");
    swapper.join().expect("swapper");
    let swaps = swaps.load(Ordering::Relaxed);
    assert!(swaps > 100, "only {swaps} swaps: the race did not run");
    (inside, none)
}

#[test]
fn a_directory_swapped_for_a_symlink_never_leaks_the_outside_file() {
    let d = tempfile::tempdir().expect("tempdir");
    let root = d.path().join("proj");
    let outside = d.path().join("outside");
    std::fs::create_dir_all(root.join("pkg")).expect("mkdir");
    std::fs::create_dir_all(&outside).expect("mkdir");
    std::fs::write(root.join("pkg/train.py"), INSIDE).expect("write");
    std::fs::write(outside.join("train.py"), SECRET).expect("write");
    // `proj/pkg` and the symlink `proj/swap -> ../outside` trade places.
    std::os::unix::fs::symlink(&outside, root.join("swap")).expect("symlink");
    let (inside, none) = race(&root, "pkg/train.py", root.join("pkg"), root.join("swap"));
    // Both states were read: the swap was live while reading.
    assert!(inside > 0 && none > 0, "inside {inside}, refused {none}");
}

#[test]
fn a_file_swapped_for_a_fifo_never_blocks() {
    let d = tempfile::tempdir().expect("tempdir");
    let root = d.path().join("proj");
    std::fs::create_dir_all(&root).expect("mkdir");
    std::fs::write(root.join("train.py"), INSIDE).expect("write");
    let fifo = root.join("fifo.py");
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c(&fifo).as_ptr(), 0o600) }, 0);
    let (inside, none) = race(&root, "train.py", root.join("train.py"), fifo);
    assert!(inside > 0 && none > 0, "inside {inside}, refused {none}");
}

#[test]
fn a_file_swapped_for_a_symlink_out_never_leaks() {
    let d = tempfile::tempdir().expect("tempdir");
    let root = d.path().join("proj");
    std::fs::create_dir_all(&root).expect("mkdir");
    std::fs::write(root.join("train.py"), INSIDE).expect("write");
    std::fs::write(d.path().join("secret.py"), SECRET).expect("write");
    std::os::unix::fs::symlink(d.path().join("secret.py"), root.join("link.py")).expect("symlink");
    let (inside, none) = race(
        &root,
        "train.py",
        root.join("train.py"),
        root.join("link.py"),
    );
    assert!(inside > 0 && none > 0, "inside {inside}, refused {none}");
}

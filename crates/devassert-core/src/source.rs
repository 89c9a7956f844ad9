//! Reading the user's source files named by an untrusted log.
//!
//! A log is often not the user's own (a CI job explaining a contributor's
//! log and posting the result), and its frames name any path it likes
//! (`File "/root/.gitconfig", line 2`). Source is therefore read only from
//! regular `.py` files under one root directory, after symlinks are
//! resolved, each at most [`FILE_CAP`] bytes, text only, and at most
//! [`BUDGET`] bytes in all through one [`SourceRoot`].

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::rc::Rc;

/// The largest source file read (a training script is far smaller).
pub const FILE_CAP: u64 = 256 * 1024;
/// Bytes read in all through one [`SourceRoot`] (one run).
pub const BUDGET: usize = 320 * 1024;

/// The directory source may be read from, what is left of the budget, and
/// the files already read (each is read and counted once, however often
/// the findings and the renderer ask for it).
#[derive(Debug)]
pub struct SourceRoot {
    root: PathBuf,
    left: Cell<usize>,
    read: RefCell<HashMap<PathBuf, Option<Rc<str>>>>,
}

impl SourceRoot {
    /// `None` when `dir` does not resolve to a directory.
    pub fn new(dir: &Path) -> Option<Self> {
        let root = std::fs::canonicalize(dir).ok()?;
        root.is_dir().then(|| SourceRoot {
            root,
            left: Cell::new(BUDGET),
            read: RefCell::new(HashMap::new()),
        })
    }

    /// The resolved root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The text of `file` (as a log names it) when it may be read and the
    /// budget allows it; `None` for anything else (missing, outside the
    /// root, not a regular `.py` file, too big, binary).
    pub fn read(&self, file: &str) -> Option<Rc<str>> {
        let named = Path::new(file);
        if !is_py(named) {
            return None;
        }
        let joined = if named.is_absolute() {
            named.to_path_buf()
        } else {
            self.root.join(named)
        };
        if let Some(done) = self.read.borrow().get(&joined) {
            return done.clone();
        }
        let text = self.open(&joined).and_then(|f| self.take(f));
        self.read.borrow_mut().insert(joined, text.clone());
        text
    }

    /// Open `path` once and check what was opened, never the path before
    /// it: the last component is not followed if it is a symlink
    /// (O_NOFOLLOW), a FIFO or device does not block the open (O_NONBLOCK),
    /// the descriptor must be a regular file, and the path the kernel holds
    /// for the descriptor must lie under the root. A directory above the
    /// file swapped for a symlink between the check and the open is
    /// followed by the open, so only the descriptor can tell
    /// (`tests/source_race.rs`: checking the path again after the open
    /// still leaked, the swap landing between that check and its stat).
    fn open(&self, path: &Path) -> Option<File> {
        let real = std::fs::canonicalize(path).ok()?;
        if !real.starts_with(&self.root) || !is_py(&real) {
            return None;
        }
        let f = open_no_follow(&real)?;
        let meta = f.metadata().ok()?;
        if !meta.is_file() || meta.len() > FILE_CAP {
            return None;
        }
        let inside = match opened_path(&f) {
            Some(p) => p.starts_with(&self.root) && is_py(&p),
            // No descriptor path: the path resolved again must be the file opened.
            None => std::fs::canonicalize(path).ok().is_some_and(|again| {
                again.starts_with(&self.root)
                    && std::fs::metadata(&again).is_ok_and(|now| same_file(&meta, &now))
            }),
        };
        inside.then_some(f)
    }

    /// Read an opened file within the cap and the budget.
    fn take(&self, f: File) -> Option<Rc<str>> {
        let mut bytes = Vec::new();
        f.take(FILE_CAP + 1).read_to_end(&mut bytes).ok()?;
        if bytes.len() as u64 > FILE_CAP || bytes.len() > self.left.get() {
            return None;
        }
        self.left.set(self.left.get() - bytes.len());
        if bytes.contains(&0) {
            return None;
        }
        Some(Rc::from(String::from_utf8_lossy(&bytes)))
    }

    /// Bytes of the budget still unread.
    pub fn budget_left(&self) -> usize {
        self.left.get()
    }
}

#[cfg(unix)]
fn open_no_follow(path: &Path) -> Option<File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .ok()
}

#[cfg(not(unix))]
fn open_no_follow(path: &Path) -> Option<File> {
    // No O_NOFOLLOW: the path was resolved just before, and the identity
    // check after the open still holds.
    File::open(path).ok()
}

/// The path of the file a descriptor holds, as the kernel resolved it at
/// the open (Linux's `/proc/self/fd`); `None` where there is none.
#[cfg(target_os = "linux")]
fn opened_path(f: &File) -> Option<PathBuf> {
    use std::os::fd::AsRawFd;
    std::fs::read_link(format!("/proc/self/fd/{}", f.as_raw_fd())).ok()
}

#[cfg(not(target_os = "linux"))]
fn opened_path(_: &File) -> Option<PathBuf> {
    None
}

#[cfg(unix)]
fn same_file(a: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    a.dev() == b.dev() && a.ino() == b.ino()
}

#[cfg(not(unix))]
fn same_file(a: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    a.len() == b.len() && a.modified().ok() == b.modified().ok()
}

fn is_py(p: &Path) -> bool {
    p.extension().is_some_and(|e| e == "py")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmp(name: &str) -> tempfile::TempDir {
        tempfile::Builder::new()
            .prefix(&format!("devassert-source-{name}-"))
            .tempdir()
            .expect("temp dir")
    }

    #[test]
    fn reads_py_under_root_only() {
        let t = tmp("root");
        let d = t.path();
        let root = d.join("proj");
        std::fs::create_dir_all(root.join("pkg")).expect("mkdir");
        std::fs::write(root.join("pkg/train.py"), "x = 1\n").expect("write");
        std::fs::write(root.join("notes.txt"), "secret\n").expect("write");
        std::fs::write(d.join("outside.py"), "secret = 1\n").expect("write");
        let s = SourceRoot::new(&root).expect("root");
        assert_eq!(s.read("pkg/train.py").as_deref(), Some("x = 1\n"));
        // Read once: asking again costs nothing.
        let left = s.budget_left();
        assert!(s.read("pkg/train.py").is_some());
        assert_eq!(s.budget_left(), left);
        let abs = root.join("pkg/train.py");
        assert!(s.read(&abs.to_string_lossy()).is_some());
        assert_eq!(s.read("notes.txt"), None);
        assert_eq!(s.read("../outside.py"), None);
        assert_eq!(s.read(&d.join("outside.py").to_string_lossy()), None);
        assert_eq!(s.read("/etc/passwd"), None);
        assert_eq!(s.read("missing.py"), None);
    }

    #[cfg(unix)]
    #[test]
    fn symlinks_leaving_the_root_are_not_followed() {
        let t = tmp("link");
        let d = t.path();
        let root = d.join("proj");
        std::fs::create_dir_all(&root).expect("mkdir");
        std::fs::write(d.join("secret.py"), "token = 'x'\n").expect("write");
        std::fs::write(root.join("real.py"), "y = 2\n").expect("write");
        std::os::unix::fs::symlink(d.join("secret.py"), root.join("link.py")).expect("link");
        std::os::unix::fs::symlink(d, root.join("up")).expect("link");
        std::os::unix::fs::symlink(root.join("real.py"), root.join("inside.py")).expect("link");
        let s = SourceRoot::new(&root).expect("root");
        assert_eq!(s.read("link.py"), None);
        assert_eq!(s.read("up/secret.py"), None);
        assert_eq!(s.read("inside.py").as_deref(), Some("y = 2\n"));
    }

    #[test]
    fn size_cap_binary_and_budget() {
        let t = tmp("cap");
        let d = t.path();
        std::fs::write(d.join("big.py"), vec![b'#'; FILE_CAP as usize + 1]).expect("write");
        std::fs::write(d.join("bin.py"), b"a\0b").expect("write");
        let chunk = vec![b'#'; FILE_CAP as usize];
        std::fs::write(d.join("a.py"), &chunk).expect("write");
        std::fs::write(d.join("b.py"), &chunk).expect("write");
        let s = SourceRoot::new(d).expect("root");
        assert_eq!(s.read("big.py"), None);
        assert_eq!(s.read("bin.py"), None);
        assert!(s.read("a.py").is_some());
        // The second whole file would pass the run's budget.
        assert_eq!(s.read("b.py"), None);
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_does_not_block() {
        let t = tmp("fifo");
        let d = t.path();
        let fifo = d.join("pipe.py");
        let c = std::ffi::CString::new(fifo.to_string_lossy().as_bytes()).expect("path");
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let s = SourceRoot::new(d).expect("root");
        assert_eq!(s.read("pipe.py"), None);
    }
}

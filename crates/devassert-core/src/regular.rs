//! Opening an input that must be a regular file, without ever blocking.
//!
//! A plain `open` of a FIFO waits for a writer, forever if none comes (a
//! named pipe where a Megatron `.idx` should be hung `scan`); a device can
//! block or never end. Every input is opened with `O_NONBLOCK` (which does
//! not change how a regular file reads) and checked to be a regular file on
//! the descriptor opened, so nothing can be swapped in between.

use std::fs::{File, FileType, Metadata};
use std::io::{self, Read};
use std::path::Path;

/// Open `path` for reading if it is a regular file (links followed); a FIFO,
/// device, socket or folder is an error naming what it is.
pub fn open(path: &Path) -> io::Result<File> {
    let f = open_nonblocking(path)?;
    let meta = f.metadata()?;
    check(&meta)?;
    Ok(f)
}

/// Read all of `path`, a regular file of at most `cap` bytes; a larger one
/// is refused before anything is read.
pub fn read(path: &Path, cap: u64) -> io::Result<Vec<u8>> {
    let f = open(path)?;
    let len = f.metadata()?.len();
    if len > cap {
        return Err(too_large(len, cap));
    }
    let mut bytes = Vec::with_capacity(len as usize);
    // The file may have grown since: never more than the cap.
    f.take(cap + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > cap {
        return Err(too_large(bytes.len() as u64, cap));
    }
    Ok(bytes)
}

/// Whether `path` names a regular file (links followed), tested without
/// opening it: for the callers that only choose between names.
pub fn is_regular(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file())
}

/// An error for anything that is not a regular file.
pub fn check(meta: &Metadata) -> io::Result<()> {
    if meta.is_file() {
        return Ok(());
    }
    Err(not_regular(&meta.file_type()))
}

/// Why an input of this type is skipped.
pub fn not_regular(t: &FileType) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!(
            "{}, not a regular file: skipped (reading it could block or never end)",
            kind(t)
        ),
    )
}

/// What a file type is, in words.
pub fn kind(t: &FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if t.is_socket() {
            return "a socket";
        }
        if t.is_char_device() {
            return "a character device";
        }
        if t.is_block_device() {
            return "a block device";
        }
    }
    if t.is_dir() {
        return "a folder";
    }
    "not a file"
}

fn too_large(len: u64, cap: u64) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!(
            "{} MiB, over the {} MiB devassert reads of a file of this kind (its memory budget)",
            len.div_ceil(1 << 20),
            cap >> 20
        ),
    )
}

#[cfg(unix)]
fn open_nonblocking(path: &Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
}

#[cfg(not(unix))]
fn open_nonblocking(path: &Path) -> io::Result<File> {
    File::open(path)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn mkfifo(path: &Path) {
        let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).expect("path");
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo");
    }

    #[test]
    fn a_fifo_is_refused_at_once_without_a_writer() {
        let d = tempfile::tempdir().expect("tempdir");
        let p = d.path().join("pipe");
        mkfifo(&p);
        let e = open(&p).expect_err("a FIFO is not a regular file");
        assert!(e.to_string().contains("a FIFO (named pipe)"), "{e}");
        assert!(read(&p, 1 << 20).is_err());
        assert!(!is_regular(&p));
    }

    #[test]
    fn folders_and_devices_are_named() {
        let d = tempfile::tempdir().expect("tempdir");
        let e = open(d.path()).expect_err("a folder");
        assert!(e.to_string().starts_with("a folder"), "{e}");
        let e = open(Path::new("/dev/null")).expect_err("a device");
        assert!(e.to_string().starts_with("a character device"), "{e}");
    }

    #[test]
    fn a_file_over_the_cap_is_refused_before_reading() {
        let d = tempfile::tempdir().expect("tempdir");
        let p = d.path().join("f");
        std::fs::write(&p, vec![b'x'; 3 << 20]).expect("write");
        let e = read(&p, 2 << 20).expect_err("over the cap");
        assert!(e.to_string().contains("over the 2 MiB"), "{e}");
        assert_eq!(read(&p, 4 << 20).expect("under").len(), 3 << 20);
    }
}

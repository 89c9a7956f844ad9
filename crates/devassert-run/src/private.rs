//! Files and folders that hold what the program printed: the user's alone
//! (files 0600, folders 0700) whatever the umask.

use std::fs::{DirBuilder, File, OpenOptions, Permissions};
use std::io;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;

/// Create `path` for writing with mode 0600; an existing file is truncated
/// and keeps the mode its owner gave it. The mode is set at creation (no
/// window in which the file is readable by others) and then checked on the
/// open descriptor: a umask can only take bits away, so a missing bit is set.
///
/// A symbolic link at `path` is refused, never written through: a `--report`
/// or `--log` name that someone else could have made a link (a shared
/// checkout, a CI workspace) would otherwise overwrite whatever file the
/// link names, with the user's rights. Refusing is the careful choice: the
/// user sees why and names the file itself; replacing the link would delete
/// what the user may have put there on purpose (`/dev/stdout` is one).
pub fn create_file(path: &Path) -> io::Result<File> {
    let mut opts = OpenOptions::new();
    opts.write(true).mode(0o600).custom_flags(libc::O_NOFOLLOW);
    let opened = match opts.clone().create_new(true).open(path) {
        Ok(f) => {
            exact_mode(&f, 0o600)?;
            Ok(f)
        }
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => opts.truncate(true).open(path),
        Err(e) => Err(e),
    };
    opened.map_err(|e| {
        if e.raw_os_error() == Some(libc::ELOOP) && is_link(path) {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                "it is a symbolic link, and devassert does not write through one (name the file itself, or remove the link)",
            )
        } else {
            e
        }
    })
}

fn is_link(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
}

/// `create_dir_all` whose new folders are exactly 0700; existing ones are
/// left as they are.
pub fn create_dir_all(path: &Path) -> io::Result<()> {
    if path.is_dir() {
        return Ok(());
    }
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        create_dir_all(parent)?;
    }
    match create_dir(path) {
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists && path.is_dir() => Ok(()),
        other => other,
    }
}

/// Create the folder `path` (not its parents) with mode exactly 0700: set at
/// creation, then restored if the umask took bits away, then checked.
pub fn create_dir(path: &Path) -> io::Result<()> {
    DirBuilder::new().mode(0o700).create(path)?;
    let mode = |p: &Path| std::fs::symlink_metadata(p).map(|m| m.permissions().mode() & 0o7777);
    if mode(path)? != 0o700 {
        std::fs::set_permissions(path, Permissions::from_mode(0o700))?;
    }
    match mode(path)? {
        0o700 => Ok(()),
        m => Err(io::Error::other(format!("made with mode {m:o}, not 0700"))),
    }
}

fn exact_mode(f: &File, mode: u32) -> io::Result<()> {
    if f.metadata()?.permissions().mode() & 0o7777 != mode {
        f.set_permissions(Permissions::from_mode(mode))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    fn mode(p: &Path) -> u32 {
        std::fs::metadata(p).expect("stat").mode() & 0o7777
    }

    // The umask cases run in a child process: tests/run_private.rs.
    #[test]
    fn new_files_are_private_and_existing_ones_keep_their_mode() {
        let d = tempfile::tempdir().expect("tempdir");
        let file = d.path().join("log");
        drop(create_file(&file).expect("create"));
        assert_eq!(mode(&file), 0o600);
        let dir = d.path().join("a/b");
        create_dir_all(&dir).expect("dirs");
        create_dir(&dir.join("run")).expect("dir");
        assert_eq!(mode(&dir.join("run")), 0o700);
        std::fs::write(&file, "old").expect("write");
        std::fs::set_permissions(&file, Permissions::from_mode(0o640)).expect("chmod");
        drop(create_file(&file).expect("reopen"));
        assert_eq!(mode(&file), 0o640);
        assert_eq!(std::fs::read(&file).expect("read").len(), 0);
    }

    #[test]
    fn a_link_is_refused_and_its_target_kept() {
        let d = tempfile::tempdir().expect("tempdir");
        let target = d.path().join("precious");
        std::fs::write(&target, "keep me").expect("write");
        let link = d.path().join("report.json");
        std::os::unix::fs::symlink(&target, &link).expect("symlink");
        let e = create_file(&link).expect_err("a link is refused");
        assert!(e.to_string().contains("symbolic link"), "{e}");
        assert_eq!(std::fs::read_to_string(&target).expect("read"), "keep me");
        // A dangling link creates nothing where it points either.
        let dangling = d.path().join("log");
        std::os::unix::fs::symlink(d.path().join("nowhere"), &dangling).expect("symlink");
        assert!(create_file(&dangling).is_err());
        assert!(!d.path().join("nowhere").exists());
    }
}

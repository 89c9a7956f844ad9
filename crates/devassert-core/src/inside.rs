//! Only what the user pointed at: a symlink found inside a folder the user
//! named is followed only when its target stays inside that folder. Data,
//! model and log folders are walked with it, so a link planted in a dataset
//! (`train.csv -> ~/.git-credentials`) is reported, not read.

use std::io;
use std::path::{Path, PathBuf};

/// The folder symlinks may lead into.
#[derive(Debug, Clone)]
pub struct Inside {
    root: PathBuf,
    /// A Hub repository's `blobs/` where it really is: links into it are
    /// inside even when it is a link to another disk.
    blobs: Option<PathBuf>,
}

impl Inside {
    /// The real path of `dir`. A Hugging Face hub snapshot
    /// (`…/models--org--name/snapshots/<rev>/`, or a folder below it) holds
    /// only symlinks into the repository's `blobs/` (`../../../blobs/…`
    /// from a subfolder): for it, the repository folder is the bound, and
    /// its `blobs/` wherever that really is.
    pub fn new(dir: &Path) -> io::Result<Inside> {
        let real = std::fs::canonicalize(dir)?;
        let hub_repo = real
            .ancestors()
            .find(|a| {
                a.parent()
                    .is_some_and(|p| p.file_name().is_some_and(|n| n == "snapshots"))
            })
            .and_then(Path::parent)
            .and_then(Path::parent)
            .filter(|repo| repo.join("blobs").is_dir());
        Ok(Inside {
            blobs: hub_repo.and_then(|r| std::fs::canonicalize(r.join("blobs")).ok()),
            root: hub_repo.map_or(real.clone(), Path::to_path_buf),
        })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    fn holds(&self, real: &Path) -> bool {
        real.starts_with(&self.root) || self.blobs.as_ref().is_some_and(|b| real.starts_with(b))
    }

    /// Whether the entry `path` of the walk may be followed: `Ok` when it is
    /// not a symlink, or a symlink whose target resolves inside the root;
    /// otherwise why it is skipped (outside, dangling, a loop, unreadable).
    pub fn check(&self, path: &Path) -> Result<(), String> {
        let meta = std::fs::symlink_metadata(path).map_err(|e| format!("cannot read it: {e}"))?;
        if !meta.file_type().is_symlink() {
            return Ok(());
        }
        match std::fs::canonicalize(path) {
            Ok(real) if self.holds(&real) => Ok(()),
            Ok(real) => Err(format!(
                "a symlink to {}, outside {}: not followed",
                real.display(),
                self.root.display()
            )),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                Err("a dangling symlink: skipped".into())
            }
            // ELOOP has no stable ErrorKind.
            Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
                Err("a symlink loop: skipped".into())
            }
            Err(e) => Err(format!("cannot resolve the symlink: {e}")),
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn links_inside_pass_and_the_rest_say_why() {
        let d = tempfile::tempdir().expect("tempdir");
        let base = d.path().canonicalize().expect("canonical");
        let data = base.join("data");
        std::fs::create_dir_all(data.join("sub")).expect("mkdir");
        std::fs::write(base.join("secret.csv"), "token\n").expect("write");
        std::fs::write(data.join("sub/a.csv"), "x\n").expect("write");
        symlink(data.join("sub/a.csv"), data.join("in.csv")).expect("link");
        symlink(base.join("secret.csv"), data.join("out.csv")).expect("link");
        symlink(data.join("nowhere"), data.join("dangling.csv")).expect("link");
        symlink(data.join("loop2"), data.join("loop1")).expect("link");
        symlink(data.join("loop1"), data.join("loop2")).expect("link");
        let inside = Inside::new(&data).expect("inside");
        assert_eq!(inside.check(&data.join("sub/a.csv")), Ok(()));
        assert_eq!(inside.check(&data.join("in.csv")), Ok(()));
        assert!(inside
            .check(&data.join("out.csv"))
            .is_err_and(|e| e.contains("outside")));
        assert!(inside
            .check(&data.join("dangling.csv"))
            .is_err_and(|e| e.contains("dangling")));
        assert!(inside
            .check(&data.join("loop1"))
            .is_err_and(|e| e.contains("loop")));
    }

    #[test]
    fn a_hub_snapshot_may_link_into_its_blobs() {
        let d = tempfile::tempdir().expect("tempdir");
        let repo = d
            .path()
            .canonicalize()
            .expect("canonical")
            .join("models--org--m");
        let snap = repo.join("snapshots/abc");
        std::fs::create_dir_all(&snap).expect("mkdir");
        std::fs::create_dir_all(repo.join("blobs")).expect("mkdir");
        std::fs::write(repo.join("blobs/f00"), "{}").expect("write");
        symlink("../../blobs/f00", snap.join("config.json")).expect("link");
        let inside = Inside::new(&snap).expect("inside");
        assert_eq!(inside.root(), repo.as_path());
        assert_eq!(inside.check(&snap.join("config.json")), Ok(()));
    }

    #[test]
    fn a_snapshot_subfolder_and_blobs_on_another_disk() {
        let d = tempfile::tempdir().expect("tempdir");
        let base = d.path().canonicalize().expect("canonical");
        let repo = base.join("cache/models--org--m");
        let sub = repo.join("snapshots/abc/unet");
        std::fs::create_dir_all(&sub).expect("mkdir");
        // blobs/ is a link to a folder elsewhere ("another disk").
        std::fs::create_dir_all(base.join("disk2/blobs")).expect("mkdir");
        std::fs::write(base.join("disk2/blobs/f00"), "{}").expect("write");
        std::fs::write(base.join("disk2/secret"), "x").expect("write");
        symlink(base.join("disk2/blobs"), repo.join("blobs")).expect("link");
        symlink("../../../blobs/f00", sub.join("config.json")).expect("link");
        symlink(base.join("disk2/secret"), sub.join("other.json")).expect("link");
        let inside = Inside::new(&sub).expect("inside");
        assert_eq!(inside.root(), repo.as_path());
        assert_eq!(inside.check(&sub.join("config.json")), Ok(()));
        assert!(inside
            .check(&sub.join("other.json"))
            .is_err_and(|e| e.contains("outside")));
    }
}

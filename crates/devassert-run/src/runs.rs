//! Where runs live: one folder per run, `<runs>/<UTC timestamp>-<pid>`, under
//! `$DEVASSERT_RUNS_DIR`, else `$XDG_CACHE_HOME/devassert/runs`, else
//! `~/.cache/devassert/runs`. Only the newest [`KEEP`] are kept; a folder
//! whose name is not a run's is never touched.

use crate::error::RunError;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

/// How many run folders are kept (the new one included).
pub const KEEP: usize = 20;

/// The folder that holds the run folders.
pub fn runs_root() -> Result<PathBuf, RunError> {
    let var = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    if let Some(dir) = var("DEVASSERT_RUNS_DIR") {
        return Ok(dir);
    }
    // The XDG spec ignores a relative XDG_CACHE_HOME.
    let cache = var("XDG_CACHE_HOME")
        .filter(|p| p.is_absolute())
        .or_else(|| var("HOME").map(|h| h.join(".cache")));
    match cache {
        Some(c) => Ok(c.join("devassert").join("runs")),
        // No home (a bare container): a private per-user folder in the temp dir.
        None => temporary_runs_root(),
    }
}

/// The folder of runs in the private temporary folder: where runs go
/// without a home, or when the usual folder cannot be written.
pub fn temporary_runs_root() -> Result<PathBuf, RunError> {
    Ok(private_temp_dir()?.join("runs"))
}

/// `$TMPDIR/devassert-<uid>`, made with mode 0700, or checked to be a real
/// directory of ours that nobody else can write: in a shared temp dir another
/// user could otherwise swap the guard this run puts on PYTHONPATH.
fn private_temp_dir() -> Result<PathBuf, RunError> {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    // SAFETY: getuid cannot fail.
    let uid = unsafe { libc::getuid() };
    let dir = std::env::temp_dir().join(format!("devassert-{uid}"));
    let err = |source| RunError::PrivateDir {
        path: dir.display().to_string(),
        source,
    };
    match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
        Ok(()) => return Ok(dir),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(err(e)),
    }
    let meta = std::fs::symlink_metadata(&dir).map_err(err)?;
    if !meta.is_dir() || meta.uid() != uid || meta.permissions().mode() & 0o022 != 0 {
        return Err(err(std::io::Error::other(
            "it exists but is not a private directory of this user (set DEVASSERT_RUNS_DIR)",
        )));
    }
    Ok(dir)
}

/// Make this run's folder (mode 0700: the guard's reports are the user's) and
/// prune the oldest beyond [`KEEP`].
pub fn create_run_dir(root: &Path) -> Result<PathBuf, RunError> {
    let err = |path: &Path| {
        let path = path.display().to_string();
        move |source| RunError::PrivateDir { path, source }
    };
    crate::private::create_dir_all(root).map_err(err(root))?;
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let base = format!("{}-{}", utc_stamp(secs), std::process::id());
    let mut n = 1;
    let dir = loop {
        let name = if n == 1 {
            base.clone()
        } else {
            format!("{base}.{n}")
        };
        let dir = root.join(name);
        match crate::private::create_dir(&dir) {
            Ok(()) => break dir,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && n < 100 => n += 1,
            Err(e) => return Err(err(&dir)(e)),
        }
    };
    prune(root, KEEP, &dir);
    Ok(dir)
}

/// Remove the oldest run folders so that at most `keep` remain; `current` is
/// never removed. Failures are not errors: pruning is housekeeping.
pub fn prune(root: &Path, keep: usize, current: &Path) {
    let Ok(entries) = std::fs::read_dir(root) else {
        return;
    };
    let mut runs: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(is_run_name)
        })
        .collect();
    if runs.len() <= keep {
        return;
    }
    // The timestamp leads the name: name order is age order.
    runs.sort();
    let excess = runs.len() - keep;
    for old in runs
        .iter()
        .filter(|p| p.as_path() != current && !running(p))
        .take(excess)
    {
        let _ = std::fs::remove_dir_all(old);
    }
}

/// Whether the devassert that made this folder may still be running (its pid
/// exists): a long run is not pruned under the feet of its guards.
fn running(dir: &Path) -> bool {
    let pid = dir
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.get(17..))
        .map(|rest| rest.split('.').next().unwrap_or(rest))
        .and_then(|p| p.parse::<libc::pid_t>().ok());
    match pid {
        // SAFETY: signal 0 only checks that the process exists.
        Some(pid) if pid > 0 => unsafe {
            libc::kill(pid, 0) == 0
                || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
        },
        _ => false,
    }
}

/// `YYYYMMDDTHHMMSSZ-<pid>`, optionally `.<n>`.
fn is_run_name(name: &str) -> bool {
    let b = name.as_bytes();
    let digits =
        |r: std::ops::Range<usize>| b.get(r).is_some_and(|s| s.iter().all(u8::is_ascii_digit));
    if b.len() < 18
        || !digits(0..8)
        || b[8] != b'T'
        || !digits(9..15)
        || b[15] != b'Z'
        || b[16] != b'-'
    {
        return false;
    }
    let rest = &name[17..];
    let (pid, n) = rest.split_once('.').unwrap_or((rest, "1"));
    let num = |s: &str| !s.is_empty() && s.bytes().all(|c| c.is_ascii_digit());
    num(pid) && num(n)
}

/// Seconds since the epoch as `YYYYMMDDTHHMMSSZ` (UTC; the proleptic
/// Gregorian calendar, days to a civil date after H. Hinnant).
fn utc_stamp(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}{month:02}{day:02}T{:02}{:02}{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_are_utc_civil_times() {
        assert_eq!(utc_stamp(0), "19700101T000000Z");
        assert_eq!(utc_stamp(951_782_400), "20000229T000000Z");
        assert_eq!(utc_stamp(1_796_402_212), "20261204T163652Z");
    }

    #[test]
    fn run_names_are_recognised_and_nothing_else() {
        assert!(is_run_name("20261204T163652Z-4242"));
        assert!(is_run_name("20261204T163652Z-4242.3"));
        for other in [
            "notes",
            "20261204T163652Z-",
            "2026120xT163652Z-1",
            "20261204T163652Z-1.x",
            "",
        ] {
            assert!(!is_run_name(other), "{other}");
        }
    }

    #[test]
    fn the_oldest_runs_are_pruned_and_other_folders_kept() {
        let root = tempfile::tempdir().unwrap();
        for i in 0..25 {
            std::fs::create_dir(root.path().join(format!("20250101T0000{i:02}Z-999999999")))
                .unwrap();
        }
        std::fs::create_dir(root.path().join("mine")).unwrap();
        let new = create_run_dir(root.path()).unwrap();
        let names: Vec<String> = std::fs::read_dir(root.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names.len(), KEEP + 1, "{names:?}");
        assert!(names.contains(&"mine".to_string()));
        assert!(new.is_dir());
        // The 6 oldest went: 25 + the new one - 20.
        for i in 0..6 {
            assert!(!root
                .path()
                .join(format!("20250101T0000{i:02}Z-999999999"))
                .exists());
        }
        assert!(root.path().join("20250101T000006Z-999999999").exists());
    }

    #[test]
    fn the_current_run_is_never_pruned() {
        let root = tempfile::tempdir().unwrap();
        let current = root.path().join("19990101T000000Z-999999998");
        std::fs::create_dir(&current).unwrap();
        std::fs::create_dir(root.path().join("20250101T000000Z-999999999")).unwrap();
        prune(root.path(), 1, &current);
        assert!(current.exists());
        assert!(!root.path().join("20250101T000000Z-999999999").exists());
    }

    #[test]
    fn a_run_still_going_is_not_pruned() {
        let root = tempfile::tempdir().unwrap();
        let live = root
            .path()
            .join(format!("19990101T000000Z-{}", std::process::id()));
        std::fs::create_dir(&live).unwrap();
        let current = root.path().join("20250101T000000Z-999999999");
        std::fs::create_dir(&current).unwrap();
        prune(root.path(), 1, &current);
        assert!(live.exists() && current.exists());
    }
}

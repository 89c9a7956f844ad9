//! Walking a folder the user named, for explain's logs and for Inductor's
//! generated code alike: entries in sorted order, never out of the folder
//! ([`Inside`]), a linked folder read where it really is (never twice, no
//! loops), every entry that cannot be read said, and the walk bounded.

use crate::error::Skipped;
use devassert_core::inside::Inside;
use std::path::{Path, PathBuf};

/// What a walk takes in, and where it stops.
pub(crate) struct Walk {
    /// Entries whose name starts with `.` are passed over.
    pub skip_hidden: bool,
    /// Folders deeper than this are not entered (the walk is truncated).
    pub max_depth: usize,
    /// Past this many entries the walk stops (truncated).
    pub max_entries: usize,
}

/// The walk's files, and whether a bound cut it short.
pub(crate) struct Found {
    pub files: Vec<PathBuf>,
    pub truncated: bool,
}

impl Walk {
    /// The regular files under `dir` (a file linked from inside is read at
    /// its own path) that `keep` takes: `Ok(true)` keeps one, `Ok(false)`
    /// passes over it quietly (not something this walk reads), `Err(why)`
    /// skips it with the reason said.
    pub fn files(
        &self,
        inside: &Inside,
        dir: &Path,
        keep: &mut dyn FnMut(&Path) -> Result<bool, String>,
        skipped: &mut Vec<Skipped>,
    ) -> Found {
        let mut state = State {
            walk: self,
            inside,
            keep,
            skipped,
            found: Found {
                files: Vec::new(),
                truncated: false,
            },
            entries: 0,
        };
        state.walk(dir, 0);
        state.found
    }
}

struct State<'a> {
    walk: &'a Walk,
    inside: &'a Inside,
    keep: &'a mut dyn FnMut(&Path) -> Result<bool, String>,
    skipped: &'a mut Vec<Skipped>,
    found: Found,
    entries: usize,
}

impl State<'_> {
    fn skip(&mut self, path: &Path, why: String) {
        self.skipped.push(Skipped {
            path: path.to_path_buf(),
            why,
        });
    }

    /// The walk stops at its bound of entries: said once, at the folder
    /// where it stopped.
    fn stop(&mut self, dir: &Path) {
        if self.entries <= self.walk.max_entries {
            self.entries = self.walk.max_entries.saturating_add(1);
        }
        if !self.found.truncated {
            let why = format!(
                "more than {} entries: the walk stopped in this folder, and what it had not reached was not read",
                self.walk.max_entries
            );
            self.skip(dir, why);
        }
        self.found.truncated = true;
    }

    fn walk(&mut self, dir: &Path, depth: usize) {
        if self.entries > self.walk.max_entries {
            return;
        }
        if depth > self.walk.max_depth {
            let why = format!(
                "more than {} folders deep: not entered",
                self.walk.max_depth
            );
            self.skip(dir, why);
            self.found.truncated = true;
            return;
        }
        let rd = match std::fs::read_dir(dir) {
            Ok(rd) => rd,
            Err(e) => return self.skip(dir, format!("cannot read the folder: {e}")),
        };
        // At most the entries left to the bound (and one to know it is
        // passed) are held: a folder of millions is not listed whole.
        let room =
            (self.walk.max_entries - self.entries.min(self.walk.max_entries)).saturating_add(1);
        let mut entries: Vec<PathBuf> = Vec::new();
        for e in rd {
            if entries.len() >= room {
                break;
            }
            match e {
                Ok(e)
                    if self.walk.skip_hidden
                        && e.file_name().to_string_lossy().starts_with('.') => {}
                Ok(e) => entries.push(e.path()),
                Err(e) => self.skip(dir, format!("cannot read an entry: {e}")),
            }
        }
        entries.sort();
        for p in entries {
            if self.entries >= self.walk.max_entries {
                return self.stop(dir);
            }
            self.entries += 1;
            let link = match std::fs::symlink_metadata(&p) {
                Ok(m) => m.file_type().is_symlink(),
                Err(e) => {
                    self.skip(&p, format!("cannot read it: {e}"));
                    continue;
                }
            };
            if let Err(why) = self.inside.check(&p) {
                self.skip(&p, why);
                continue;
            }
            let meta = match std::fs::metadata(&p) {
                Ok(m) => m,
                Err(e) => {
                    self.skip(&p, format!("cannot read it: {e}"));
                    continue;
                }
            };
            if meta.is_dir() {
                // A folder linked from inside is read where it really is: a
                // link never makes the walk read a file twice or loop.
                if !link {
                    self.walk(&p, depth + 1);
                }
            } else if meta.is_file() {
                match (self.keep)(&p) {
                    Ok(true) => self.found.files.push(p),
                    Ok(false) => {}
                    Err(why) => self.skip(&p, why),
                }
            } else {
                // A FIFO, socket or device: never opened (it could block), and said.
                let why = devassert_core::regular::not_regular(&meta.file_type());
                self.skip(&p, why.to_string());
            }
        }
    }
}

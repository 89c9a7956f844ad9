//! The catalog's literal walk over a line, remembered for lines that differ
//! only in their numbers. A log repeats a message with other numbers in it
//! (`JSONDecodeError: Extra data: line 1 column 345 (char 678)`, once per
//! handled traceback), and the overlapping walk of the catalog's literals
//! was the costliest step of reading such a line. A literal without an
//! ASCII digit matches only between digits, so the sets such literals meet
//! are the same for every line that is the same once each run of digits is
//! one `0`: those are kept under that key; the literals with a digit (`-1`,
//! `Target 255 …`) and those at the line's end are still looked for in the
//! line itself, and the regexes still run on it.

use super::Prefilter;
use std::collections::{HashMap, HashSet};

/// Lines longer than this are walked every time (a key is a copy).
const MAX_KEY: usize = 512;
/// Keys kept at most (about 0.5 MiB), and keys seen once, by hash.
const MAX_KNOWN: usize = 1024;
const MAX_SEEN: usize = 8192;

/// What one reader remembers (see the module).
#[derive(Default)]
pub struct SetsMemo {
    /// Key → the sets its digit-free literals meet (the bitmap of `sets_seen`).
    known: HashMap<Box<[u8]>, Box<[u64]>, ahash::RandomState>,
    /// Keys seen once: a key is kept when seen the second time, so that
    /// lines whose words never repeat cost one hash.
    seen: HashSet<u64, ahash::RandomState>,
    key: Vec<u8>,
}

impl SetsMemo {
    /// What `Prefilter::sets_seen` gives for `hay`.
    pub(super) fn sets_seen(&mut self, pre: &Prefilter, hay: &[u8]) -> Option<Vec<u64>> {
        if hay.len() > MAX_KEY {
            return pre.sets_seen(hay);
        }
        self.key.clear();
        let mut digits = false;
        for &b in hay {
            let d = b.is_ascii_digit();
            if !(d && digits) {
                self.key.push(if d { b'0' } else { b });
            }
            digits = d;
        }
        let mut seen = vec![0u64; pre.sets.div_ceil(64)];
        let mut any = match self.known.get(self.key.as_slice()) {
            Some(free) => {
                seen.copy_from_slice(free);
                free.iter().any(|&w| w != 0)
            }
            None => {
                let any = pre.digit_free_sets(hay, &mut seen);
                let h = self.seen.hasher().hash_one(&self.key);
                if self.seen.contains(&h) {
                    if self.known.len() >= MAX_KNOWN {
                        self.known.clear();
                    }
                    self.known
                        .insert(self.key.as_slice().into(), seen.as_slice().into());
                } else {
                    if self.seen.len() >= MAX_SEEN {
                        self.seen.clear();
                    }
                    self.seen.insert(h);
                }
                any
            }
        };
        any |= pre.digit_sets(hay, &mut seen);
        any.then_some(seen)
    }
}

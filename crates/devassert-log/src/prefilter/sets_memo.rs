//! The catalog's literal walk over a line, remembered for lines that differ
//! only in their numbers. A log repeats a message with other numbers in it
//! (`JSONDecodeError: Extra data: line 1 column 345 (char 678)`, once per
//! handled traceback), and the overlapping walk of the catalog's literals
//! was the costliest step of reading such a line. A literal without an
//! ASCII digit matches only between digits, so the sets such literals meet
//! are the same for every line that is the same once each run of digits is
//! one `0`: those are kept under that key. The literals with a digit (`-1`,
//! `Target 255 …`) and those at the line's end are still looked for in the
//! line itself (by the prefilter), and the regexes still run on it.

use std::collections::{HashMap, HashSet};

/// Lines longer than this are walked every time (a key is a copy).
const MAX_KEY: usize = 512;
/// Keys kept at most (about 0.5 MiB), and keys seen once, by hash.
const MAX_KNOWN: usize = 1024;
const MAX_SEEN: usize = 8192;

/// What one reader remembers (see the module).
#[derive(Default)]
pub struct SetsMemo {
    /// Key → the sets its digit-free literals meet (a bitmap).
    known: HashMap<Box<[u8]>, Box<[u64]>, ahash::RandomState>,
    /// Keys seen once: a key is kept when seen the second time, so that
    /// lines whose words never repeat cost one hash.
    seen: HashSet<u64, ahash::RandomState>,
    key: Vec<u8>,
}

impl SetsMemo {
    /// Marks in `seen` (all clear) the sets the digit-free literals of
    /// `hay` meet, as `walk` does (which marks them and says whether there
    /// were any), from what is kept for `hay`'s key when there is.
    pub(super) fn digit_free(
        &mut self,
        hay: &[u8],
        seen: &mut [u64],
        walk: impl FnOnce(&[u8], &mut [u64]) -> bool,
    ) -> bool {
        if hay.len() > MAX_KEY {
            return walk(hay, seen);
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
        if let Some(free) = self.known.get(self.key.as_slice()) {
            seen.copy_from_slice(free);
            return free.iter().any(|&w| w != 0);
        }
        let any = walk(hay, seen);
        let h = self.seen.hasher().hash_one(&self.key);
        if self.seen.contains(&h) {
            if self.known.len() >= MAX_KNOWN {
                self.known.clear();
            }
            self.known
                .insert(self.key.as_slice().into(), (&*seen).into());
        } else {
            if self.seen.len() >= MAX_SEEN {
                self.seen.clear();
            }
            self.seen.insert(h);
        }
        any
    }
}

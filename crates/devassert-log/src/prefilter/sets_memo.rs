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

use std::cell::RefCell;
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
    /// The key last looked up.
    key: Vec<u8>,
    /// The sets met by the line last looked up, as the walks mark them
    /// (kept to reuse its allocation: a bitmap was allocated and freed for
    /// every line asked).
    sets: Vec<u64>,
}

/// What the memo holds for a line.
pub(super) enum Memo {
    /// Its key was seen once or never (or the line is too long): walk it whole.
    Once,
    /// Its key's second sight: walk its digit-free literals and `keep` them.
    Keep,
    /// The sets its digit-free literals meet are in `sets`; whether any.
    Known(bool),
}

impl SetsMemo {
    /// What is kept for `hay`'s key (each run of digits one `0`); `sets`
    /// is then `words` long, empty (no set met) or, when `Known`, the sets
    /// kept.
    pub(super) fn look(&mut self, hay: &[u8], words: usize) -> Memo {
        self.sets.clear();
        self.sets.resize(words, 0);
        if hay.len() > MAX_KEY {
            return Memo::Once;
        }
        crate::text::shape_into(hay, &mut self.key);
        if let Some(free) = self.known.get(self.key.as_slice()) {
            self.sets.copy_from_slice(free);
            return Memo::Known(free.iter().any(|&w| w != 0));
        }
        let h = self.seen.hasher().hash_one(&self.key);
        if self.seen.contains(&h) {
            return Memo::Keep;
        }
        if self.seen.len() >= MAX_SEEN {
            self.seen.clear();
        }
        self.seen.insert(h);
        Memo::Once
    }

    /// Keeps `sets` as the sets of the digit-free literals of the line last
    /// looked up (after `Memo::Keep`, once they are walked).
    pub(super) fn keep(&mut self) {
        if self.known.len() >= MAX_KNOWN {
            self.known.clear();
        }
        self.known
            .insert(self.key.as_slice().into(), self.sets.as_slice().into());
    }

    /// The sets of the line last looked up, for the walks to mark.
    pub(super) fn sets_mut(&mut self) -> &mut [u64] {
        &mut self.sets
    }

    pub(super) fn sets(&self) -> &[u64] {
        &self.sets
    }
}

thread_local! {
    /// The memo of the search's check on this thread (`line_matters`),
    /// and the prefilter whose sets it holds.
    static THREAD_MEMO: RefCell<(u64, SetsMemo)> = RefCell::default();
}

/// `f` with this thread's memo for the prefilter `owner` (emptied when it
/// held another's).
pub(super) fn with_thread_memo<R>(owner: u64, f: impl FnOnce(&mut SetsMemo) -> R) -> R {
    THREAD_MEMO.with(|m| {
        let mut m = m.borrow_mut();
        if m.0 != owner {
            *m = (owner, SetsMemo::default());
        }
        f(&mut m.1)
    })
}

//! Lines known to say nothing to the checks that cost the most per line
//! (the host-error table, the catalog's evidence): a log repeats its lines
//! (the frames of a traceback it logged and went on from, thousands of
//! times), and those checks are functions of the line's text whose "nothing
//! found" stays so (the evidence a line could add only shrinks as hits are
//! kept). A repeat is looked up instead of searched again. The same set
//! keeps the rows known to hold no device marker. A text is kept when it
//! is said the second time (the first time, its hash is noted): most lines
//! that never repeat (an exception's message with its numbers) then cost a
//! hash, not a copy into a set that they would only churn.

use std::collections::HashSet;

/// Texts kept at most, each at most [`MAX_TEXT`] bytes: about 0.5 MiB.
const MAX_LINES: usize = 1024;
const MAX_TEXT: usize = 512;
/// Texts said once, by hash, before they are kept.
const MAX_ONCE: usize = 8192;

#[derive(Default)]
pub(super) struct QuietLines {
    seen: HashSet<Box<str>, ahash::RandomState>,
    once: HashSet<u64, ahash::RandomState>,
}

impl QuietLines {
    pub(super) fn contains(&self, text: &str) -> bool {
        !self.seen.is_empty() && text.len() <= MAX_TEXT && self.seen.contains(text)
    }

    /// `text` said nothing to those checks. Full, the set starts again:
    /// lines that repeat come back into it at once.
    pub(super) fn insert(&mut self, text: &str) {
        if text.len() > MAX_TEXT {
            return;
        }
        let h = self.once.hasher().hash_one(text);
        if self.once.len() >= MAX_ONCE {
            self.once.clear();
        }
        if self.once.insert(h) {
            return;
        }
        if self.seen.len() >= MAX_LINES {
            self.seen.clear();
        }
        self.seen.insert(text.into());
    }
}

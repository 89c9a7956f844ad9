//! Traceback rows that only the builder reads, known by their shape: a log
//! that logs a handled traceback per sample ends each with an exception
//! line that repeats but for its numbers (`JSONDecodeError: Extra data:
//! line 1 column 424 (char 686)`), so the known-row memo (`memo`), which
//! keeps rows byte for byte, never knows it, and every one was read in
//! full (about 5,900 instructions, the most of such a log).
//!
//! A row's shape is `text::shape_into`'s (each run of digits one `0`). A
//! shape is known when a row of it was, read while only tracebacks were
//! open, a row that only the builder reads (`memo::builder_only`), and one
//! whose every check of that kind reads no digit, so that another row of
//! its shape gets the same answers: one segment that `clean` leaves whole
//! (no carriage return, `^`, escape or `[`: no `^M`, escape sequence,
//! coordinates or cell place), no prefix, not indented, not a frame, no
//! error code the host-error table reads (`errors::reads_codes`: elsewhere
//! its answer is the same whatever the numbers), no
//! `CUDA_LAUNCH_BLOCKING`-like word, no `.cu`, and no catalog literal
//! without a digit. Each check looks only for literals without a digit (or
//! at spaces, backticks and `>`), which a row holds exactly when its shape
//! does. What may read a digit's value is asked of
//! each row again: its prefixes (none, and the rank NCCL's tag names), its
//! notebook place, and the catalog's literals with a digit or at its end;
//! the builder reads the row itself. A row of a known shape is then read
//! as `take_known_row` reads a known row.

use super::memo::builder_only;
use super::memo_rows::MAX_ROW;
use super::state::Reader;
use crate::clean;
use crate::device_line::{searcher, Searcher};
use crate::prefilter::Prefilter;
use std::collections::{HashMap, HashSet};

/// Shapes kept at most, each at most `MAX_ROW` bytes: about 0.5 MiB.
const MAX_SHAPES: usize = 1024;
/// Shapes seen once, by hash, before they are looked at.
const MAX_SEEN: usize = 8192;

#[derive(Default)]
pub(super) struct ShapeRows {
    /// Shapes looked at: whether rows of each are read by shape.
    known: HashMap<Box<[u8]>, bool, ahash::RandomState>,
    seen: HashSet<u64, ahash::RandomState>,
    /// The shape last made (kept to reuse its allocation).
    shape: Vec<u8>,
    /// The catalog's sets a row met (kept to reuse its allocation).
    sets: Vec<u64>,
    /// No row is read by shape: the full path, for the tests to compare.
    #[cfg(test)]
    pub(super) off: bool,
}

impl Reader {
    /// Whether `raw` was read as a row of a known shape (see the module):
    /// what `take_row` would have done with it. Asked after
    /// `take_known_row` found no known row.
    pub(super) fn take_shape_row(&mut self, raw: &[u8]) -> bool {
        #[cfg(test)]
        if self.shape_rows.off {
            return false;
        }
        if !self.only_tracebacks_open() || raw.len() > MAX_ROW || self.pre.looks_at_everything() {
            return false;
        }
        let Ok(cur) = std::str::from_utf8(raw) else {
            return false;
        };
        let memo = &mut self.shape_rows;
        crate::text::shape_into(raw, &mut memo.shape);
        match memo.known.get(memo.shape.as_slice()) {
            Some(true) => {}
            Some(false) => return false,
            None => {
                let h = memo.seen.hasher().hash_one(&memo.shape);
                if memo.seen.insert(h) {
                    if memo.seen.len() > MAX_SEEN {
                        memo.seen.clear();
                    }
                    return false;
                }
                // Its second sight: looked at (and read as any row).
                let by_shape = by_shape(self.pre, cur, &mut self.traceback_rows.matched);
                if memo.known.len() >= MAX_SHAPES {
                    memo.known.clear();
                }
                memo.known.insert(memo.shape.as_slice().into(), by_shape);
                return false;
            }
        }
        // What may read a digit's value, asked of this row.
        // (Its shape's row had no space at either end: nor has it, so it
        // is its own trimmed text.)
        let (body, prefix) = clean::strip_prefixes(cur);
        if body.len() != cur.len()
            || super::notebook::notebook_place(cur).is_some()
            || self.pre.digit_or_end_sets_met(raw, &mut memo.sets)
        {
            return false;
        }
        // What `take_known_row` does with a known row (this one's text is
        // the row itself), the builder stepping the row as `text_line` has it.
        self.lines.count_width(cur.len());
        self.lines.line_no += 1;
        #[cfg(feature = "test-hooks")]
        crate::crash::injected_panic(raw);
        self.lines.last_prefix = (prefix.rank, prefix.time);
        self.traceback_line(cur, prefix.rank.or(self.lines.input_rank));
        true
    }
}

/// Whether rows of `cur`'s shape are read by shape (see the module): `cur`
/// is a row only the builder reads, and no check of that reads a digit.
fn by_shape(pre: &Prefilter, cur: &str, matched: &mut Vec<crate::prefilter::Target>) -> bool {
    static CU: Searcher = searcher!(b".cu");
    static BLOCKING: Searcher = searcher!(b"CUDA_LAUNCH_BLOCKING");
    static SERIALIZE: Searcher = searcher!(b"AMD_SERIALIZE_KERNEL");
    let b = cur.as_bytes();
    let t = cur.trim();
    let whole = matches!(clean::readable(cur).as_slice(), [(text, _)] if text == cur);
    whole
        && !b.iter().any(|c| matches!(c, b'\r' | b'^' | 0x1b | b'['))
        && t.len() == cur.trim_end().len()
        && !t.starts_with("File \"")
        && !(pre.has_trigger(t) && crate::errors::reads_codes(t))
        && BLOCKING.find(b).is_none()
        && SERIALIZE.find(b).is_none()
        && CU.find(b).is_none()
        && !pre.digit_free_sets_met(t.as_bytes())
        && builder_only(pre, b, matched).is_some()
}

#[cfg(test)]
mod tests;

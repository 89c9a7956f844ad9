//! Rows that only the traceback builder reads: a log that logs handled
//! tracebacks and goes on repeats their rows (header, frames and code
//! lines, the same thousands of times), and each was cleaned, split into
//! segments, stripped of prefixes, checked for markers, cuts, DSA keys and
//! notebook places, and searched by the host-error table and the catalog
//! before the builder saw it. Those steps are functions of the row alone
//! (and a "nothing found" of the catalog stays so: the evidence still
//! wanted only shrinks); when, read while a traceback is open and nothing
//! else is, all of them come out as "nothing", the row is kept here with
//! its cleaned text, and its repeats go to the builder at once. A row is
//! looked at when seen the second time, so that rows that never repeat
//! (exception messages) cost one hash.

use super::memo_rows::{BuilderRow, Known, KnownRow, MAX_ROW, MAX_ROWS, MAX_SEEN};
use super::state::Reader;
use crate::clean;
use crate::device_line::{self, searcher, Searcher};
use crate::errors;
use crate::prefilter::{Prefilter, Target};
use crate::traceback::RowStep;
use crate::unwrap;
use std::rc::Rc;

impl Reader {
    /// Whether the row was read as a known traceback row (see the module):
    /// what `take_row`, `take_line`, `take_piece`, `read_line` and
    /// `text_line` would have done with it; else whether it was read as a
    /// row of a known shape (see `shape_rows`; `rest`: the bytes after the
    /// row's `\n`, where known). Asked once per row, before `take_row` (a
    /// row is counted as seen when asked).
    pub(super) fn take_known_row(&mut self, raw: &[u8], rest: Option<&[u8]>) -> bool {
        let Some(at) = self.known_index(raw) else {
            // Read otherwise: a block being recorded ends before it (see `block`).
            self.end_recording();
            return self.take_shape_row(raw, rest);
        };
        let Some(k) = self.traceback_rows.rows.get(at).map(|r| &r.known) else {
            return false;
        };
        let (width, rank, time, row) = (k.width, k.rank, k.time, Rc::clone(&k.row));
        // A header ends the block being recorded before it is counted and
        // steps, and may start one.
        let header = row.step.is_header();
        if header {
            self.end_recording();
        }
        self.lines.count_width(width);
        self.lines.line_no += 1;
        #[cfg(feature = "test-hooks")]
        crate::crash::injected_panic(raw);
        self.lines.last_prefix = (rank, time);
        self.traceback_line_known(&row.text, rank.or(self.lines.input_rank), Some(&row.step));
        self.record_known_row(raw, at, header);
        true
    }

    /// The known row `raw` is (its index in `TracebackRows::rows`), as
    /// `take_known_row` asks; a row seen the second time that only the
    /// builder reads becomes one for its next repeats.
    fn known_index(&mut self, raw: &[u8]) -> Option<usize> {
        if !self.only_tracebacks_open() || raw.len() > MAX_ROW {
            self.traceback_rows.last = None;
            return None;
        }
        let memo = &mut self.traceback_rows;
        // The row that followed the last one before, compared whole: the
        // same row as the lookup would find (rows are unique keys).
        let predicted = memo
            .last
            .and_then(|l| memo.rows.get(l)?.next)
            .filter(|&n| memo.rows.get(n).is_some_and(|r| *r.raw == *raw));
        let at = match predicted {
            Some(n) => n,
            None => {
                // One hash for the lookup and, when it misses, the rows seen.
                let h = memo.seen.hasher().hash_one(raw);
                match memo.known.get(&h) {
                    Some(&n) if memo.rows.get(n).is_some_and(|r| *r.raw == *raw) => {
                        if let Some(l) = memo.last.and_then(|l| memo.rows.get_mut(l)) {
                            l.next = Some(n);
                        }
                        n
                    }
                    // Another row of the same hash: read as any row.
                    Some(_) => {
                        memo.last = None;
                        return None;
                    }
                    None => {
                        memo.last = None;
                        if memo.seen.contains(&h) {
                            if let Some(k) = builder_only(self.pre, raw, &mut memo.matched) {
                                if memo.known.len() >= MAX_ROWS {
                                    memo.known.clear();
                                    memo.rows.clear();
                                    memo.generation += 1;
                                }
                                memo.known.insert(h, memo.rows.len());
                                memo.rows.push(KnownRow {
                                    raw: raw.into(),
                                    known: k,
                                    next: None,
                                });
                            }
                        } else {
                            if memo.seen.len() >= MAX_SEEN {
                                memo.seen.clear();
                            }
                            memo.seen.insert(h);
                        }
                        // Read as any row this time.
                        return None;
                    }
                }
            }
        };
        memo.last = Some(at);
        Some(at)
    }

    /// A traceback is open, and no dangling path, DSA report, last thread
    /// line, glued line or waiting row is: the builder is all a row is read
    /// for.
    pub(super) fn only_tracebacks_open(&self) -> bool {
        !self.tracebacks.builders.is_empty()
            && self.groups.pending_path.is_none()
            && self.groups.echo.is_none()
            && !self.dsa.open
            && self.lines.glued_prefix.is_none()
            && self.lines.waiting.is_none()
    }
}

/// A row that, read while a traceback is open and nothing else is, does
/// nothing but give the builder its one segment: no device marker, not cut
/// by a terminal, one segment with no escaped line break, no dangling kernel
/// path, no DSA key, no notebook place, no host error, no
/// `CUDA_LAUNCH_BLOCKING`, no catalog pattern. A check added to
/// `take_row`, `take_line`, `read_line` or `text_line` must be added here
/// too (or in [`read_alone`]), or a repeated traceback row would skip it.
pub(super) fn builder_only(
    pre: &Prefilter,
    raw: &[u8],
    matched: &mut Vec<Target>,
) -> Option<Known> {
    // `take_row`: no carriage return (a row ending in one is read
    // otherwise), no terminal cut.
    if raw.last() == Some(&b'\r') {
        return None;
    }
    let cur = clean::lossy(raw);
    if unwrap::full_width(raw)
        && (unwrap::cut_marked(&cur, true, false).is_some() || unwrap::prefixed_cut(&cur))
    {
        return None;
    }
    read_alone(pre, &cur, matched)
}

// What `read_alone` looks for, whose answer there may read digits (a
// dangling path's line, a variable's value): `shape_rows` turns away every
// row that holds one.
pub(super) static CU: Searcher = searcher!(b".cu");
pub(super) static BLOCKING: Searcher = searcher!(b"CUDA_LAUNCH_BLOCKING");
pub(super) static SERIALIZE: Searcher = searcher!(b"AMD_SERIALIZE_KERNEL");

/// [`builder_only`]'s checks of row `cur` (as `unwrap::row` reads it) but
/// the terminal cut: what `take_line` does with it, read at once.
pub(super) fn read_alone(pre: &Prefilter, cur: &str, matched: &mut Vec<Target>) -> Option<Known> {
    static MARKER: Searcher = searcher!(b"ssertion ");
    static ESCAPED_BREAK: Searcher = searcher!(b"\\n");
    // `take_row`: no marker (so not glued either).
    if unwrap::has_marker(cur) {
        return None;
    }
    // `read_line`: one segment, no `repr`'d pieces.
    let mut segments = clean::readable(cur);
    if segments.len() != 1 {
        return None;
    }
    let (text, prefix) = segments.pop()?;
    let b = text.as_bytes();
    let t = text.trim();
    // `device_lines` (no dangling path pending), `dsa_line` (no report
    // open), the notebook check.
    if MARKER.find(b).is_some()
        || ESCAPED_BREAK.find(b).is_some()
        || (CU.find(b).is_some() && device_line::dangling_path(&text).is_some())
        || super::dsa_report::starts_or_fills(t)
        || super::notebook::notebook_place(t).is_some()
    {
        return None;
    }
    // `text_line`'s host error, launch blocking and evidence checks, with
    // all evidence wanted.
    let tb = t.as_bytes();
    if (pre.has_trigger(t) && errors::classify(t).is_some())
        || ((BLOCKING.find(tb).is_some() || SERIALIZE.find(tb).is_some())
            && errors::sets_launch_blocking(t))
    {
        return None;
    }
    pre.catalog_matches(&device_line::without_coordinates(t), |_| true, matched);
    if !matched.is_empty() {
        return None;
    }
    Some(Known {
        row: Rc::new(BuilderRow {
            step: RowStep::of(&text),
            text: text.into(),
        }),
        rank: prefix.rank,
        time: prefix.time,
        width: cur.len(),
    })
}

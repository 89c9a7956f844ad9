//! Traceback rows that only the builder reads, known by their shape: a log
//! that logs a handled traceback per sample ends each with an exception
//! line that repeats but for its numbers (`JSONDecodeError: Extra data:
//! line 1 column 424 (char 686)`) and logs a line before the next that
//! does too (`… skipping sample 2530829 of shard 2652`), so the known-row
//! memo (`memo`), which keeps rows byte for byte, never knows them, and
//! each was read in full (about 5,900 instructions, the most of such a log).
//!
//! A row's shape is `text::shape_into`'s (each run of digits one `0`). A
//! shape is known when a row of it was, read while only tracebacks were
//! open, a row that only the builder reads once read at once
//! (`memo::read_alone`), and one whose every check of that kind reads no
//! digit, so that another row of its shape gets the same answers: one
//! segment that `clean` leaves whole (no carriage return, `^`, escape or
//! `[`: no `^M`, escape sequence, coordinates or cell place), its text
//! (behind its prefixes) neither indented nor a frame nor starting with a
//! digit, no error code the host-error table reads (`errors::reads_codes`:
//! elsewhere its answer is the same whatever the numbers), no
//! `CUDA_LAUNCH_BLOCKING`-like word, no `.cu`, and no catalog literal
//! without a digit. Each check looks only for literals without a digit (or
//! at spaces, backticks and `>`), which a row holds exactly when its shape
//! does. What may read a digit's value is asked of each row again: its
//! prefixes (their shape as long as the known row's, so that its text has
//! the same shape; their rank and time are the row's), its notebook place,
//! and the catalog's literals with a digit or at its end; the builder
//! reads the row's own text.
//!
//! Whether the row is read at once is `take_row`'s: as wide as a terminal
//! and followed by a traceback header, it is (`Lines::released`); else a
//! row with no prefix is not cut (its text would have to be indented or a
//! frame), one narrower than a terminal is not asked, and a prefixed row
//! as wide is left to `take_row`.

use super::memo::{read_alone, BLOCKING, CU, SERIALIZE};
use super::memo_rows::MAX_ROW;
use super::shape_memo::{ByShape, Look};
use super::state::Reader;
use crate::clean;
use crate::prefilter::{Prefilter, Target};
use crate::unwrap;

impl Reader {
    /// Whether `raw` was read as a row of a known shape (see the module):
    /// what `take_row` would have done with it (`rest`: the bytes after
    /// its `\n`, where known). Asked after `take_known_row` found no known
    /// row.
    pub(super) fn take_shape_row(&mut self, raw: &[u8], rest: Option<&[u8]>) -> bool {
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
        let by = match memo.look(raw) {
            Look::Known(by) => by,
            Look::Not => return false,
            Look::Second => {
                // Looked at (and read as any row).
                let matched = &mut self.traceback_rows.matched;
                let by = by_shape(self.pre, cur, memo.shape(), matched);
                memo.keep(by);
                return false;
            }
        };
        // What may read a digit's value, asked of this row.
        let (text, prefix) = clean::parse_prefixes(cur);
        let prefixes = &raw[..raw.len() - text.len()];
        if crate::text::shape_len(prefixes) != by.prefixes
            || text.as_bytes().first().is_some_and(u8::is_ascii_digit)
            || (by.notebook && super::notebook::notebook_place(text).is_some())
            || self
                .pre
                .shape_literals()
                .is_some_and(|l| l.all_digits_in(text.as_bytes()))
            || (by.digit_literals
                && self
                    .pre
                    .kind_sets_met(text.as_bytes(), false, &mut memo.sets))
        {
            return false;
        }
        // Read at once as `take_row` reads it (see the module).
        let full = unwrap::full_width(raw);
        let released = full && {
            let Some(rest) = rest else {
                return false;
            };
            super::lines::header_next(rest)
        };
        if full && !released && !prefixes.is_empty() {
            return false;
        }
        // What `take_line` does with the row, its text stepping the builder.
        self.lines.count_width(cur.len());
        self.lines.released |= released;
        self.lines.line_no += 1;
        #[cfg(feature = "test-hooks")]
        crate::crash::injected_panic(raw);
        self.lines.last_prefix = (prefix.rank, prefix.time);
        self.traceback_line(text, prefix.rank.or(self.lines.input_rank));
        self.groups.earlier.clear();
        true
    }
}

/// How rows of `cur`'s shape (`shape`) are read by shape, where they are
/// (see the module): `cur` is a row only the builder reads, read at once,
/// and no check of that reads a digit.
fn by_shape(
    pre: &Prefilter,
    cur: &str,
    shape: &[u8],
    matched: &mut Vec<Target>,
) -> Option<ByShape> {
    let b = cur.as_bytes();
    let (text, _) = clean::strip_prefixes(cur);
    // `clean` leaves the row whole: its one segment's text is the row's end.
    let whole = matches!(clean::readable(cur).as_slice(), [(t, _)] if t == text);
    let t = text.as_bytes();
    let ok = whole
        && !b.iter().any(|c| matches!(c, b'\r' | b'^' | 0x1b | b'['))
        && !t.is_empty()
        && text.trim() == text
        && !t[0].is_ascii_digit()
        && !text.starts_with("File \"")
        && !(pre.has_trigger(text) && crate::errors::reads_codes(text))
        && BLOCKING.find(b).is_none()
        && SERIALIZE.find(b).is_none()
        && CU.find(b).is_none()
        && !pre.kind_sets_met(t, true, &mut Vec::new())
        && read_alone(pre, cur, matched).is_some();
    let prefixes = crate::text::shape_len(&b[..b.len() - t.len()]);
    ok.then(|| ByShape {
        prefixes,
        notebook: super::notebook::may_hold_place(text),
        digit_literals: pre
            .shape_literals()
            .is_none_or(|l| l.may_be_in_shape(&shape[prefixes..])),
    })
}

#[cfg(test)]
mod tests;

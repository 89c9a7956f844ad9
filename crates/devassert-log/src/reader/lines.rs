//! Bytes -> lines -> cleaned text: a line split over chunks is carried to
//! the next; whole stretches are searched (before the reader takes them in,
//! `pump`) for the lines that may matter, the rest counted unread; rows a
//! terminal cut are joined again (`unwrap`); each line is split into its
//! segments, prefixes stripped, and a `repr`'d error into its pieces.

use super::searched::{self, Searched, MAX_LINE};
use super::state::{Before, Known, Reader, Waiting};
use crate::clean;
use crate::unwrap;
use memchr::{memchr, memrchr};

impl Reader {
    /// The regexes this reader has retired by now (a search's input).
    pub fn retired(&self) -> &[u64] {
        self.retired.bits()
    }

    /// Whether this reader read every line of the last stretch and still
    /// does: the next stretch need not be searched ahead.
    pub fn every_line_hint(&self) -> bool {
        self.lines.every_line_hint
    }

    /// Feed raw bytes; chunk boundaries are arbitrary.
    pub fn feed(&mut self, bytes: &[u8]) {
        self.feed_searched(bytes, None);
    }

    /// Feed bytes searched already (see `search`):
    /// the result is used when the bytes start a line, as they do when no
    /// partial line is pending.
    pub fn feed_searched(&mut self, mut bytes: &[u8], searched: Option<Searched>) {
        self.ensure_input();
        if let Some(s) = self.facts.inputs.get_mut(self.lines.input) {
            s.bytes += bytes.len() as u64;
        }
        // A pending partial line takes the bytes up to the first newline: the
        // rest no longer starts where the search did.
        let fresh = !self.lines.carry_started;
        if self.lines.carry_started {
            match memchr(b'\n', bytes) {
                Some(i) => {
                    self.extend_carry(&bytes[..i]);
                    let mut line = self.read_carry();
                    unwrap::keep_row(&line, &mut self.lines.earlier);
                    line.clear();
                    self.lines.carry = line; // keeps its buffer
                    bytes = &bytes[i + 1..];
                }
                None => {
                    self.extend_carry(bytes);
                    return;
                }
            }
        }
        let (region, tail) = match memrchr(b'\n', bytes) {
            Some(i) => (&bytes[..=i], &bytes[i + 1..]),
            None => (&bytes[..0], bytes),
        };
        // Searched here when a line is read that is not in every-line mode.
        let searched = searched
            .filter(|s| fresh && s.len == region.len())
            .unwrap_or_else(|| Searched::later(region.len()));
        // A stretch read in every-line mode from its start to its end, and
        // still in it: the next ones likely are too (a log of handled
        // tracebacks). A row left waiting at a stretch's end is not.
        let every = self.scan(region, searched);
        self.lines.every_line_hint = every && self.wants_every_line();
        if !tail.is_empty() {
            self.lines.carry_started = true;
            self.extend_carry(tail);
        }
    }

    /// Read the line carried over from the last buffer; returns its bytes.
    pub(super) fn read_carry(&mut self) -> Vec<u8> {
        let line = std::mem::take(&mut self.lines.carry);
        self.lines.carry_started = false;
        if self.take_known_row(&line, None) {
            // Read as the builder's row it is (see `memo`).
        } else if self.wants_every_line() || self.pre.line_matters(&line, self.retired.bits()) {
            self.take_row(&line, 0, line.len());
            self.copy_rows_before(&line);
        } else {
            self.take_line(&line, false);
        }
        line
    }

    pub(super) fn extend_carry(&mut self, b: &[u8]) {
        let room = MAX_LINE.saturating_sub(self.lines.carry.len());
        self.lines.carry.extend_from_slice(&b[..b.len().min(room)]);
        self.lines.carry_started = true;
    }

    /// Complete lines, each ending in `\n`; whether every one was read in
    /// every-line mode.
    pub(super) fn scan(&mut self, region: &[u8], searched: Searched) -> bool {
        let mut every = true;
        // Rows read in every-line mode before the stretch is searched, each
        // up to its `\n`: the lines before where the search starts.
        let mut rows = 0;
        let base = self.lines.line_no;
        let mut found = searched.found;
        let mut p = 0;
        let mut next = 0;
        while p < region.len() {
            // Lines an every-line stretch already took are skipped.
            if let Some(f) = &found {
                while f.lines.get(next).is_some_and(|l| l.start < p) {
                    next += 1;
                }
            }
            if self.wants_every_line() {
                self.lines.released = false;
                // The rows after a header that repeat the last ones (see `block`).
                if let Some((len, n)) = self.take_block(&region[p..]) {
                    rows += n as u64;
                    p += len;
                    continue;
                }
                rows += 1;
                let e = p + memchr(b'\n', &region[p..]).unwrap_or(region.len() - p);
                let row = &region[p..e.min(p + MAX_LINE)];
                // A repeated row of a traceback that the builder alone reads (see `memo`).
                if self.take_known_row(row, region.get(e + 1..)) {
                    p = e + 1;
                    continue;
                }
                // Whether the search finds the row; when the stretch was not
                // searched, whether its filter rules the row out (a row it
                // lets through is read as found: see `searched`).
                let unfound = || match &found {
                    Some(f) => f.lines.get(next).is_none_or(|l| l.start != p),
                    None => !self.pre.may_find(&region[p..(e + 1).min(region.len())]),
                };
                self.lines.plain = !self.pre.looks_at_everything() && plain_row(row) && unfound();
                self.take_row(region, p, e);
                self.lines.plain = false;
                p = e + 1;
                continue;
            }
            every = false;
            let f = found.get_or_insert_with(|| {
                searched::search_from(self.pre, region, p, rows, self.retired.bits())
            });
            let Some(l) = f.lines.get(next) else { break };
            next += 1;
            let end = l.end.min(l.start + MAX_LINE);
            // Searched before this reader retired a regex its lines met:
            // those it was passed for that alone are not read (`prefilter::retired`).
            let now = self.retired.bits();
            if f.retired.as_slice() != now
                && self
                    .pre
                    .kept_only_by_retired(&region[l.start..end], &f.retired, now)
            {
                p = l.end + 1;
                continue;
            }
            self.lines.line_no = base + l.before;
            let (start, after) = (l.start, l.end + 1);
            self.take_row(region, start, end);
            p = after;
        }
        let total = found.map_or_else(|| crate::line_search::newlines(region), |f| f.total);
        self.lines.line_no = base + total;
        self.copy_rows_before(region);
        unwrap::keep_last(region, &mut self.lines.earlier);
        every
    }

    /// The region a waiting row was read in ends: the rows before it are
    /// copied (see `Before`).
    fn copy_rows_before(&mut self, region: &[u8]) {
        if let Some(w) = self.lines.waiting.as_mut() {
            if let Before::At(start) = w.before {
                w.before = Before::Rows(unwrap::rows_before(region, start, &self.lines.earlier));
            }
        }
    }

    /// Row `region[start..end]`, and the code line above it when it is an
    /// error line whose frame the log lacks (see `code_above`).
    pub(super) fn take_row(&mut self, region: &[u8], start: usize, end: usize) {
        let before = self.errors_so_far();
        self.read_row(region, start, end);
        self.code_above(region, start, end, before);
    }

    /// Row `region[start..end]`: read alone, or joined with the rows the
    /// terminal cut it from (see `unwrap`), or kept waiting for the next row.
    fn read_row(&mut self, region: &[u8], start: usize, end: usize) {
        let raw = &region[start..end];
        if let Some(w) = self.lines.waiting.take() {
            // Rows joined with this one are more than it: read in full.
            let plain = std::mem::replace(&mut self.lines.plain, false);
            let next = unwrap::row(raw);
            let resumed = unwrap::resume(w.kind, &w.text, w.rows, &next);
            // A row holding a host error message alone is a line of its own
            // (a line keeps one such message: glued, one would be lost),
            // unless the prefix alone filled the row before it. Asked only
            // of rows that would be joined: the catalog is the costly part.
            let own = !matches!(resumed, unwrap::Resume::Apart)
                && matches!(w.kind, unwrap::Kind::Prefixed(_))
                && !clean::strip_prefixes(&w.text).0.trim().is_empty()
                && {
                    let cpu = |t| matches!(t, crate::prefilter::Target::Cpu(_));
                    self.pre.catalog_matches(&next, cpu, &mut self.matched);
                    !self.matched.is_empty()
                };
            let resumed = if own { unwrap::Resume::Apart } else { resumed };
            match resumed {
                unwrap::Resume::Joined(text) => {
                    let before = match w.before {
                        Before::At(s) => unwrap::rows_before(region, s, &self.lines.earlier),
                        Before::Rows(rows) => rows,
                    };
                    let text = unwrap::backward(&before, &text).unwrap_or(text);
                    self.take_line(text.as_bytes(), true);
                    return;
                }
                unwrap::Resume::More(text) => {
                    self.lines.line_no += 1;
                    let mut parts = w.parts;
                    if parts.is_empty() {
                        parts.push(w.text);
                    }
                    parts.push(next.into_owned());
                    self.lines.waiting = Some(Waiting {
                        text,
                        rows: w.rows + 1,
                        parts,
                        ..w
                    });
                    return;
                }
                unwrap::Resume::Apart => {
                    self.read_waiting(w);
                    // This row is read alone, as with nothing waiting: a
                    // repeated traceback row goes to the builder (see `memo`;
                    // the row was not asked while a row waited).
                    if self.take_known_row(raw, region.get(end + 1..)) {
                        return;
                    }
                    self.lines.plain = plain;
                }
            }
        }
        // A repeat of the last thread line is whole.
        if self.take_repeat(raw) {
            return;
        }
        // A glued row of one echo's repeats: its checks below are known
        // (see `plan_row`): a device row, no cut path, its last piece
        // whole, so nothing waits unless it may be a prefixed row as wide
        // as the widest (asked below of its text). Its width is its length.
        let w = raw.len();
        let widest = self.lines.widest;
        if w < widest || (w > widest && !raw.ends_with(b" ")) {
            if let Some(plan) = self.plan_row(raw) {
                self.lines.count_width(w);
                self.take_planned(raw, plan);
                return;
            }
        }
        let cur = unwrap::row(raw);
        // A plain row holds no trigger (`.cu`, `block: [`, `' failed`…) and
        // no `: [`: of the markers, only `ssertion` may be in it.
        let device = if self.lines.plain {
            SSERTION.find(cur.as_bytes()).is_some()
        } else if self.unmarked.contains(&cur) {
            false
        } else {
            let marked = unwrap::has_marker(&cur);
            if !marked {
                self.unmarked.insert(&cur);
            }
            marked
        };
        if device && unwrap::path_may_be_cut(&cur) {
            let before = unwrap::rows_before(region, start, &self.lines.earlier);
            if let Some(text) = unwrap::backward(&before, &cur) {
                self.lines.plain = false;
                self.take_line(text.as_bytes(), true);
                return;
            }
        }
        let in_tb = !self.tracebacks.builders.is_empty();
        let width = cur.len();
        self.lines.count_width(width);
        // A row of assertions is walked twice (the cut check, its pieces):
        // ROCm's marker is searched once for both.
        let rocm = device.then(|| crate::device_line::has_rocm(cur.as_bytes()));
        let walk = || rocm.map(crate::device_line::Ends::knowing);
        if device || unwrap::full_width(raw) {
            // `cur` borrowed and as long: the row's own bytes (an invalid
            // sequence may be replaced by as many bytes).
            let own = matches!(cur, std::borrow::Cow::Borrowed(t) if t.len() == raw.len());
            if !device && own && self.released_by_header(region, end, &cur) {
                // Read as `read_waiting` would read it (`cur` is `raw`).
                self.take_line(cur.as_bytes(), true);
                return;
            }
            // A prefixed row as wide as any goes on in the unprefixed rows
            // after it (a code row behind a prefix included).
            // As wide as other rows, or padded to its width by a wrapper.
            // A row that already states a host message is a line of its own
            // (the reader takes one message a line).
            let prefixed = width == self.lines.widest
                && (self.lines.widest_rows > 1 || cur.ends_with(' '))
                && unwrap::prefixed_cut(&cur)
                && !self.states_host_message(&cur);
            // A glued line of one echo's repeats: its last piece is the
            // walk's last occurrence (see `glued`).
            let plan = device
                .then(|| self.plan_glued(raw, Known::row(raw, &cur, rocm)))
                .flatten();
            let last = match &plan {
                Some(p) => Some(p.last_occurrence(&cur)),
                None => walk().map(|ends| crate::device_line::parse_last_with(&cur, ends)),
            };
            let kind = match unwrap::cut_after(&cur, in_tb, last) {
                None | Some(unwrap::Kind::Code) if prefixed => {
                    Some(unwrap::Kind::Prefixed(unwrap::columns(&cur)))
                }
                k => k,
            };
            if let Some(kind) = kind {
                self.lines.line_no += 1;
                self.lines.waiting = Some(Waiting {
                    kind,
                    parts: Vec::new(),
                    text: cur.into_owned(),
                    rows: 1,
                    line_no: self.lines.line_no,
                    before: Before::At(start),
                    plain: self.lines.plain,
                });
                return;
            }
            if let Some(plan) = plan {
                self.take_planned(raw, plan);
                return;
            }
        }
        self.take_line_knowing(raw, true, Known::row(raw, &cur, rocm));
    }

    /// Whether row `cur` (the row's own bytes, no device marker), were it kept
    /// waiting, would be read alone at once: the next row is in `region`
    /// (after `end`) and is a traceback header. `unwrap::resume` sets apart
    /// every wait but two from a header: a frame cut before its function
    /// (`File "…`) and a prefix that filled its row alone; the row is then
    /// read as `read_waiting` reads one row, which is what `take_row` reads
    /// of a row that does not wait when `cur` is the row's own bytes (valid
    /// UTF-8, no carriage return): the waiting logged line before each
    /// traceback of a log of handled ones is read without the wait.
    /// Sets `Lines::released` so the header is read as a waiting row's next
    /// would be, whatever else is open.
    fn released_by_header(&mut self, region: &[u8], end: usize, cur: &str) -> bool {
        if !region.get(end + 1..).is_some_and(header_next) {
            return false;
        }
        let body = clean::strip_prefixes(cur).0.trim();
        if body.is_empty() || body.starts_with("File \"") {
            return false;
        }
        self.lines.released = true;
        true
    }

    /// A waiting row that the next row did not finish, read as it is at its
    /// own place: a prefixed line and its unprefixed rows as the one line
    /// they are; other rows that never made a whole line, one by one (a
    /// padded capture pads rows that ended their line too).
    pub(super) fn read_waiting(&mut self, w: Waiting) {
        let now = self.lines.line_no;
        self.lines.line_no = w.line_no - 1;
        if w.parts.len() < 2 || matches!(w.kind, unwrap::Kind::Prefixed(_)) {
            // One row alone is its own text (`unwrap::row`): as plain as it was.
            let plain = std::mem::replace(&mut self.lines.plain, w.plain && w.rows == 1);
            self.take_line(w.text.as_bytes(), true);
            self.lines.plain = plain;
        } else {
            for part in &w.parts {
                self.take_line(part.as_bytes(), true);
            }
        }
        self.lines.line_no = now;
    }

    pub(super) fn flush_waiting(&mut self) {
        if let Some(w) = self.lines.waiting.take() {
            self.read_waiting(w);
        }
    }

    pub(super) fn read_line(&mut self, raw: &[u8]) {
        let text = clean::lossy(raw);
        clean::each_readable(&text, |body, mut prefix| {
            if let Some((rank, time)) = self.lines.glued_prefix {
                prefix.rank = prefix.rank.or(rank);
                prefix.time = prefix.time.or(time);
            }
            self.lines.last_prefix = (prefix.rank, prefix.time);
            let rank = prefix.rank.or(self.lines.input_rank);
            if let Some(pieces) = super::repr::unescape_repr(body) {
                for piece in pieces {
                    let (b, p2) = clean::strip_prefixes(&piece);
                    self.text_line(b, p2.rank.or(rank), prefix.time.or(p2.time));
                }
            } else {
                self.text_line(body, rank, prefix.time);
            }
        });
    }
}

/// Whether the row that starts `rest` (the bytes after a row's `\n`) is a
/// traceback header (see `released_by_header`).
pub(super) fn header_next(rest: &[u8]) -> bool {
    // Most next rows are no header, and their first byte after the
    // indentation tells (a byte `trim` may skip, or that may start a
    // Unicode space, is looked at whole).
    // Python's own header, the most common next row, is known at once.
    if rest.starts_with(b"Traceback (most recent call last):\n") {
        return true;
    }
    let first = rest.iter().find(|&&b| b != b' ' && b != b'\t');
    if !first.is_some_and(|&b| matches!(b, b'T' | b'\r' | 0x0b | 0x0c) || b >= 0x80) {
        return false;
    }
    memchr(b'\n', rest).is_some_and(|e| crate::traceback::is_header(unwrap::row(&rest[..e]).trim()))
}

/// What `take_row` looks for in a plain row instead of every marker.
static SSERTION: crate::device_line::Searcher = crate::device_line::searcher!(b"ssertion");

/// Whether a row the search did not find is also read as it is: no escape
/// sequence (taking one out can join a word), no carriage return (a segment
/// can end a line where the row did not) and no coordinates (taking them out
/// joins text): what is read of it is then pieces of the row, and holds no
/// literal the row does not.
fn plain_row(row: &[u8]) -> bool {
    use crate::device_line::{searcher, Searcher};
    static ESC: Searcher = searcher!(b"ESC[");
    static CARET_M: Searcher = searcher!(b"^M");
    static COORDS: Searcher = searcher!(b": [");
    // Each of the three holds a `[` or a `^`: most rows hold neither and
    // are not searched for them.
    memchr::memchr2(0x1b, b'\r', row).is_none()
        && (memchr::memchr2(b'[', b'^', row).is_none()
            || (ESC.find(row).is_none()
                && CARET_M.find(row).is_none()
                && COORDS.find(row).is_none()))
}

/// A rank in a per-rank file's name: `rank3.log`, `log_rank_3.txt`,
/// torchrun's `…/attempt_0/3/stderr.log`.
pub fn rank_from_name(name: &str) -> Option<i64> {
    let n = name.replace('\\', "/");
    let lower = n.to_ascii_lowercase();
    if let Some(i) = lower.rfind("rank") {
        let rest = lower[i + 4..].trim_start_matches(['_', '-', '.']);
        let d: String = rest.chars().take_while(char::is_ascii_digit).collect();
        if !d.is_empty() {
            return d.parse().ok();
        }
    }
    let parts: Vec<&str> = n.split('/').collect();
    if parts.len() >= 2 {
        let file = parts[parts.len() - 1];
        let dir = parts[parts.len() - 2];
        if (file.starts_with("stdout") || file.starts_with("stderr"))
            && !dir.is_empty()
            && dir.bytes().all(|b| b.is_ascii_digit())
        {
            return dir.parse().ok();
        }
    }
    None
}

#[cfg(test)]
mod tests;

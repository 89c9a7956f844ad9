//! Lines of assertions printed back to back (threads writing to one
//! unbuffered stream), read in pieces; and a glued line whose pieces all
//! repeat one thread line, counted without the terminal-cut check's walk.
//!
//! Whether a row was cut by a terminal depends on its last assertion
//! occurrence, which that check finds by walking every occurrence of the
//! row (`device_line::Ends`, then `unwrap::cut_after`): on a glued line, a
//! second walk beside the pieces' (a quarter of such a line's time). A
//! line whose first piece repeats an echo (a thread line counted from its
//! coordinates, see `route`) and whose every later piece repeats that same
//! echo to the line's end is worked out first without changing anything
//! ([`Reader::plan_glued`]); the pieces it finds are the occurrences the
//! walk finds, when the echo glues (`Echo::glues`): its only `Assertion ` is
//! CUDA's, not the printf form, and closes at its own end, debris
//! included. Why: a repeat differs from the echo only inside the brackets
//! of its block and thread, which hold digits, commas and spaces and sit
//! between `[` and `]`, so it holds `ssertion ` where the echo does and
//! nowhere else (no marker can reach into the brackets); the walk, started
//! at the repeat, finds that `Assertion ` first (ROCm's marker ends in
//! `assertion ` and would be a second), and closes it reading only bytes
//! the echo has at the same places (`device_line::closes_at_end`) up to
//! the repeat's end, where `Echo::repeat_at_start` has checked that no
//! debris goes on. The first piece ends where the walk's first occurrence
//! does by construction ([`glued`]). So the check needs only the last
//! piece parsed, and the line is then counted from what was found.

use super::state::{Known, Reader};
use crate::device_line::{self, DeviceLine};

/// What [`glued`] looks for first: every assertion marker holds it.
pub(super) static MARKER: device_line::Searcher = device_line::searcher!(b"ssertion ");

/// A glued line worked out before it is read ([`Reader::plan_glued`]).
pub(super) struct Planned {
    /// The echo its first piece repeats (see `Reader::echoed`), and that
    /// piece's block and thread; the later pieces' are in `glued_repeats`.
    which: Option<usize>,
    first: ([u32; 3], [u32; 3]),
    /// Where its last piece starts.
    last: usize,
}

impl Planned {
    /// The row's last assertion occurrence, as `device_line::parse_last`
    /// finds it (`line`: the row's text).
    pub(super) fn last_occurrence<'a>(&self, line: &'a str) -> Option<DeviceLine<'a>> {
        device_line::parse_all(line.get(self.last..)?).pop()
    }
}

impl Reader {
    /// A glued line ([`glued`]) whose first piece repeats an echo that
    /// glues, and whose later pieces all repeat that echo to the line's
    /// end, with nothing open that a repeat would be read for: what
    /// [`Reader::take_glued`] would count of it, found without counting
    /// (the later pieces' blocks and threads go to `glued_runs`).
    pub(super) fn plan_glued(&mut self, raw: &[u8], known: Option<Known<'_>>) -> Option<Planned> {
        if self.groups.echo.is_none() || !self.quiet() || self.lines.glued_prefix.is_some() {
            return None;
        }
        let (_, first, _) = glued(raw, known)?;
        let (which, b, t) = self.echoed(&raw[..first])?;
        let g = &mut self.groups;
        let e = match which {
            None => g.echo.as_ref()?,
            Some(i) => g.earlier.get(i)?,
        };
        // Counting the first piece from `e` leaves its prefix to lend the others.
        let lent = Some(e.prefix).filter(|p| *p != (None, None));
        if !e.glues || e.lent != lent {
            return None;
        }
        g.glued_runs.clear();
        let last = if first < raw.len() {
            e.glued_repeats(raw, first, &mut g.glued_runs)?
        } else {
            first
        };
        Some(Planned {
            which,
            first: (b, t),
            last,
        })
    }

    /// Reads a planned glued line ([`Reader::plan_glued`]) as
    /// [`Reader::take_line_knowing`] would: its first piece counted from
    /// its echo, which becomes the last, the others run by run (threads
    /// going on along x in one block: see `Run`).
    pub(super) fn take_planned(&mut self, raw: &[u8], plan: Planned) {
        self.lines.line_no += 1;
        #[cfg(feature = "test-hooks")]
        crate::crash::injected_panic(raw);
        #[cfg(not(feature = "test-hooks"))]
        let _ = raw;
        self.count_echo(plan.which, plan.first.0, plan.first.1);
        let Some((group, rank)) = self.groups.echo.as_ref().map(|e| (e.group, e.rank)) else {
            return;
        };
        let runs = std::mem::take(&mut self.groups.glued_runs);
        for r in &runs {
            self.count_run(group, rank, r.block, r.first, r.n);
        }
        self.groups.glued_runs = runs;
    }

    /// A line of assertions printed back to back: read piece by piece, each
    /// assertion with the text before it, so that a piece repeating the
    /// last but for its block and thread is counted from those alone, as a
    /// repeated line is (parsing every assertion of every such line ran at
    /// a tenth of the speed of other lines). The pieces share the line's
    /// number and its prefix's rank and time, as the assertions of the
    /// whole line would.
    pub(super) fn take_glued(&mut self, line: &str, first: usize, mut ends: device_line::Ends) {
        let mut at = 0;
        let mut end = first;
        loop {
            self.take_piece(&line.as_bytes()[at..end]);
            if at == 0 {
                self.lines.glued_prefix = Some(self.lines.last_prefix);
            }
            at = end;
            let lent = self.lent();
            while let Some(e) = self.groups.echo.as_ref().filter(|e| e.lent == lent) {
                let Some((block, thread, n)) = e.repeat_at_start(&line.as_bytes()[at..]) else {
                    break;
                };
                let (group, rank) = (e.group, e.rank);
                self.count(group, rank, Some(block), Some(thread));
                at += n;
            }
            if at >= line.len() {
                break;
            }
            end = ends.next(line, at).unwrap_or(line.len());
        }
        self.lines.glued_prefix = None;
    }
}

/// A line that [`Reader::take_glued`] reads in pieces, where its first
/// assertion ends, and the walk that found it (to go on with): plain text
/// (no carriage return, escape, or escaped line break, which are cleaned
/// from the whole line first) holding a second assertion after the first.
pub(super) fn glued<'a>(
    raw: &'a [u8],
    known: Option<Known<'a>>,
) -> Option<(&'a str, usize, device_line::Ends)> {
    // Most lines hold no assertion and stop at the first search.
    let marker = MARKER.find(raw)?;
    if MARKER.find(&raw[marker + 9..]).is_none() || !cleaned_alike(raw) {
        return None;
    }
    let (line, rocm) = match known {
        Some(k) => (k.text, k.rocm),
        None => (std::str::from_utf8(raw).ok()?, device_line::has_rocm(raw)),
    };
    let mut ends = device_line::Ends::knowing(rocm);
    let first = ends.next(line, 0)?;
    MARKER.find(&raw[first..])?;
    Some((line, first, ends))
}

/// Whether `raw` holds nothing that cleaning takes out of a whole line (a
/// carriage return, an escape, an escaped line break, `^M`, `ESC[`): two
/// scans instead of one per needle.
fn cleaned_alike(raw: &[u8]) -> bool {
    memchr::memchr2(b'\r', 0x1b, raw).is_none()
        && memchr::memchr3_iter(b'\\', b'^', b'E', raw).all(|i| {
            !matches!(
                &raw[i..],
                [b'\\', b'n', ..] | [b'^', b'M', ..] | [b'E', b'S', b'C', b'[', ..]
            )
        })
}

#[cfg(test)]
mod tests {
    use super::cleaned_alike;

    proptest::proptest! {
        /// The two scans find what a search for each needle finds.
        #[test]
        fn cleaned_alike_is_a_search_for_each_needle(
            raw in proptest::collection::vec(proptest::sample::select(
                b"\\n^MESC[\r\x1bxE ".to_vec()), 0..24),
        ) {
            let has = |n: &[u8]| raw.windows(n.len()).any(|w| w == n);
            let each = !has(b"\r") && !has(b"\x1b") && !has(b"\\n") && !has(b"^M") && !has(b"ESC[");
            proptest::prop_assert_eq!(cleaned_alike(&raw), each);
        }
    }
}

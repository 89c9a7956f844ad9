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

    /// [`Reader::plan_glued`] for a row as it comes, before the row's
    /// whole-row checks (its UTF-8 check, the device markers, the cut
    /// path, ROCm's marker, cleaning's needles, the last piece's parse),
    /// when it starts with a repeat of an echo whose [`fills_rows`] holds
    /// and repeats that echo to its end: the row is then that echo's bytes
    /// with other numbers between its brackets (digits, commas, spaces), so
    /// each check gives what it gives the echo (see [`fills_rows`]), and
    /// `read_row` would plan it as this does: the walk from the row's start
    /// ends the first repeat where `repeat_at_start` does (as it ends every
    /// later one: see the module's doc), so `echoed` finds the same echo
    /// (an echo tried before it that matched the first piece would have
    /// matched here first).
    pub(super) fn plan_row(&mut self, raw: &[u8]) -> Option<Planned> {
        if !self.quiet() || self.lines.glued_prefix.is_some() {
            return None;
        }
        let lent = self.lent();
        let g = &mut self.groups;
        let last = g.echo.iter().map(|e| (None, e));
        let earlier = g.earlier.iter().enumerate().rev();
        let (which, e, (b, t, first)) = last
            .chain(earlier.map(|(i, e)| (Some(i), e)))
            .filter(|(_, e)| e.lent == lent)
            .find_map(|(w, e)| Some((w, e, e.repeat_at_start(raw)?)))?;
        let lent = Some(e.prefix).filter(|p| *p != (None, None));
        if !e.fills_rows || e.lent != lent || first >= raw.len() {
            return None;
        }
        g.glued_runs.clear();
        let last = e.glued_repeats(raw, first, &mut g.glued_runs)?;
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

/// Whether a row of repeats of echo `text` (one that glues), `seam` (its
/// tail, then its head) between each two, needs none of `read_row`'s
/// whole-row checks: they give such a row what they give `text`. The
/// numbers that differ sit between `[` and `]` and are digits, commas and
/// spaces, which no needle below holds, so a needle in the row lies in the
/// text around them: in `text`'s, or across two repeats, in `seam`. So the
/// row is valid UTF-8 (`text`'s pieces, cut beside brackets, and ASCII),
/// holds nothing cleaning takes out, no ROCm marker, and `ssertion` (a
/// marker); its first word is `text`'s (its head holds `block: [`), so
/// `unwrap::path_may_be_cut` says what it says of `text`; and its last
/// piece parses whole where `text` does (`tests::plan_row_is_the_checks_plan`).
pub(super) fn fills_rows(text: &str, seam: &[u8]) -> bool {
    let b = text.as_bytes();
    cleaned_alike(b)
        && cleaned_alike(seam)
        && !device_line::has_rocm(b)
        && !device_line::has_rocm(seam)
        && !crate::unwrap::path_may_be_cut(text)
        && device_line::parse_all(text)
            .last()
            .is_some_and(crate::unwrap::whole)
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
    use super::super::group::Run;
    use super::super::state::{Known, Reader};
    use super::cleaned_alike;
    use crate::{device_line, unwrap};
    use proptest::prelude::*;

    type Plan = (Option<usize>, ([u32; 3], [u32; 3]), usize, Vec<Run>);

    /// What `read_row` plans of row `raw` by its checks: the row as text,
    /// a device marker, no path a cut may have left, ROCm's marker searched,
    /// `plan_glued`, and the terminal-cut check of its last piece.
    fn planned_by_checks(r: &mut Reader, raw: &[u8]) -> Option<Plan> {
        let cur = unwrap::row(raw);
        if !unwrap::has_marker(&cur) || unwrap::path_may_be_cut(&cur) {
            return None;
        }
        let rocm = device_line::has_rocm(cur.as_bytes());
        let plan = r.plan_glued(raw, Known::row(raw, &cur, Some(rocm)))?;
        if unwrap::cut_after(&cur, false, Some(plan.last_occurrence(&cur))).is_some() {
            return None;
        }
        Some((
            plan.which,
            plan.first,
            plan.last,
            r.groups.glued_runs.clone(),
        ))
    }

    fn planned_row(r: &mut Reader, raw: &[u8]) -> Option<Plan> {
        let p = r.plan_row(raw)?;
        Some((p.which, p.first, p.last, r.groups.glued_runs.clone()))
    }

    /// A reader that has read `lines` (each a line), with their echoes.
    fn reader_after(lines: &[String]) -> Reader {
        let mut r = Reader::new(devassert_core::Catalog::builtin());
        for l in lines {
            r.feed(format!("{l}\n").as_bytes());
        }
        r
    }

    /// Thread-line templates (`B`, `T`: the block's and thread's first
    /// number): a rooted and a relative path, a prefix, ROCm's marker, each
    /// of cleaning's needles, the printf form, debris.
    const TEMPLATES: [&str; 14] = [
        "/pytorch/aten/src/ATen/native/cuda/Indexing.cu:1422: indexSelectLargeIndex: block: [%B,0,0], thread: [%T,0,0] Assertion `srcIndex < srcSelectDimSize` failed.",
        "/x/Loss.cu:250: nll_loss_forward_reduce_cuda_kernel_2d: block: [%B,0,0], thread: [%T,0,0] Assertion `t >= 0 && t < n_classes` failed.",
        "aten/src/ATen/native/cuda/Indexing.cu:1422: k: block: [%B,0,0], thread: [%T,0,0] Assertion `a` failed.",
        "[rank2]: /x/a.cu:5: k: block: [%B,0,0], thread: [%T,0,0] Assertion `a` failed.",
        "/x/a.cu:5: Device-side assertion k: block: [%B,0,0], thread: [%T,0,0] Assertion `a` failed.",
        "/x/a.cu:5: k^M: block: [%B,0,0], thread: [%T,0,0] Assertion `a` failed.",
        "/x/a.cu:5: kESC[1m: block: [%B,0,0], thread: [%T,0,0] Assertion `a` failed.",
        "/x/a.cu:5: k\\n: block: [%B,0,0], thread: [%T,0,0] Assertion `a` failed.",
        "/x/a.cu:5: k\x1b: block: [%B,0,0], thread: [%T,0,0] Assertion `a` failed.",
        "/x/a.cu:5: k: block: [%B,0,0], thread: [%T,0,0] Assertion failed: `a`: m.",
        "/x/a.cu:5: k: block: [%B,0,0], thread: [%T,0,0] Assertion `a` failed.*",
        "/x/a.cu:5: k: block: [%B, 0, 0], thread: [%T, 0,0] Assertion `a` failed",
        "/x/a.cu:5: k: block: [%B,0,0]ESC[0m, thread: [%T,0,0] Assertion `a` failed.",
        "/x/a.cu:5: k: block: [%B,0,0]\\n, thread: [%T,0,0] Assertion `a` failed.",
    ];

    fn line(t: usize, b: &str, x: &str) -> String {
        TEMPLATES[t % TEMPLATES.len()]
            .replacen("%B", b, 1)
            .replacen("%T", x, 1)
    }

    fn number() -> impl Strategy<Value = String> {
        prop_oneof![
            16 => (0u32..70).prop_map(|n| n.to_string()),
            1 => Just("4294967295".to_string()),
            1 => Just("4294967296".to_string()),
            1 => Just(" 7".to_string()),
            1 => Just("123456789012".to_string()),
        ]
    }

    proptest! {
        /// A row that `plan_row` plans before its checks is planned alike
        /// by them: every template's echo, rows of its repeats with any
        /// numbers, another template's piece midway, text after the last.
        #[test]
        fn plan_row_is_the_checks_plan(
            echoes in proptest::collection::vec(0usize..TEMPLATES.len(), 1..3),
            pieces in proptest::collection::vec((0usize..4, number(), number()), 1..8),
            after in prop_oneof![5 => Just(""), 1 => Just("."), 1 => Just(" RuntimeError: x"), 1 => Just("\r")],
        ) {
            let lines: Vec<String> = echoes.iter().map(|&t| line(t, "1", "0")).collect();
            let mut r = reader_after(&lines);
            // Mostly the last echo's template, at times an earlier one's.
            let row: String = pieces
                .iter()
                .map(|(k, b, x)| line(echoes[*k % echoes.len()], b, x))
                .collect::<String>()
                + after;
            let fast = planned_row(&mut r, row.as_bytes());
            if fast.is_some() {
                prop_assert_eq!(&fast, &planned_by_checks(&mut r, row.as_bytes()), "{}", row);
            }
        }
    }

    /// Rows of the plain templates are planned before their checks (the
    /// test above is not vacuous), those with a needle are not.
    #[test]
    fn plan_row_plans_plain_rows() {
        for (t, planned) in [
            (0, true),
            (1, true),
            (10, true),
            (11, true),
            (2, false),
            (5, false),
            (9, false),
            (12, false),
        ] {
            let mut r = reader_after(&[line(t, "1", "0")]);
            let row = [line(t, "2", "5"), line(t, "2", "6"), line(t, "3", "0")].concat();
            let fast = planned_row(&mut r, row.as_bytes());
            assert_eq!(fast.is_some(), planned, "{row}");
            assert_eq!(
                fast,
                planned_by_checks(&mut r, row.as_bytes()).filter(|_| planned),
                "{row}"
            );
        }
    }

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

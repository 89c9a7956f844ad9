//! An assertion group (one per kernel, assertion and source), what counting
//! lines into groups remembers between lines, and the last thread line that
//! the next ones may repeat (the counting is in `groups`).

use super::pos::Pos;
use super::thread_set::{CoordState, ThreadSet};
use crate::clean::Stamp;
use crate::device_line;
use std::collections::{HashMap, HashSet};

#[derive(Debug, Clone)]
pub struct AssertGroup {
    pub kernel: Option<String>,
    pub raw_kernel: Option<String>,
    pub assertion: String,
    /// Normalised path, empty when the line did not say.
    pub file: String,
    pub line: Option<u64>,
    pub lines: u64,
    /// Distinct (rank, block, thread), up to a cap (`ThreadSet::capped`).
    pub triples: ThreadSet,
    pub blocks: HashSet<(i64, [u32; 3]), CoordState>,
    /// The last (rank, block) counted: the lines of one block come together.
    pub last_block: Option<(i64, [u32; 3])>,
    pub ranks: crate::ranks::RankSet,
    pub first: Pos,
    pub first_time: Option<Stamp>,
    pub rocm: bool,
    pub printf_message: Option<String>,
    /// From a DSA report rather than a printed line.
    pub from_dsa: bool,
    /// Its lines gave the assertion alone (`Assertion `t < n_classes` failed.`
    /// pasted without its path and coordinates), in a log with no other
    /// device line: a device assertion only if a rule's assertion owns it.
    pub bare: bool,
}

impl AssertGroup {
    /// A group of an assertion read alone, its first line at `first`.
    pub(super) fn bare(assertion: String, first: Pos, first_time: Option<Stamp>) -> Self {
        AssertGroup {
            kernel: None,
            raw_kernel: None,
            assertion,
            file: String::new(),
            line: None,
            lines: 0,
            triples: ThreadSet::default(),
            blocks: HashSet::default(),
            last_block: None,
            ranks: Default::default(),
            first,
            first_time,
            rocm: false,
            printf_message: None,
            from_dsa: false,
            bare: true,
        }
    }

    pub fn source(&self) -> Option<String> {
        if self.file.is_empty() {
            return None;
        }
        Some(match self.line {
            Some(l) => format!("{}:{l}", self.file),
            None => self.file.clone(),
        })
    }
}

/// What counting lines into groups remembers between lines.
#[derive(Default)]
pub(super) struct Groups {
    pub(super) index: HashMap<(Option<String>, String, String), usize>,
    /// A source path left at the end of the previous line, for reassembly.
    pub(super) pending_path: Option<(u64, Option<i64>, String)>,
    /// The last raw line identity and its group: thousands of identical lines are cheap.
    pub(super) last_raw: String,
    pub(super) last_group: Option<usize>,
    pub(super) scratch: String,
    /// The last line that was one device assertion and nothing else.
    pub(super) echo: Option<Echo>,
    /// Echoes before it, most recent last, kept while every line read
    /// since was an echo too (see `Reader::take_piece`).
    pub(super) earlier: Vec<Echo>,
    /// The repeats after a glued line's first piece, in runs, found before
    /// the line is read (see `reader::glued`; kept to reuse its allocation).
    pub(super) glued_runs: Vec<Run>,
    /// Device assertions counted, and the group and rank of the last.
    pub(super) records: u64,
    /// (group, rank, whether it had block and thread).
    pub(super) last_record: Option<(usize, Option<i64>, bool)>,
    /// Assertions with no place and no coordinates that named no group
    /// when read, the first few: groups of the log if it holds no other
    /// device line (see `Reader::bare_groups`).
    pub(super) bare: Vec<AssertGroup>,
}

/// Repeats of one echo one after another whose threads go on along x
/// (37, 38, 39, … of one block and rank): counted at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Run {
    pub(super) block: [u32; 3],
    pub(super) first: [u32; 3],
    pub(super) n: u32,
}

impl Run {
    /// Whether the repeat of `block` and `thread` goes on with this run.
    fn goes_on(&self, block: [u32; 3], thread: [u32; 3]) -> bool {
        let [x, y, z] = self.first;
        block == self.block
            && x.checked_add(self.n) == Some(thread[0])
            && [y, z] == [thread[1], thread[2]]
    }

    /// Adds the repeat of `block` and `thread` to the last run of `runs`
    /// or starts one.
    pub(super) fn push(runs: &mut Vec<Run>, block: [u32; 3], thread: [u32; 3]) {
        match runs.last_mut() {
            Some(r) if r.goes_on(block, thread) => r.n += 1,
            _ => runs.push(Run {
                block,
                first: thread,
                n: 1,
            }),
        }
    }
}

/// A thread line to compare the next ones with: a failing kernel prints
/// one line per thread, and lines that differ from it only in their block
/// and thread numbers are counted into its group without being parsed.
pub(super) struct Echo {
    /// Whether `raw` holds "ssertion " once (its repeats then do too: the
    /// numbers that differ sit between brackets).
    pub(super) single: bool,
    /// Whether, `single`, its one `Assertion ` is CUDA's (not the printf
    /// form) and closes at its end (`device_line::closes_at_end`): a glued
    /// line's repeats of it then end where the terminal-cut check's walk
    /// ends them (see `reader::glued`).
    pub(super) glues: bool,
    /// Whether, `glues`, a row of its repeats alone is read without the
    /// row's whole-row checks (`reader::glued::fills_rows`).
    pub(super) fills_rows: bool,
    pub(super) raw: Vec<u8>,
    /// Its text after the thread's numbers, then before the block's: what
    /// lies between two repeats glued one after the other.
    pub(super) seam: Vec<u8>,
    pub(super) block: std::ops::Range<usize>,
    pub(super) thread: std::ops::Range<usize>,
    pub(super) group: usize,
    pub(super) rank: Option<i64>,
    /// The prefix's rank and time the line left for glued lines to read.
    pub(super) prefix: (Option<i64>, Option<Stamp>),
    /// The rank and time a glued line's prefix lent it (a piece after the
    /// line's first): a repeat counts as it only where the same is lent.
    pub(super) lent: Lent,
}

/// What a glued line's prefix lends the pieces after its first, when it
/// lends anything (see `Reader::lent`).
pub(super) type Lent = Option<(Option<i64>, Option<Stamp>)>;

/// Echoes kept besides the last: a kernel's threads print in turns with
/// another's (two templates alternating line after line).
pub(super) const EARLIER: usize = 8;

impl Echo {
    /// The block and thread of `raw` when the rest of it is this line's.
    pub(super) fn repeat(&self, raw: &[u8]) -> Option<([u32; 3], [u32; 3])> {
        // A repeat at the start of `raw` that ends where `raw` does.
        match self.repeat_at_start(raw)? {
            (b, t, end) if end == raw.len() => Some((b, t)),
            _ => None,
        }
    }

    /// The block and thread of the repeat of this line that `rest` starts
    /// with (glued to more text), and where the repeat ends. Its end must
    /// be where the line's ended: the debris after `failed` (`.`, `*`) the same.
    pub(super) fn repeat_at_start(&self, rest: &[u8]) -> Option<([u32; 3], [u32; 3], usize)> {
        let head = &self.raw[..self.block.start];
        let mid = &self.raw[self.block.end..self.thread.start];
        let tail = &self.raw[self.thread.end..];
        if !rest.starts_with(head) {
            return None;
        }
        let (b_end, block) = device_line::numbers_at(rest, head.len())?;
        if !rest[b_end..].starts_with(mid) {
            return None;
        }
        let (t_end, thread) = device_line::numbers_at(rest, b_end + mid.len())?;
        let end = t_end + tail.len();
        if !rest[t_end..].starts_with(tail) || matches!(rest.get(end), Some(b'.' | b'*')) {
            return None;
        }
        Some((block, thread, end))
    }

    /// The repeats of this line glued one after another from `at` to the
    /// end of `raw`, as [`Echo::repeat_at_start`] finds them one by one,
    /// pushed in runs onto `runs`; where the last starts. None where that
    /// walk would stop before the end (`runs` then holds some).
    pub(super) fn glued_repeats(
        &self,
        raw: &[u8],
        mut at: usize,
        runs: &mut Vec<Run>,
    ) -> Option<usize> {
        let head = &self.raw[..self.block.start];
        let mid = &self.raw[self.block.end..self.thread.start];
        let tail = &self.raw[self.thread.end..];
        if at >= raw.len() || !raw[at..].starts_with(head) {
            return None;
        }
        // The last block's numbers with the text after them to the
        // thread's (most repeats are of that block: one compare), and the
        // last thread's (most differ from it in x alone).
        let (mut last_block, mut last_thread): (Option<(&[u8], [u32; 3])>, _) = (None, None);
        loop {
            let b_at = at + head.len();
            let (b_end, block) = match last_block {
                Some((span, b)) if raw[b_at..].starts_with(span) => {
                    (b_at + span.len() - mid.len(), b)
                }
                _ => {
                    let (b_end, b) = device_line::numbers_at(raw, b_at)?;
                    if !raw[b_end..].starts_with(mid) {
                        return None;
                    }
                    last_block = Some((&raw[b_at..b_end + mid.len()], b));
                    (b_end, b)
                }
            };
            let (t_end, thread) =
                device_line::numbers_like(raw, b_end + mid.len(), &mut last_thread)?;
            Run::push(runs, block, thread);
            let end = t_end + tail.len();
            if end >= raw.len() {
                return (end == raw.len() && raw[t_end..].starts_with(tail)).then_some(at);
            }
            // This repeat's tail and the next one's head, compared at once;
            // the next head's first byte is no debris (`.`, `*`) after it.
            if !raw[t_end..].starts_with(&self.seam) || matches!(raw[end], b'.' | b'*') {
                return None;
            }
            at = end;
        }
    }
}

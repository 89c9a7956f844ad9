//! The reader's state between lines, grouped by the job that needs it:
//! [`Reader`] itself, and where it is in its inputs ([`Lines`]). Its
//! methods are in the files of those jobs.

use super::dsa_report::DsaState;
use super::group::Groups;
use super::kept::{Facts, OpenTracebacks};
use crate::clean::Stamp;
use crate::prefilter::{Prefilter, Target};
use crate::unwrap;
use devassert_core::Catalog;

/// Reads one crash (one or more inputs) into [`Facts`]; what it holds
/// between lines is grouped by the job that needs it.
pub struct Reader {
    pub(super) catalog: &'static Catalog,
    pub(super) pre: &'static Prefilter,
    pub facts: Facts,
    /// Where it is, the partial line, rows waiting to be joined.
    pub(super) lines: Lines,
    /// Tracebacks still being read.
    pub(super) tracebacks: OpenTracebacks,
    /// Assertion groups' index, the last thread line, a dangling path.
    pub(super) groups: Groups,
    /// Whether a DSA report is being read.
    pub(super) dsa: DsaState,
    /// The catalog patterns a line matched (kept to reuse its allocation).
    pub(super) matched: Vec<Target>,
    /// The memory all rank sets may take for ranks past their ranges.
    pub(super) rank_budget: crate::ranks::RankBudget,
    /// Lines that said nothing to the costly checks (see `quiet`).
    pub(super) quiet_lines: super::quiet::QuietLines,
    /// Rows known to hold no device marker (`unwrap::has_marker`, a
    /// function of the row alone), kept the same way.
    pub(super) unmarked: super::quiet::QuietShapes,
    /// Lines known to say nothing to the host-error table, by shape.
    pub(super) quiet_hosts: super::quiet::QuietShapes,
    /// Rows only the traceback builder reads, and their text (see `memo`).
    pub(super) traceback_rows: super::memo_rows::TracebackRows,
    /// Rows the builder alone reads, known by their shape (see `shape_rows`).
    pub(super) shape_rows: super::shape_memo::ShapeRows,
    /// The catalog's literal walk over lines that differ only in numbers.
    pub(super) sets_memo: crate::prefilter::SetsMemo,
    /// The catalog regexes whose lines it wants no more (see `prefilter`).
    pub(super) retired: crate::prefilter::Retired,
}

impl Reader {
    pub fn new(catalog: &'static Catalog) -> Self {
        let pre = Prefilter::shared(catalog);
        Reader {
            catalog,
            pre,
            facts: Facts::default(),
            lines: Lines::default(),
            tracebacks: OpenTracebacks::default(),
            groups: Groups::default(),
            dsa: DsaState::default(),
            matched: Vec::new(),
            rank_budget: Default::default(),
            quiet_lines: Default::default(),
            unmarked: Default::default(),
            quiet_hosts: Default::default(),
            traceback_rows: Default::default(),
            shape_rows: Default::default(),
            sets_memo: Default::default(),
            retired: pre.retired(),
        }
    }
}

/// Where the reader is in its inputs, and what it holds of lines not yet read.
#[derive(Default)]
pub(super) struct Lines {
    /// The start of a line the last chunk cut (at most `MAX_LINE` bytes).
    pub(super) carry: Vec<u8>,
    /// Whether a cut line is pending (its start may be empty).
    pub(super) carry_started: bool,
    /// The input being read: its index in `Facts::inputs`.
    pub(super) input: usize,
    /// The number of the last line read in it.
    pub(super) line_no: u64,
    /// Rank implied by the input's name (`rank3.log`).
    pub(super) input_rank: Option<i64>,
    /// A row cut by the terminal, waiting for the rest of it (see `unwrap`).
    pub(super) waiting: Option<Waiting>,
    /// The widest row read so far (a terminal's width, once rows wrap), and
    /// how many rows were that wide (one wide line is no terminal's width).
    pub(super) widest: usize,
    pub(super) widest_rows: usize,
    /// The last rows before the region being scanned, for a row that was cut
    /// from its start.
    pub(super) earlier: Vec<Vec<u8>>,
    /// The prefix of the last segment read (its rank and time).
    pub(super) last_prefix: (Option<i64>, Option<Stamp>),
    /// While the pieces of a glued line are read: the prefix of its first.
    pub(super) glued_prefix: Option<(Option<i64>, Option<Stamp>)>,
    /// The line being read is a row the search found none of its literals
    /// in (see `lines::plain_row`): read only because a traceback, a
    /// dangling path or a DSA report is open, it cannot hold a trigger word
    /// or what a catalog regex requires.
    pub(super) plain: bool,
    /// A row that would have waited was read at once, the next row being a
    /// header that sets it apart (`lines::released_by_header`): that row is
    /// read as a waiting row's next is, in every-line mode.
    pub(super) released: bool,
    /// Whether it read every line at the end of the last stretch: the next
    /// is then left unsearched (see `searched`).
    pub(super) every_line_hint: bool,
}

impl Lines {
    /// A row `width` wide was read: the widest so far, and how many.
    pub(super) fn count_width(&mut self, width: usize) {
        if width > self.widest {
            (self.widest, self.widest_rows) = (width, 0);
        }
        if width == self.widest {
            self.widest_rows += 1;
        }
    }
}

/// A cut row (or rows joined so far) waiting for the next.
pub(super) struct Waiting {
    pub(super) kind: unwrap::Kind,
    pub(super) text: String,
    pub(super) rows: usize,
    /// Its rows as read, to be read one by one when they turn out not to be
    /// one line; empty while it is one row (`text`: most rows end apart).
    pub(super) parts: Vec<String>,
    /// Its first row's number.
    pub(super) line_no: u64,
    /// The rows before its first row.
    pub(super) before: Before,
    /// Its first row was plain (`Lines::plain`): read alone, it still is.
    pub(super) plain: bool,
}

/// The rows before a waiting row's first, nearest last, for
/// `unwrap::backward`: where the row starts in the region being read (most
/// waiting rows end apart and never look back), or copied when that region
/// ends before the row is joined.
pub(super) enum Before {
    At(usize),
    Rows(Vec<Vec<u8>>),
}

/// What the caller of `Reader::take_line_knowing` knows of the line
/// already (the terminal-cut check read it as text and walked its
/// assertions), so that a glued line is not checked again.
#[derive(Clone, Copy)]
pub(super) struct Known<'a> {
    /// The line as text: valid UTF-8, the same bytes.
    pub(super) text: &'a str,
    /// Whether it holds ROCm's marker (`device_line::has_rocm`).
    pub(super) rocm: bool,
}

impl<'a> Known<'a> {
    /// Row `raw` as `unwrap::row` read it (`cur`), when that is its bytes
    /// (valid UTF-8, no `\r` dropped at its end), with `rocm` when known.
    pub(super) fn row(
        raw: &[u8],
        cur: &std::borrow::Cow<'a, str>,
        rocm: Option<bool>,
    ) -> Option<Self> {
        match (cur, rocm) {
            (std::borrow::Cow::Borrowed(text), Some(rocm)) if text.len() == raw.len() => {
                Some(Known { text, rocm })
            }
            _ => None,
        }
    }
}

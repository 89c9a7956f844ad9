//! What the search of a buffer holds and keeps: the literals sought and
//! their automata (`LineSearch`), and the lines a pass keeps. A leaf: the
//! search (`line_search`), a pass over a buffer (`pass`) and the runs of
//! trigger lines (`runs`) all read it.

use crate::bigram_filter::BigramFilter;
use crate::literal_dfa::LiteralDfa;
use aho_corasick::packed::Searcher;
use memchr::memchr_iter;
use std::sync::OnceLock;

/// A line that matters, inside the buffer searched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Line {
    pub start: usize,
    /// Its `\n` (or the buffer's end).
    pub end: usize,
    /// Lines before it in the buffer.
    pub before: u64,
}

/// A literal of the search: may the line that holds it matter?
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Sought {
    pub(super) len: usize,
    /// A trigger word: the line matters.
    pub(super) trigger: bool,
    /// Its regex wants a word boundary before / after it.
    pub(super) before: bool,
    pub(super) after: bool,
    /// Its ASCII letters match in either case.
    pub(super) fold: bool,
}

impl Sought {
    /// `literal` (no boundary marks) as a trigger word, or as a catalog
    /// literal wanted at the word boundaries given; `fold`: in any case.
    pub fn new(literal: &[u8], trigger: bool, before: bool, after: bool, fold: bool) -> Self {
        Sought {
            len: literal.len(),
            trigger,
            before,
            after,
            fold,
        }
    }
}

/// The lines kept so far, numbered by counting the `\n`s before them.
#[derive(Default)]
pub(super) struct Kept {
    pub(super) lines: Vec<Line>,
    /// Newlines are counted up to here, and there are `before` of them.
    pub(super) counted: usize,
    pub(super) before: u64,
}

impl Kept {
    /// Keep line `hay[start..end]` (`end`: its `\n` or the buffer's end),
    /// after the lines kept so far.
    pub(super) fn keep(&mut self, hay: &[u8], start: usize, end: usize) {
        self.before += newlines(&hay[self.counted..start]);
        self.lines.push(Line {
            start,
            end,
            before: self.before,
        });
        // Its own `\n` is counted here: a run of kept lines is not read twice.
        if end < hay.len() {
            self.before += 1;
            self.counted = end + 1;
        } else {
            self.counted = end;
        }
    }
}

/// How many lines end in `b`.
pub(crate) fn newlines(b: &[u8]) -> u64 {
    memchr_iter(b'\n', b).count() as u64
}

pub struct LineSearch {
    /// Per literal id of the automata.
    pub(super) literals: Vec<Vec<u8>>,
    pub(super) sought: Vec<Sought>,
    /// Per literal id: the regexes (the caller's numbers) it stands for.
    pub(super) owners: Vec<Vec<usize>>,
    /// The literals that end in `\n`.
    pub(super) line_ends: Vec<usize>,
    /// Built for the first buffer of `SMALL` bytes or more: building them
    /// was a third of explaining a short log, which needs none.
    pub(super) automata: OnceLock<Automata>,
    /// Searches a buffer shorter than `SMALL`, built on first use.
    pub(super) small: OnceLock<SmallSearch>,
}

/// What searches a buffer of `SMALL` bytes or more.
pub(super) struct Automata {
    /// Finds the literals in any case: a literal that is not folded is
    /// then checked byte for byte (`cased`).
    pub(super) dfa: LiteralDfa,
    /// Rules out the lines `dfa` need not walk (None: it walks every byte).
    pub(super) bigrams: Option<BigramFilter>,
    /// Rules out the rest of a line being walked (`Pass::walk`): every
    /// literal as the DFA finds it, in any case and whatever follows it.
    pub(super) rest: Option<BigramFilter>,
    /// Finds the lines of a run that hold a trigger word without walking
    /// them (None: no SIMD here).
    pub(super) runs: Option<TriggerRuns>,
}

/// A short buffer's search (`small`): the literal ids by bucket (their
/// first two bytes, folded, hashed), `ids[starts[k]..starts[k + 1]]` for
/// bucket `k`, and those of one byte, `ids[singles]`.
pub(super) struct SmallSearch {
    pub(super) starts: Vec<u32>,
    pub(super) ids: Vec<u32>,
    pub(super) singles: std::ops::Range<u32>,
}

/// The trigger words for finding runs of lines that hold one (`runs`,
/// where its search lives).
pub(super) struct TriggerRuns {
    pub(super) words: Searcher,
}

//! One search of a buffer, line by line: the lines the filter cannot rule
//! out are walked by the DFA, and those that matter kept.

use super::searcher::{Kept, LineSearch};
use crate::bigram_filter::BigramFilter;
use memchr::{memchr, memrchr};
use std::ops::Range;

/// One search of a buffer: what it is for, and what it has kept so far.
pub(super) struct Pass<'a, M> {
    search: &'a LineSearch,
    pub(super) hay: &'a [u8],
    pub(super) max_line: usize,
    retired: &'a [u64],
    matters: &'a M,
    /// Literal ends of the line walked (kept to reuse its buffer).
    hits: Vec<(usize, u32)>,
    pub(super) kept: Kept,
    walked: Walked,
}

impl<'a, M: Fn(&[u8]) -> bool> Pass<'a, M> {
    pub(super) fn new(
        search: &'a LineSearch,
        hay: &'a [u8],
        max_line: usize,
        retired: &'a [u64],
        matters: &'a M,
    ) -> Self {
        Pass {
            search,
            hay,
            max_line,
            retired,
            matters,
            hits: Vec::new(),
            kept: Kept::default(),
            walked: Walked::default(),
        }
    }

    /// Walk line `hay[start..end]` (`end`: its `\n` or the buffer's end) and
    /// keep it if it matters. Returns whether a trigger word in its kept
    /// part settled it.
    pub(super) fn walk(&mut self, start: usize, end: usize) -> bool {
        let s = self.search;
        let a = s.automata();
        let line = &self.hay[start..(end + 1).min(self.hay.len())];
        let slot = Walked::slot(line);
        if let Some((kept, settled)) = self.walked.get(self.hay, slot, line) {
            if kept {
                self.kept.keep(self.hay, start, end);
            }
            return settled;
        }
        // A trigger word in the part kept settles the line.
        let settles = |at: usize, state| {
            a.dfa
                .literals(state)
                .iter()
                .any(|&id| s.sought[id as usize].trigger && s.cased(line, at, id))
        };
        self.hits.clear();
        let walked = &line[..line.len().min(self.max_line)];
        // After a literal that does not settle the line, the rest of the
        // line may hold none (a warning found by one path literal): then
        // the walk stops. Asked a few times a line: each asks the filter.
        let mut asked = 0;
        let quiet = |from: usize| {
            asked += 1;
            asked <= QUIET_ASKS
                && walked.len() - from >= QUIET_REST
                && a.rest
                    .as_ref()
                    .is_some_and(|f| f.next_candidate(walked, from).is_none())
        };
        a.dfa.ends_until(walked, &mut self.hits, settles, quiet);
        let settled = self.hits.last().is_some_and(|&(at, st)| settles(at, st));
        if !settled && line.len() > self.max_line {
            self.hits.clear();
            a.dfa.ends(line, &mut self.hits);
        }
        self.hits.iter_mut().for_each(|h| h.0 += start);
        let at = |state| a.dfa.literals(state);
        s.keep_lines(
            self.hay,
            &self.hits,
            &at,
            self.max_line,
            self.retired,
            self.matters,
            &mut self.kept,
        );
        let kept = self.kept.lines.last().is_some_and(|l| l.start == start);
        self.walked
            .put(slot, start..start + line.len(), kept, settled);
        settled
    }

    /// The next line from `from` (a line's start) up to `upto` (a line's
    /// start, or the end of the buffer's whole lines) that the filter
    /// cannot rule out, walked: where the search goes on, and whether a
    /// trigger word settled the line. None: no such line.
    pub(super) fn next_line(
        &mut self,
        filter: &BigramFilter,
        from: usize,
        upto: usize,
    ) -> Option<(usize, bool)> {
        let hay = self.hay;
        let at = filter.next_candidate(&hay[..upto], from)?;
        let start = memrchr(b'\n', &hay[from..at]).map_or(from, |i| from + i + 1);
        let end = at + memchr(b'\n', &hay[at..upto]).unwrap_or(0);
        let settled = self.walk(start, end);
        Some((end + 1, settled))
    }

    /// Search the lines from `from` up to `upto` (line starts) one by one;
    /// returns `upto`.
    pub(super) fn lines_between(
        &mut self,
        filter: &BigramFilter,
        mut from: usize,
        upto: usize,
    ) -> usize {
        while let Some((next, _)) = self.next_line(filter, from, upto) {
            from = next;
        }
        upto
    }
}

/// How many times a line's walk asks whether the rest of it is quiet, and
/// the least rest worth asking about: the filter is faster than the walk
/// over more than a few bytes, not over a line of literals.
const QUIET_ASKS: usize = 3;
const QUIET_REST: usize = 24;

/// Lines walked in this buffer, in a few slots chosen by their length and
/// ends: a line repeated (a warning logged at every step) is settled by one
/// compare. What a walk decides is a function of the line's bytes (its
/// `\n` included) within one buffer's search: `max_line`, `retired` and
/// `matters` are the search's own, and a hit never starts before the line.
#[derive(Default)]
struct Walked {
    /// (the line in the buffer, kept, settled).
    slots: Vec<Option<(Range<usize>, bool, bool)>>,
}

/// Slots of `Walked` (a power of two), and the longest line remembered.
const SLOTS: usize = 64;
const REMEMBERED: usize = 1024;

impl Walked {
    /// The slot of `line`; None for a line too long to compare cheaply.
    fn slot(line: &[u8]) -> Option<usize> {
        let n = line.len();
        if n > REMEMBERED {
            return None;
        }
        let word = |at: usize| {
            let mut w = [0u8; 8];
            let part = &line[at.min(n)..(at + 8).min(n)];
            w[..part.len()].copy_from_slice(part);
            u64::from_le_bytes(w)
        };
        let key = word(0) ^ word(n.saturating_sub(8)).rotate_left(23) ^ n as u64;
        Some((key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - SLOTS.trailing_zeros())) as usize)
    }

    /// What the walk of the same bytes as `line` decided: (kept, settled).
    fn get(&self, hay: &[u8], slot: Option<usize>, line: &[u8]) -> Option<(bool, bool)> {
        let (was, kept, settled) = self.slots.get(slot?)?.as_ref()?;
        (&hay[was.clone()] == line).then_some((*kept, *settled))
    }

    fn put(&mut self, slot: Option<usize>, line: Range<usize>, kept: bool, settled: bool) {
        if let Some(i) = slot {
            if self.slots.is_empty() {
                self.slots = vec![None; SLOTS];
            }
            self.slots[i] = Some((line, kept, settled));
        }
    }
}

//! The search for the few lines of a buffer that hold one of the sought
//! literals: the reader's hot loop (a 1 GiB log is mostly progress lines).
//!
//! The bigram filter (`bigram_filter`) rules out the lines where no literal
//! can end; the DFA (`literal_dfa`) walks the rest and reports where each
//! literal ends; a literal its regex wants at a word boundary (`\binf\b`)
//! counts only there, so `INFO` is not taken for `inf`. A line found by the
//! literals of regexes the reader wants no more (retired) alone is not
//! asked about (`keep_lines`). A walk stops once a filter of every literal
//! finds none in the rest of the line, and a line walked already in the
//! buffer is settled by a compare (`pass`). Where lines holding a trigger
//! word come one after another (thread reports, traceback frames), a SIMD
//! search for the trigger words finds them without walking them (`runs`).
//! Only the lines that matter come back, in order.

use crate::bigram_filter::{BigramFilter, Pattern};
use crate::literal_dfa::LiteralDfa;
use memchr::{memchr, memrchr};
use pass::Pass;
pub(crate) use searcher::newlines;
use searcher::{Automata, Kept, TriggerRuns};
pub use searcher::{Line, LineSearch, Sought};
use std::sync::OnceLock;

mod pass;
mod runs;
mod searcher;
mod small;
#[cfg(test)]
mod tests;

/// Below this a buffer is searched by comparing each byte with the
/// literals it may start (`small`), not by the DFA and filters, which took
/// a third of explaining a short log to build (about 30 M instructions;
/// the compares cost some 100 a byte).
const SMALL: usize = 64 << 10;

/// Every line of `hay`, and how many it has: the search when a catalog
/// regex needs no literal at all.
pub fn every_line(hay: &[u8]) -> (Vec<Line>, u64) {
    let mut kept = Kept::default();
    let mut start = 0;
    while start < hay.len() {
        let end = memchr(b'\n', &hay[start..]).map_or(hay.len(), |i| start + i);
        kept.keep(hay, start, end);
        start = end + 1;
    }
    (kept.lines, newlines(hay))
}

impl LineSearch {
    /// None when the literals make no DFA (too many, or an empty one).
    /// Each literal comes with the regex it stands for (the caller's
    /// number, see `lines`; None for a trigger word).
    pub fn new(mut literals: Vec<(Vec<u8>, Sought, Option<usize>)>) -> Option<Self> {
        literals.sort();
        literals.dedup();
        let (mut distinct, mut owners) =
            (Vec::<(Vec<u8>, Sought)>::new(), Vec::<Vec<usize>>::new());
        for (literal, sought, owner) in literals {
            if distinct
                .last()
                .is_none_or(|(l, s)| (l, s) != (&literal, &sought))
            {
                distinct.push((literal, sought));
                owners.push(Vec::new());
            }
            owners.last_mut().into_iter().for_each(|o| o.extend(owner));
        }
        let (literals, sought): (Vec<Vec<u8>>, Vec<Sought>) = distinct.into_iter().unzip();
        if !LiteralDfa::fits(&literals, true) {
            return None;
        }
        let line_ends = (0..literals.len())
            .filter(|&i| literals[i].ends_with(b"\n"))
            .collect();
        Some(LineSearch {
            literals,
            sought,
            owners,
            line_ends,
            automata: OnceLock::new(),
            small: OnceLock::new(),
        })
    }

    /// The automata for buffers of `SMALL` bytes or more, built on first use.
    fn automata(&self) -> &Automata {
        self.automata.get_or_init(|| {
            let (literals, sought) = (&self.literals, &self.sought);
            let dfa = LiteralDfa::new(literals, true)
                .unwrap_or_else(|| unreachable!("`new` checked that the DFA fits"));
            let bigrams =
                filter_patterns(literals, sought).and_then(|patterns| BigramFilter::new(&patterns));
            let rest = BigramFilter::new(&literals.iter().map(|l| any_case(l)).collect::<Vec<_>>());
            let runs = TriggerRuns::new(
                (0..literals.len())
                    .filter(|&i| sought[i].trigger)
                    .map(|i| literals[i].as_slice()),
            );
            Automata {
                dfa,
                bigrams,
                rest,
                runs,
            }
        })
    }

    /// Whether the automata for large buffers have been built.
    #[cfg(test)]
    pub fn automata_built(&self) -> bool {
        self.automata.get().is_some()
    }

    /// The lines of `hay` that hold a trigger word, or a catalog literal
    /// that `matters` then accepts (each line cut at `max_line` bytes, as
    /// the reader keeps them), and how many lines `hay` has.
    ///
    /// `matters` is asked only of a line without a trigger word in its
    /// kept part, and not of one whose literals (found in any case, at a
    /// word boundary or not) all stand for regexes `retired` (a bitmap of
    /// the caller's numbers) alone: it must then say no for such a line.
    pub fn lines<M>(
        &self,
        hay: &[u8],
        max_line: usize,
        retired: &[u64],
        matters: &M,
    ) -> (Vec<Line>, u64)
    where
        M: Fn(&[u8]) -> bool,
    {
        if hay.len() < SMALL {
            return self.search_small(hay, max_line, retired, matters);
        }
        let bigrams = self.automata().bigrams.as_ref();
        self.search_with(bigrams, true, hay, max_line, retired, matters)
    }

    /// Whether `line` (one line, its `\n` included) may hold a literal:
    /// false only where the bigram filter rules the whole line out, so
    /// that the search keeps no line there. Nothing is built for it: with
    /// no filter built yet (a log of short buffers), every line may.
    pub fn may_find(&self, line: &[u8]) -> bool {
        self.automata
            .get()
            .and_then(|a| a.bigrams.as_ref())
            .is_none_or(|f| f.next_candidate(line, 0).is_some())
    }

    /// The bigram filter, when one was built (it is for the catalog's literals).
    #[cfg(test)]
    pub fn bigrams(&self) -> Option<&BigramFilter> {
        self.automata().bigrams.as_ref()
    }

    /// The search, with the bigram filter or (`None`) the DFA over every
    /// byte; `runs`: lines holding a trigger word are found by `TriggerRuns`
    /// where they come one after another (with a filter and runs built).
    pub fn search_with<M>(
        &self,
        bigrams: Option<&BigramFilter>,
        runs: bool,
        hay: &[u8],
        max_line: usize,
        retired: &[u64],
        matters: &M,
    ) -> (Vec<Line>, u64)
    where
        M: Fn(&[u8]) -> bool,
    {
        let mut pass = Pass::new(self, hay, max_line, retired, matters);
        match bigrams {
            Some(filter) => {
                // The filter sees whole lines: at the end of the buffer it
                // could not see what follows a word that wants a boundary.
                let whole = memrchr(b'\n', hay).map_or(0, |i| i + 1);
                match self.automata().runs.as_ref().filter(|_| runs) {
                    Some(r) => r.search(&mut pass, filter, whole),
                    None => {
                        pass.lines_between(filter, 0, whole);
                    }
                }
                if whole < hay.len() {
                    pass.walk(whole, hay.len());
                }
            }
            None => {
                let mut hits = Vec::new();
                let dfa = &self.automata().dfa;
                dfa.ends(hay, &mut hits);
                let at = |state| dfa.literals(state);
                self.keep_lines(hay, &hits, &at, max_line, retired, matters, &mut pass.kept);
            }
        }
        let kept = pass.kept;
        let total = kept.before + newlines(&hay[kept.counted..]);
        (kept.lines, total)
    }

    /// Whether literal `id`, which the DFA found ending at `hay[..end]` in
    /// some case, is there in the case it wants.
    fn cased(&self, hay: &[u8], end: usize, id: u32) -> bool {
        let i = id as usize;
        self.sought[i].fold || hay[..end].ends_with(&self.literals[i])
    }

    /// Keep the lines of `hits` (literal ends, in order, each with what
    /// `at` takes to the literals that end there) that matter.
    #[allow(clippy::too_many_arguments)]
    fn keep_lines<'s, M>(
        &self,
        hay: &[u8],
        hits: &[(usize, u32)],
        at: &dyn Fn(u32) -> &'s [u32],
        max_line: usize,
        retired: &[u64],
        matters: &M,
        kept: &mut Kept,
    ) where
        M: Fn(&[u8]) -> bool,
    {
        let mut i = 0;
        while let Some(&(first_end, _)) = hits.get(i) {
            // The line of the literal that ends at `first_end` (it may end with the `\n`).
            let last = first_end - 1;
            let start = memrchr(b'\n', &hay[..last]).map_or(0, |p| p + 1);
            let end = memchr(b'\n', &hay[last..]).map_or(hay.len(), |p| last + p);
            let line = &hay[start..end.min(start + max_line)];
            // `wanted`: some literal found (any case, any boundary) is a
            // trigger word or stands for a regex not retired.
            let (mut found, mut sure, mut wanted) = (false, false, false);
            while let Some(&(e, state)) = hits.get(i).filter(|h| h.0 <= end + 1) {
                i += 1;
                for &id in at(state) {
                    let lit = &self.sought[id as usize];
                    wanted = wanted
                        || lit.trigger
                        || self.owners[id as usize]
                            .iter()
                            .any(|&r| !is_set(retired, r));
                    // A literal that began on an earlier line (a `\n` inside it) counts as found.
                    let bounded = match (e - lit.len).checked_sub(start) {
                        Some(at) => {
                            self.cased(hay, e, id)
                                && at_boundaries(&hay[start..end], at, at + lit.len, lit)
                        }
                        None => true,
                    };
                    if bounded {
                        found = true;
                        // A trigger word inside the kept part settles it without a second look.
                        sure |= lit.trigger && e <= start + max_line;
                    }
                }
            }
            let ask = found && (wanted || self.may_end_with_literal(line));
            if sure || (ask && matters(line)) {
                kept.keep(hay, start, end);
            }
        }
    }

    /// Whether `line` ends, but for trailing white space or in any case,
    /// with a literal that ends in `\n` less its `\n`. The caller's check
    /// may count such a literal there (its line is handed over without the
    /// `\n`, cut at `max_line`, or ends in `\r\n`) where the DFA found none.
    fn may_end_with_literal(&self, line: &[u8]) -> bool {
        let line = line.trim_ascii_end();
        self.line_ends.iter().any(|&i| {
            let stem = &self.literals[i][..self.literals[i].len() - 1];
            line.len() >= stem.len() && line[line.len() - stem.len()..].eq_ignore_ascii_case(stem)
        })
    }
}

/// A literal's bytes, an ASCII letter in either case (as the folded DFA finds it).
fn any_case(literal: &[u8]) -> Pattern {
    literal
        .iter()
        .map(|&b| match b.is_ascii_alphabetic() {
            true => vec![b.to_ascii_lowercase(), b.to_ascii_uppercase()],
            false => vec![b],
        })
        .collect()
}

/// Whether bit `n` of `bits` is set (an empty slice: none is).
fn is_set(bits: &[u64], n: usize) -> bool {
    bits.get(n / 64).is_some_and(|w| w & (1 << (n % 64)) != 0)
}

/// A byte of a word, as `\b` (ASCII) sees it.
fn word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// The search's literals as the bigram filter's patterns: a literal wanted
/// at a word boundary after it brings the bytes that may follow it (those
/// `at_boundaries` accepts), which keeps `inf` from every `INFO`. None when
/// a `\n` is inside a literal: lines could then not be walked alone.
fn filter_patterns(literals: &[Vec<u8>], sought: &[Sought]) -> Option<Vec<Pattern>> {
    let mut out = Vec::with_capacity(literals.len());
    for (l, s) in literals.iter().zip(sought) {
        let (&last, body) = l.split_last()?;
        if body.contains(&b'\n') {
            return None;
        }
        let mut p: Pattern = l
            .iter()
            .map(|&b| match b.is_ascii_alphabetic() && s.fold {
                true => vec![b.to_ascii_lowercase(), b.to_ascii_uppercase()],
                false => vec![b],
            })
            .collect();
        if s.after && last.is_ascii() {
            p.push(
                (0..=255u8)
                    .filter(|&n| !n.is_ascii() || word(n) != word(last) || n == b'E')
                    .collect(),
            );
        }
        out.push(p);
    }
    Some(out)
}

/// Whether the literal at `line[from..to]` has the word boundaries its regex
/// wants. The regex sees the cleaned line, so a neighbour that cleaning may
/// take away (an escape sequence's final letter, a `\n` escape, a
/// timestamp's `Z`) or a byte outside ASCII proves nothing: the literal counts.
fn at_boundaries(line: &[u8], from: usize, to: usize, lit: &Sought) -> bool {
    // Whether `\b` holds between the literal's `edge` byte and its raw neighbour.
    let boundary = |neighbour: Option<u8>, edge: u8| match neighbour {
        None => word(edge),
        Some(n) => !n.is_ascii() || word(n) != word(edge),
    };
    let (Some(&first), Some(&last)) = (line.get(from), line.get(to.wrapping_sub(1))) else {
        return true;
    };
    let hidden = || {
        memchr(0x1b, line).is_some()
            || memchr::memmem::find(line, b"ESC[").is_some()
            || memchr::memmem::find(line, b"^M").is_some()
    };
    if lit.before && first.is_ascii() {
        let prev = from.checked_sub(1).map(|p| line[p]);
        let ok = boundary(prev, first)
            || prev.is_some_and(|prev| {
                (from >= 2
                    && (line[from - 2] == b'\\'
                        || (prev == b'Z' && line[from - 2].is_ascii_digit())))
                    || (word(prev) && hidden())
            });
        if !ok {
            return false;
        }
    }
    !lit.after
        || !last.is_ascii()
        || boundary(line.get(to).copied(), last)
        || line[to..].starts_with(b"ESC[")
}

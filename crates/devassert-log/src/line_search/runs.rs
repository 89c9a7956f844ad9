//! Runs of lines that each hold a trigger word (a burst of thread
//! reports, the frames of a traceback), found by a SIMD search for the
//! trigger words (`aho_corasick::packed`, Teddy) instead of a DFA walk of
//! each line from its start.
//!
//! Why a hit is enough: a trigger word in the part of a line the reader
//! keeps keeps the line, whatever else it holds (`keep_lines`: `sure`), so
//! that line needs no walk. Every other line, those between two hits
//! among them, is searched as before (filter, then walk): the lines kept
//! are the same whichever words the SIMD search finds or misses.

use super::pass::Pass;
use super::searcher::TriggerRuns;
use crate::bigram_filter::BigramFilter;
use aho_corasick::packed::{Config, MatchKind};
use aho_corasick::Span;
use memchr::{memchr, memrchr};
use std::ops::Range;

/// How far ahead a run looks for its next trigger word. Without one there,
/// the run ends and lines are searched one by one again until a walked line
/// holds a trigger word: the bytes both searches read stay few where
/// triggers are rare.
pub(super) const AHEAD: usize = 4 << 10;

impl TriggerRuns {
    /// The trigger words of three bytes and more (Teddy's masks are as
    /// long as its shortest word; two bytes would pass much ordinary text),
    /// none holding a `\n` (a hit then lies in one line). None where no
    /// packed searcher builds (no SIMD on this machine).
    pub(super) fn new<'a>(words: impl Iterator<Item = &'a [u8]>) -> Option<Self> {
        let mut builder = Config::new().match_kind(MatchKind::LeftmostFirst).builder();
        for w in words.filter(|w| w.len() >= 3 && !w.contains(&b'\n')) {
            builder.add(w);
        }
        Some(TriggerRuns {
            words: builder.build()?,
        })
    }

    /// Search the whole lines `hay[..whole]` (`whole`: 0 or just past a
    /// `\n`): line by line until a walked line holds a trigger word, then
    /// from hit to hit while the next is at most `AHEAD` bytes on.
    pub(super) fn search<M: Fn(&[u8]) -> bool>(
        &self,
        pass: &mut Pass<'_, M>,
        filter: &BigramFilter,
        whole: usize,
    ) {
        let hay = pass.hay;
        let (mut from, mut run) = (0, false);
        // The last hit, and where in its line: the next line of a burst
        // most often holds the same word at the same place, which one
        // compare checks (any hit will do, wherever it is: see above).
        let mut last: Option<(usize, Range<usize>)> = None;
        while from < whole {
            if !run {
                match pass.next_line(filter, from, whole) {
                    Some((next, settled)) => (from, run) = (next, settled),
                    None => return,
                }
                continue;
            }
            let again = last.as_ref().and_then(|(offset, word)| {
                let at = from + offset;
                let there = hay[..whole].get(at..at + word.len())? == &hay[word.clone()];
                there.then_some(at..at + word.len())
            });
            let ahead = (from + AHEAD).min(whole);
            let found = || {
                let m = self.words.find_in(&hay[..ahead], Span::from(from..ahead))?;
                Some(m.start()..m.end())
            };
            let Some(hit) = again.or_else(found) else {
                // The lines wholly in the window hold no word searched for
                // (a word across its end is not seen: its line is read on).
                let upto = memrchr(b'\n', &hay[from..ahead]).map_or(from, |i| from + i + 1);
                from = pass.lines_between(filter, from, upto);
                run = false;
                continue;
            };
            let start = memrchr(b'\n', &hay[from..hit.start]).map_or(from, |i| from + i + 1);
            // `hay[whole - 1]` is a `\n` and the hit holds none: found.
            let end = hit.end + memchr(b'\n', &hay[hit.end..whole]).unwrap_or(0);
            pass.lines_between(filter, from, start);
            if hit.end - start <= pass.max_line {
                pass.kept.keep(hay, start, end);
            } else {
                pass.walk(start, end);
            }
            last = Some((hit.start - start, hit));
            from = end + 1;
        }
    }
}

//! An Aho-Corasick DFA over a few hundred literals that reports every place
//! a literal ends, searched on several stretches of the buffer at once.
//!
//! Why not the `aho-corasick` crate's DFA: a DFA step is one load that
//! depends on the previous one, so a single walk waits on memory latency
//! (about 450 MB/s here). Walking three stretches in lock-step keeps three
//! independent chains in flight and runs 2–2.5× faster on the same core
//! (three measured best: with more, the states no longer fit in registers).

use std::collections::VecDeque;

/// Below this a buffer is walked as one stretch.
const SPLIT_MIN: usize = 64 << 10;

/// Largest table built (entries): the catalog's literals, case folded, fit in 2^18.
const MAX_ENTRIES: usize = 1 << 24;

pub struct LiteralDfa {
    /// Byte → column; bytes in no literal share column 0.
    classes: [u8; 256],
    /// Row-major next states, each stored as its row's first index; the
    /// length is a power of two so that masking keeps every index in bounds.
    table: Vec<u32>,
    mask: usize,
    /// Rows from this index on end at least one literal.
    match_from: u32,
    stride: u32,
    /// Per match row, in order: the literals ending there (`outputs[at[i]..at[i + 1]]`).
    outputs: Vec<u32>,
    at: Vec<usize>,
    longest: usize,
    /// Per row: the most bytes of a literal not yet ended that its state
    /// may have read (the depth of the deepest trie node on its failure
    /// chain that goes on). A literal that starts earlier has ended.
    open: Vec<u32>,
}

impl LiteralDfa {
    /// None when the literals would need a table too large to be fast, or
    /// one is empty (it would match everywhere; the start state must not).
    /// `fold`: ASCII letters are one byte in either case, so every literal
    /// is found in any case (the caller checks the case it wants).
    pub fn new<L: AsRef<[u8]>>(literals: &[L], fold: bool) -> Option<Self> {
        Self::new_within(literals, fold, MAX_ENTRIES)
    }

    /// Whether `new` builds a DFA of `literals`, told without building it
    /// (the DFA is built when a large buffer first needs it).
    pub fn fits<L: AsRef<[u8]>>(literals: &[L], fold: bool) -> bool {
        Self::fits_within(literals, fold, MAX_ENTRIES)
    }

    /// [`LiteralDfa::fits`] for a table of at most `max_entries`: a column
    /// per distinct byte (folded) and one for the rest, a row per trie
    /// node (a distinct prefix, folded, the empty one included).
    fn fits_within<L: AsRef<[u8]>>(literals: &[L], fold: bool, max_entries: usize) -> bool {
        let key = |l: &L| -> Vec<u8> {
            match fold {
                true => l.as_ref().to_ascii_lowercase(),
                false => l.as_ref().to_vec(),
            }
        };
        let mut keys: Vec<Vec<u8>> = literals.iter().map(key).collect();
        if keys.iter().any(Vec::is_empty) {
            return false;
        }
        let mut bytes = [false; 256];
        keys.iter()
            .flatten()
            .for_each(|&b| bytes[usize::from(b)] = true);
        let columns = 1 + bytes.iter().filter(|&&b| b).count();
        keys.sort_unstable();
        keys.dedup();
        let mut states = 1;
        for (i, k) in keys.iter().enumerate() {
            let shared = match i.checked_sub(1) {
                Some(p) => k.iter().zip(&keys[p]).take_while(|(a, b)| a == b).count(),
                None => 0,
            };
            states += k.len() - shared;
        }
        columns <= 256
            && states
                .checked_mul(columns)
                .is_some_and(|n| n <= max_entries)
    }

    fn new_within<L: AsRef<[u8]>>(literals: &[L], fold: bool, max_entries: usize) -> Option<Self> {
        if literals.iter().any(|l| l.as_ref().is_empty()) {
            return None;
        }
        let mut classes = [0u8; 256];
        let mut columns = 1usize;
        for l in literals {
            for &b in l.as_ref() {
                if classes[usize::from(b)] == 0 {
                    let column = u8::try_from(columns).ok()?;
                    classes[usize::from(b)] = column;
                    if fold && b.is_ascii_alphabetic() {
                        classes[usize::from(b.to_ascii_lowercase())] = column;
                        classes[usize::from(b.to_ascii_uppercase())] = column;
                    }
                    columns += 1;
                }
            }
        }
        const NONE: u32 = u32::MAX;
        // The trie, with the literals ending at each node: state `s`'s
        // transitions are `delta[s * columns..][..columns]` (one table, not
        // a row each: building the DFA is a good part of a short run).
        let mut delta: Vec<u32> = vec![NONE; columns];
        let mut ends: Vec<Vec<u32>> = vec![Vec::new()];
        let mut depth: Vec<u32> = vec![0];
        for (id, l) in literals.iter().enumerate() {
            let mut s = 0;
            for &b in l.as_ref() {
                let c = usize::from(classes[usize::from(b)]);
                if delta[s * columns + c] == NONE {
                    delta[s * columns + c] = u32::try_from(ends.len()).ok()?;
                    delta.resize(delta.len() + columns, NONE);
                    ends.push(Vec::new());
                    depth.push(depth[s] + 1);
                }
                s = delta[s * columns + c] as usize;
            }
            ends[s].push(u32::try_from(id).ok()?);
        }
        let states = ends.len();
        if states.checked_mul(columns)? > max_entries {
            return None;
        }
        // Breadth first: a state's failure link is shallower, so its
        // transitions and outputs are complete when the state is reached,
        // and its missing transitions (NONE) become its failure's, in place.
        let mut fail = vec![0u32; states];
        let mut queue = VecDeque::new();
        for t in &mut delta[..columns] {
            match *t {
                NONE => *t = 0,
                t => queue.push_back(t as usize),
            }
        }
        // States by depth: a failure link is shallower, so its `open` is known first.
        let mut open = vec![0u32; states];
        while let Some(s) = queue.pop_front() {
            let f = fail[s] as usize;
            let (row, failed) = (s * columns, f * columns);
            open[s] = match delta[row..row + columns].iter().any(|&t| t != NONE) {
                true => depth[s],
                false => open[f],
            };
            let inherited = ends[f].clone();
            ends[s].extend(inherited);
            // `f`'s row is complete (it is shallower), and no row of `s`.
            for c in 0..columns {
                let via_fail = delta[failed + c];
                match delta[row + c] {
                    NONE => delta[row + c] = via_fail,
                    child => {
                        fail[child as usize] = via_fail;
                        queue.push_back(child as usize);
                    }
                }
            }
        }
        // Match states last, so that one comparison tells a match.
        let mut order: Vec<usize> = (0..states).collect();
        order.sort_by_key(|&s| (!ends[s].is_empty(), s));
        let mut row = vec![0u32; states];
        for (i, &s) in order.iter().enumerate() {
            row[s] = u32::try_from(i * columns).ok()?;
        }
        let first_match = order
            .iter()
            .position(|&s| !ends[s].is_empty())
            .unwrap_or(states);
        let mut table = vec![0u32; (states * columns).next_power_of_two()];
        for (s, next) in delta.chunks_exact(columns).enumerate() {
            let r = row[s] as usize;
            for (entry, &t) in table[r..r + columns].iter_mut().zip(next) {
                *entry = row[t as usize];
            }
        }
        let open = order.iter().map(|&s| open[s]).collect();
        let (mut outputs, mut at) = (Vec::new(), vec![0]);
        for &s in &order[first_match..] {
            outputs.extend(&ends[s]);
            at.push(outputs.len());
        }
        Some(LiteralDfa {
            classes,
            mask: table.len() - 1,
            table,
            match_from: u32::try_from(first_match * columns).ok()?,
            stride: u32::try_from(columns).ok()?,
            outputs,
            at,
            longest: literals.iter().map(|l| l.as_ref().len()).max().unwrap_or(0),
            open,
        })
    }

    /// The literals that end at a place `ends` reported.
    pub fn literals(&self, state: u32) -> &[u32] {
        let i = ((state - self.match_from) / self.stride) as usize;
        &self.outputs[self.at[i]..self.at[i + 1]]
    }

    #[inline(always)]
    fn step(&self, s: u32, b: u8) -> u32 {
        let i = (s as usize + usize::from(self.classes[usize::from(b)])) & self.mask;
        // SAFETY: the table's length is a power of two and `mask` is that
        // length less one, so `i` is in bounds whatever `s` and `b` are. (The
        // bounds check would cost a quarter of the search: LLVM cannot see it.)
        unsafe { *self.table.get_unchecked(i) }
    }

    /// Walk `hay` from state `s`, pushing (end offset, state) of every
    /// match; offsets count from `base`.
    fn walk(&self, mut s: u32, hay: &[u8], base: usize, out: &mut Vec<(usize, u32)>) -> u32 {
        for (i, &b) in hay.iter().enumerate() {
            s = self.step(s, b);
            if s >= self.match_from {
                out.push((base + i + 1, s));
            }
        }
        s
    }

    /// Like `ends` on one short stretch (a line), but stops after the first
    /// match (end, state) that `enough` accepts, or after a match that
    /// `enough` does not accept when `quiet` says that no literal lies
    /// wholly in `hay[from..]`, `from` being where any literal not ended
    /// yet starts at the earliest (`open`): every literal of `hay` has then
    /// been reported.
    pub fn ends_until(
        &self,
        hay: &[u8],
        out: &mut Vec<(usize, u32)>,
        enough: impl Fn(usize, u32) -> bool,
        mut quiet: impl FnMut(usize) -> bool,
    ) {
        let mut s = 0;
        for (i, &b) in hay.iter().enumerate() {
            s = self.step(s, b);
            if s >= self.match_from {
                out.push((i + 1, s));
                if enough(i + 1, s) || quiet(i + 1 - self.open(s)) {
                    return;
                }
            }
        }
    }

    /// The most bytes of a literal not ended yet that state `s` has read.
    fn open(&self, s: u32) -> usize {
        self.open[(s / self.stride) as usize] as usize
    }

    /// Every place in `hay` where a literal ends: (offset just past its
    /// last byte, the state to ask `literals` about), in order.
    pub fn ends(&self, hay: &[u8], out: &mut Vec<(usize, u32)>) {
        let len = hay.len() / 3;
        if hay.len() < SPLIT_MIN || len <= self.longest {
            self.walk(0, hay, 0, out);
            return;
        }
        let (b1, b2, b3) = (len, 2 * len, 3 * len);
        // Stretches 1 and 2 start `longest` bytes early, matches there
        // ignored: a literal ending in the stretch lies wholly in what it read.
        let warm = |at: usize| self.walk(0, &hay[at - self.longest..at], 0, &mut Vec::new());
        // Named states, not an array: they must stay in registers.
        let (mut s0, mut s1, mut s2) = (0, warm(b1), warm(b2));
        let m = self.match_from;
        let (mut f1, mut f2) = (Vec::new(), Vec::new());
        let stretches = hay[..b1].iter().zip(&hay[b1..b2]).zip(&hay[b2..b3]);
        for (i, ((&x0, &x1), &x2)) in stretches.enumerate() {
            s0 = self.step(s0, x0);
            s1 = self.step(s1, x1);
            s2 = self.step(s2, x2);
            if s0 >= m {
                out.push((i + 1, s0));
            }
            if s1 >= m {
                f1.push((b1 + i + 1, s1));
            }
            if s2 >= m {
                f2.push((b2 + i + 1, s2));
            }
        }
        out.extend_from_slice(&f1);
        out.extend_from_slice(&f2);
        self.walk(s2, &hay[b3..], b3, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Every (end, literal) pair, by brute force.
    fn naive(lits: &[Vec<u8>], hay: &[u8]) -> Vec<(usize, u32)> {
        let mut v = Vec::new();
        for end in 1..=hay.len() {
            for (id, l) in lits.iter().enumerate() {
                if hay[..end].ends_with(l) {
                    v.push((end, id as u32));
                }
            }
        }
        v
    }

    fn found(d: &LiteralDfa, hay: &[u8]) -> Vec<(usize, u32)> {
        let mut ends = Vec::new();
        d.ends(hay, &mut ends);
        let mut v: Vec<(usize, u32)> = ends
            .iter()
            .flat_map(|&(e, s)| d.literals(s).iter().map(move |&l| (e, l)))
            .collect();
        v.sort();
        v
    }

    #[test]
    fn overlapping_and_nested_literals_all_end() {
        let lits: Vec<Vec<u8>> = ["inf", "info", "nf", "-1,", "-1\n", "Assertion", "sert"]
            .iter()
            .map(|s| s.as_bytes().to_vec())
            .collect();
        let d = LiteralDfa::new(&lits, false).expect("small");
        let hay = b"INFO info -1, -1\nAssertion inf";
        let mut want = naive(&lits, hay);
        want.sort();
        assert_eq!(found(&d, hay), want);
        assert!(LiteralDfa::new(&["inf", ""], false).is_none());
        assert!(!LiteralDfa::fits(&["inf", ""], false));
        // A column per distinct byte and one for the rest: 255 bytes fit, 256 do not.
        let bytes: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
        for (lits, fit) in [(&bytes[1..], true), (&bytes[..], false)] {
            assert_eq!(LiteralDfa::new(lits, false).is_some(), fit);
            assert_eq!(LiteralDfa::fits(lits, false), fit);
        }
        // Folded, every literal is found in any case.
        let d = LiteralDfa::new(&lits, true).expect("small");
        let lower = hay.to_ascii_lowercase();
        let lits_lower: Vec<Vec<u8>> = lits.iter().map(|l| l.to_ascii_lowercase()).collect();
        let mut want = naive(&lits_lower, &lower);
        want.sort();
        assert_eq!(found(&d, hay), want);
    }

    proptest! {
        /// `fits` says whether `new` builds, without building: empty
        /// literals, tables just past the limit (literals over a few bytes,
        /// which share prefixes), and many distinct bytes.
        #[test]
        fn fits_says_whether_new_builds(
            lits in prop::collection::vec(
                prop::collection::vec(prop::sample::select(b"abAB-\xff".to_vec()), 0..8),
                1..24,
            ),
            wide in prop::collection::vec(prop::collection::vec(any::<u8>(), 1..40), 1..24),
            fold: bool,
        ) {
            // The table's exact size: a row per state, a column per class.
            let entries = |d: LiteralDfa| d.open.len() * d.stride as usize;
            match LiteralDfa::new_within(&lits, fold, usize::MAX).map(entries) {
                None => prop_assert!(!LiteralDfa::fits_within(&lits, fold, usize::MAX)),
                Some(n) => {
                    for max in [n - 1, n] {
                        let built = LiteralDfa::new_within(&lits, fold, max).is_some();
                        prop_assert_eq!(built, max == n);
                        prop_assert_eq!(LiteralDfa::fits_within(&lits, fold, max), built);
                    }
                }
            }
            let built = LiteralDfa::new(&wide, fold).is_some();
            prop_assert_eq!(LiteralDfa::fits(&wide, fold), built);
        }

        /// Long buffers are walked in stretches: a literal across a
        /// stretch's start is still found, once.
        #[test]
        fn stretches_find_what_one_walk_finds(
            lits in prop::collection::vec(prop::collection::vec(b'a'..=b'e', 1..6), 1..12),
            seed in prop::collection::vec(b'a'..=b'f', 1..64),
            reps in 1usize..4000,
        ) {
            let hay: Vec<u8> = seed.iter().cycle().take(seed.len() * reps).copied().collect();
            let d = LiteralDfa::new(&lits, false).expect("small");
            let mut want = naive(&lits, &hay);
            want.sort();
            prop_assert_eq!(found(&d, &hay), want);
        }

        /// A walk that stops once no literal lies wholly in the text from
        /// `open` before a match (told here by brute force) has reported
        /// every literal that a full walk reports: a literal that has not
        /// ended yet starts no earlier.
        #[test]
        fn a_walk_stopped_where_nothing_is_left_misses_nothing(
            lits in prop::collection::vec(prop::collection::vec(prop::sample::select(b"abcAB".to_vec()), 1..6), 1..12),
            hay in prop::collection::vec(prop::sample::select(b"abcABd".to_vec()), 0..200),
            fold: bool,
        ) {
            let d = LiteralDfa::new(&lits, fold).expect("small");
            let seen = |l: &[u8]| if fold { l.to_ascii_lowercase() } else { l.to_vec() };
            let lits_seen: Vec<Vec<u8>> = lits.iter().map(|l| seen(l)).collect();
            let none_left = |from: usize| naive(&lits_seen, &seen(&hay[from..])).is_empty();
            let mut ends = Vec::new();
            d.ends_until(&hay, &mut ends, |_, _| false, none_left);
            let mut stopped: Vec<(usize, u32)> = ends
                .iter()
                .flat_map(|&(e, s)| d.literals(s).iter().map(move |&l| (e, l)))
                .collect();
            stopped.sort();
            prop_assert_eq!(stopped, found(&d, &hay));
        }
    }
}

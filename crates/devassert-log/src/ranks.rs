//! The ranks a log names, counted exactly in bounded memory: runs of
//! consecutive ranks are kept as ranges, so a million ranks 0..1M take one
//! entry; past [`MAX_RANGES`] scattered ranges, a new rank from 0 to
//! [`BITMAP_RANKS`] − 1 is set in a bitmap of 8 KiB chunks, allocated as
//! ranks reach them, from a budget that all the sets of one reader share
//! ([`RankBudget`]: 2 MiB, one set's bitmap over every such rank). A rank
//! that fits in neither is not counted: its line is (`untracked`).

use std::collections::BTreeMap;

/// Ranges kept; ranks that would need another one go to the bitmap.
pub const MAX_RANGES: usize = 1024;
/// Ranks a bitmap can hold: 0 to 2^24 − 1 (2 MiB of bits).
pub const BITMAP_RANKS: i64 = 1 << 24;
/// Ranks one chunk of a bitmap covers (8 KiB).
const CHUNK_RANKS: i64 = 1 << 16;
const CHUNK_WORDS: usize = (CHUNK_RANKS / 64) as usize;

/// Bitmap chunks that the rank sets of one reader may hold together.
#[derive(Debug)]
pub struct RankBudget {
    chunks_left: usize,
}

impl Default for RankBudget {
    /// 2 MiB: enough for one set over every rank a bitmap holds.
    fn default() -> Self {
        RankBudget {
            chunks_left: (BITMAP_RANKS / CHUNK_RANKS) as usize,
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RankSet {
    /// start → end (inclusive), disjoint and not touching.
    ranges: BTreeMap<i64, i64>,
    /// Ranks that came when the ranges were full: chunk → its bits. A rank
    /// is in the ranges or here, never both.
    bits: BTreeMap<i64, Box<[u64; CHUNK_WORDS]>>,
    /// Distinct ranks counted.
    count: u64,
    /// Lines whose rank was not counted (it fit in neither the ranges nor
    /// the bitmap): the count of ranks is then a lower bound.
    untracked: u64,
}

impl RankSet {
    pub fn insert(&mut self, r: i64, budget: &mut RankBudget) {
        let before = self.ranges.range(..=r).next_back().map(|(&s, &e)| (s, e));
        if before.is_some_and(|(_, e)| e >= r) || self.has_bit(r) {
            return;
        }
        let joins_before = before.filter(|&(_, e)| e.checked_add(1) == Some(r));
        let after = r
            .checked_add(1)
            .and_then(|n| self.ranges.get(&n).map(|&e| (n, e)));
        match (joins_before, after) {
            (Some((s, _)), Some((n, e))) => {
                self.ranges.remove(&n);
                self.ranges.insert(s, e);
            }
            (Some((s, _)), None) => {
                self.ranges.insert(s, r);
            }
            (None, Some((n, e))) => {
                self.ranges.remove(&n);
                self.ranges.insert(r, e);
            }
            (None, None) if self.ranges.len() >= MAX_RANGES => {
                if !self.set_bit(r, budget) {
                    self.untracked += 1;
                    return;
                }
            }
            (None, None) => {
                self.ranges.insert(r, r);
            }
        }
        self.count += 1;
    }

    /// [`RankSet::insert`] for each of `n` lines of rank `r`: a rank that
    /// does not fit leaves every one of them untracked.
    pub fn insert_lines(&mut self, r: i64, n: u64, budget: &mut RankBudget) {
        if n == 0 {
            return;
        }
        let untracked = self.untracked;
        self.insert(r, budget);
        if self.untracked > untracked {
            self.untracked += n - 1;
        }
    }

    fn has_bit(&self, r: i64) -> bool {
        !self.bits.is_empty()
            && self
                .bits
                .get(&r.div_euclid(CHUNK_RANKS))
                .is_some_and(|c| c[word(r)] & bit(r) != 0)
    }

    /// Set `r` in the bitmap; false when it cannot hold it.
    fn set_bit(&mut self, r: i64, budget: &mut RankBudget) -> bool {
        if !(0..BITMAP_RANKS).contains(&r) {
            return false;
        }
        let chunk = match self.bits.entry(r / CHUNK_RANKS) {
            std::collections::btree_map::Entry::Occupied(c) => c.into_mut(),
            std::collections::btree_map::Entry::Vacant(v) => {
                if budget.chunks_left == 0 {
                    return false;
                }
                budget.chunks_left -= 1;
                v.insert(Box::new([0; CHUNK_WORDS]))
            }
        };
        chunk[word(r)] |= bit(r);
        true
    }

    pub fn contains(&self, r: i64) -> bool {
        self.ranges
            .range(..=r)
            .next_back()
            .is_some_and(|(_, &e)| e >= r)
            || self.has_bit(r)
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Distinct ranks counted.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Lines whose rank could not be counted.
    pub fn untracked(&self) -> u64 {
        self.untracked
    }

    /// The highest rank counted.
    pub fn max(&self) -> Option<i64> {
        let range = self.ranges.last_key_value().map(|(_, &e)| e);
        let bit = self.bit_ranks().next_back();
        range.max(bit)
    }

    /// Every counted rank, lowest first.
    pub fn iter(&self) -> impl Iterator<Item = i64> + '_ {
        let mut ranges = self.ranges.iter().flat_map(|(&s, &e)| s..=e).peekable();
        let mut bits = self.bit_ranks().peekable();
        // Two sorted, disjoint sequences merged.
        std::iter::from_fn(move || match (ranges.peek(), bits.peek()) {
            (Some(a), Some(b)) if b < a => bits.next(),
            (Some(_), _) => ranges.next(),
            (None, _) => bits.next(),
        })
    }

    /// The ranks in the bitmap, lowest first.
    fn bit_ranks(&self) -> impl DoubleEndedIterator<Item = i64> + '_ {
        self.bits.iter().flat_map(|(&c, words)| {
            words.iter().enumerate().flat_map(move |(w, &word)| {
                let base = c * CHUNK_RANKS + 64 * w as i64;
                (0..64)
                    .filter(move |i| word & (1 << i) != 0)
                    .map(move |i| base + i)
            })
        })
    }
}

fn word(r: i64) -> usize {
    (r.rem_euclid(CHUNK_RANKS) / 64) as usize
}

fn bit(r: i64) -> u64 {
    1 << r.rem_euclid(64)
}

impl FromIterator<i64> for RankSet {
    /// The ranks, with a budget of their own.
    fn from_iter<I: IntoIterator<Item = i64>>(iter: I) -> Self {
        let mut s = RankSet::default();
        let mut budget = RankBudget::default();
        for r in iter {
            s.insert(r, &mut budget);
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` lines of one rank at once count as `n` lines one by one: in the
    /// ranges, in the bitmap, and untracked once both are full.
    #[test]
    fn lines_of_one_rank_count_as_each_line() {
        let full = |budget: &mut RankBudget| {
            let mut s = RankSet::default();
            for r in 0..MAX_RANGES as i64 {
                s.insert(r * 2, budget);
            }
            s
        };
        for r in [1, 5_000, -7, BITMAP_RANKS + 3] {
            for n in [1, 2, 9] {
                let (mut b1, mut b2) = (RankBudget::default(), RankBudget::default());
                let (mut each, mut at_once) = (full(&mut b1), full(&mut b2));
                for _ in 0..n {
                    each.insert(r, &mut b1);
                }
                at_once.insert_lines(r, n, &mut b2);
                assert_eq!(at_once, each, "rank {r}, {n} lines");
                assert_eq!(at_once.untracked(), each.untracked());
            }
        }
        assert_eq!(full(&mut RankBudget::default()).untracked(), 0);
    }

    #[test]
    fn ranges_merge_and_count() {
        let s: RankSet = [5, 3, 4, 9, 4, 10, 8, 0, i64::MAX, i64::MIN]
            .into_iter()
            .collect();
        assert_eq!(
            s.iter().collect::<Vec<_>>(),
            vec![i64::MIN, 0, 3, 4, 5, 8, 9, 10, i64::MAX]
        );
        assert_eq!(s.count(), 9);
        assert_eq!(s.max(), Some(i64::MAX));
        assert!(s.contains(4) && s.contains(10) && !s.contains(6) && !s.contains(11));
        assert_eq!(s.ranges.len(), 5);
        assert!(s.bits.is_empty());
    }

    #[test]
    fn a_million_ranks_take_one_range() {
        let s: RankSet = (0..1_000_000).rev().collect();
        assert_eq!(
            (s.ranges.len(), s.count(), s.untracked(), s.max()),
            (1, 1_000_000, 0, Some(999_999))
        );
    }

    #[test]
    fn scattered_ranks_past_the_ranges_are_counted_exactly_in_the_bitmap() {
        // Every third rank, as the NCCL watchdog lines of 66,667 ranks name them; twice.
        let ranks: Vec<i64> = (0..200_000).step_by(3).collect();
        let s: RankSet = ranks.iter().chain(ranks.iter().rev()).copied().collect();
        assert_eq!(s.ranges.len(), MAX_RANGES);
        assert_eq!((s.count(), s.untracked()), (66_667, 0));
        assert_eq!(s.max(), Some(199_998));
        // Four 8 KiB chunks for ranks up to 199,998.
        assert_eq!(s.bits.len(), 4);
        assert_eq!(s.iter().collect::<Vec<_>>(), ranks);
        assert!(s.contains(3 * 1024) && s.contains(199_998) && !s.contains(199_997));
    }

    #[test]
    fn a_rank_next_to_a_range_and_in_the_bitmap_is_counted_once() {
        let mut budget = RankBudget::default();
        let mut s = RankSet::default();
        for r in (0..MAX_RANGES as i64).map(|r| r * 10) {
            s.insert(r, &mut budget);
        }
        s.insert(5, &mut budget); // a new range would be needed: the bitmap
        s.insert(4, &mut budget); // no range joins 4: the bitmap
        s.insert(1, &mut budget); // joins 0's range
        for r in [1, 4, 5, 0] {
            s.insert(r, &mut budget);
        }
        assert_eq!(s.count(), MAX_RANGES as u64 + 3);
        let first: Vec<i64> = s.iter().take(6).collect();
        assert_eq!(first, vec![0, 1, 4, 5, 10, 20]);
    }

    #[test]
    fn ranks_past_the_bound_are_counted_as_lines() {
        // Negative and past 2^24: no bitmap holds them.
        let far: Vec<i64> = (0..2000)
            .map(|r| BITMAP_RANKS + 2 * r)
            .chain([-7, -7])
            .collect();
        let s: RankSet = far.into_iter().collect();
        assert_eq!(s.count(), MAX_RANGES as u64);
        assert_eq!(s.untracked(), 2000 - MAX_RANGES as u64 + 2);
        // One budget for many sets: spent, the next set's scattered ranks are lines.
        let mut budget = RankBudget::default();
        let mut sets = vec![RankSet::default(), RankSet::default()];
        for s in &mut sets {
            // Scattered negative ranks fill the ranges; then one rank per chunk.
            let ranks = (0..MAX_RANGES as i64).map(|r| -2 * r - 2);
            for r in ranks.chain((0..256).map(|c| c * CHUNK_RANKS)) {
                s.insert(r, &mut budget);
            }
        }
        assert_eq!((sets[0].count(), sets[0].untracked()), (1280, 0));
        assert_eq!(
            (sets[1].count(), sets[1].untracked()),
            (MAX_RANGES as u64, 256)
        );
    }
}

//! The ranks a log names, in bounded memory: runs of consecutive ranks are
//! kept as ranges, so a million ranks 0..1M take one entry; past
//! [`MAX_RANGES`] scattered ranges, new ranks are counted, not kept.

use std::collections::BTreeMap;

/// Ranges kept; ranks that would need another one are only counted.
pub const MAX_RANGES: usize = 1024;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RankSet {
    /// start → end (inclusive), disjoint and not touching.
    ranges: BTreeMap<i64, i64>,
    /// Distinct ranks kept.
    count: u64,
    /// Lines whose rank was not kept (the set was full): the count of ranks
    /// is then a lower bound.
    untracked: u64,
}

impl RankSet {
    pub fn insert(&mut self, r: i64) {
        let before = self.ranges.range(..=r).next_back().map(|(&s, &e)| (s, e));
        if before.is_some_and(|(_, e)| e >= r) {
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
                self.untracked += 1;
                return;
            }
            (None, None) => {
                self.ranges.insert(r, r);
            }
        }
        self.count += 1;
    }

    pub fn contains(&self, r: i64) -> bool {
        self.ranges
            .range(..=r)
            .next_back()
            .is_some_and(|(_, &e)| e >= r)
    }

    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    /// Distinct ranks kept.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Lines whose rank could not be kept.
    pub fn untracked(&self) -> u64 {
        self.untracked
    }

    /// Every kept rank, lowest first.
    pub fn iter(&self) -> impl Iterator<Item = i64> + '_ {
        self.ranges.iter().flat_map(|(&s, &e)| s..=e)
    }

    /// Add every rank of `other`.
    pub fn extend(&mut self, other: &RankSet) {
        for r in other.iter() {
            self.insert(r);
        }
        self.untracked += other.untracked;
    }
}

impl FromIterator<i64> for RankSet {
    fn from_iter<I: IntoIterator<Item = i64>>(iter: I) -> Self {
        let mut s = RankSet::default();
        for r in iter {
            s.insert(r);
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert!(s.contains(4) && s.contains(10) && !s.contains(6) && !s.contains(11));
        assert_eq!(s.ranges.len(), 5);
    }

    #[test]
    fn a_million_ranks_take_one_range_and_scattered_ones_are_capped() {
        let s: RankSet = (0..1_000_000).rev().collect();
        assert_eq!(
            (s.ranges.len(), s.count(), s.untracked()),
            (1, 1_000_000, 0)
        );
        let s: RankSet = (0..100_000).map(|r| r * 2).collect();
        assert_eq!(s.ranges.len(), MAX_RANGES);
        assert_eq!(s.count(), MAX_RANGES as u64);
        assert_eq!(s.untracked(), 100_000 - MAX_RANGES as u64);
    }
}

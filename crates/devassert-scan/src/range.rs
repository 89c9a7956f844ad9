//! What a range check found in one array: the result type the kernel
//! produces and the readers that scan batch by batch fold together.

use std::collections::HashMap;

/// Distinct bad values tracked per scan; beyond this only the total is exact.
const MAX_TRACKED_VALUES: usize = 4096;

/// What one scan of a [`Values`] found.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RangeResult {
    pub scanned: u64,
    /// Over values that are not ignored; `None` when there are none.
    pub min: Option<i64>,
    pub max: Option<i64>,
    pub bad: u64,
    /// Bad value → count (complete unless `values_truncated`).
    pub bad_values: HashMap<i64, u64>,
    pub values_truncated: bool,
    /// The first bad values in storage order: (storage index, value).
    pub first: Vec<(u64, i64)>,
}

impl RangeResult {
    /// Fold in the result of the values that follow, `base` values in:
    /// what a reader that scans as it decodes sums up batch by batch.
    pub fn absorb(&mut self, other: RangeResult, base: u64, limit: usize) {
        self.scanned += other.scanned;
        self.min = match (self.min, other.min) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        self.max = match (self.max, other.max) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        self.bad += other.bad;
        for (v, k) in other.bad_values {
            self.count_value(v, k);
        }
        self.values_truncated |= other.values_truncated;
        let room = limit.saturating_sub(self.first.len());
        let more = other.first.into_iter().take(room);
        self.first.extend(more.map(|(i, v)| (base + i, v)));
    }

    /// Count `k` more of bad value `v`, while fewer than
    /// `MAX_TRACKED_VALUES` distinct values are tracked.
    pub(crate) fn count_value(&mut self, v: i64, k: u64) {
        if self.bad_values.len() < MAX_TRACKED_VALUES || self.bad_values.contains_key(&v) {
            *self.bad_values.entry(v).or_insert(0) += k;
        } else {
            self.values_truncated = true;
        }
    }
}

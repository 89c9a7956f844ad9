//! The ranks a finding or a fallout item names: listed up to a bound, with
//! their count and highest when the list does not hold them all.

use crate::ranks::RankSet;
use serde_json::{json, Map, Value};

/// Ranks listed in a finding's evidence or a fallout item; `ranks_total`
/// says how many there were when that is more.
pub(super) const RANKS_LISTED: usize = 256;

/// The count of ranks, when the list does not hold them all.
pub(super) fn ranks_total(ranks: &RankSet) -> Option<u64> {
    (ranks.count() > RANKS_LISTED as u64 || ranks.untracked() > 0).then_some(ranks.count())
}

/// The highest rank, when the list does not hold them all.
pub(super) fn ranks_max(ranks: &RankSet) -> Option<i64> {
    ranks_total(ranks).and(ranks.max())
}

/// Lines whose rank was past what the rank set could count.
pub(super) fn ranks_uncounted(ranks: &RankSet) -> Option<u64> {
    (ranks.untracked() > 0).then_some(ranks.untracked())
}

/// `ranks`; `ranks_total` and `ranks_max` when the list does not hold them
/// all; `ranks_uncounted` and `ranks_total_at_least` when lines named ranks
/// past what was counted (the count is then a lower bound).
pub(super) fn rank_evidence(evidence: &mut Map<String, Value>, ranks: &RankSet) {
    let listed: Vec<i64> = ranks.iter().take(RANKS_LISTED).collect();
    evidence.insert("ranks".into(), json!(listed));
    if let Some(total) = ranks_total(ranks) {
        evidence.insert("ranks_total".into(), json!(total));
    }
    if let Some(max) = ranks_max(ranks) {
        evidence.insert("ranks_max".into(), json!(max));
    }
    if let Some(n) = ranks_uncounted(ranks) {
        evidence.insert("ranks_uncounted".into(), json!(n));
        evidence.insert("ranks_total_at_least".into(), json!(true));
    }
}

//! Ranks as a reader takes them in, for the human renderer and the CLI.

use crate::finding::Fallout;

/// What a list of the first ranks leaves out (the report's `ranks_total`,
/// `ranks_max`, `ranks_uncounted`, `ranks_total_at_least`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RanksBeyond {
    /// How many ranks in all.
    pub total: Option<u64>,
    /// The highest rank.
    pub max: Option<i64>,
    /// Lines whose rank was not counted.
    pub uncounted: Option<u64>,
    /// `total` is a lower bound.
    pub at_least: bool,
}

impl RanksBeyond {
    /// What a finding's evidence says.
    pub fn of_evidence(e: &serde_json::Map<String, serde_json::Value>) -> Self {
        use serde_json::Value;
        RanksBeyond {
            total: e.get("ranks_total").and_then(Value::as_u64),
            max: e.get("ranks_max").and_then(Value::as_i64),
            uncounted: e.get("ranks_uncounted").and_then(Value::as_u64),
            at_least: e.get("ranks_total_at_least").and_then(Value::as_bool) == Some(true),
        }
    }

    /// What a fallout entry says.
    pub fn of_fallout(f: &Fallout) -> Self {
        RanksBeyond {
            total: f.ranks_total,
            max: f.ranks_max,
            uncounted: f.ranks_uncounted,
            at_least: f.ranks_total_at_least,
        }
    }

    /// For several lists of the same log's ranks: the largest count, the
    /// highest rank, the most lines not counted.
    pub fn widest(self, other: Self) -> Self {
        RanksBeyond {
            total: self.total.max(other.total),
            max: self.max.max(other.max),
            uncounted: self.uncounted.max(other.uncounted),
            at_least: self.at_least || other.at_least,
        }
    }
}

/// Ranks as a reader takes them in: `rank 3`, `ranks 0, 1, 4-7`, or for many
/// scattered ranks, their count and span (a log from 1M ranks would make a
/// list megabytes long). `ranks` must be sorted and without duplicates.
pub fn rank_list(ranks: &[i64], beyond: RanksBeyond) -> String {
    let listed = listed_ranks(ranks);
    let (Some(&lo), Some(&last)) = (ranks.first(), ranks.last()) else {
        return listed;
    };
    let total = beyond.total.unwrap_or(0).max(ranks.len() as u64);
    let more = total - ranks.len() as u64;
    let counted = match beyond.max.map(|m| m.max(last)) {
        // The count and the span: `ranks 0-999999`, `66667 ranks from 0 to 199998`.
        Some(hi) if more > 0 || hi > last => {
            if i128::from(hi) - i128::from(lo) + 1 == i128::from(total) {
                format!("ranks {lo}-{hi}")
            } else {
                format!("{total} ranks from {lo} to {hi}")
            }
        }
        // A report without the highest rank.
        _ if more > 0 => match beyond.at_least && beyond.uncounted.is_none() {
            true => format!("{listed}, and at least {more} more"),
            false => format!("{listed}, and {more} more"),
        },
        _ => listed,
    };
    match beyond.uncounted {
        Some(n) if n > 0 => format!(
            "{counted}, and {n} line{} naming ranks not counted",
            if n == 1 { "" } else { "s" }
        ),
        _ if beyond.at_least && more == 0 => format!("{counted}, and more"),
        _ => counted,
    }
}

fn listed_ranks(ranks: &[i64]) -> String {
    const RUNS_SHOWN: usize = 8;
    let mut runs: Vec<(i64, i64)> = Vec::new();
    for &r in ranks {
        match runs.last_mut() {
            Some((_, hi)) if hi.checked_add(1) == Some(r) => *hi = r,
            _ => runs.push((r, r)),
        }
    }
    match (ranks, runs.len()) {
        ([], _) => String::new(),
        ([one], _) => format!("rank {one}"),
        (all, n) if n > RUNS_SHOWN => format!(
            "{} ranks from {} to {}",
            all.len(),
            all[0],
            all[all.len() - 1]
        ),
        _ => {
            let parts: Vec<String> = runs
                .iter()
                .map(|&(lo, hi)| match hi - lo {
                    0 => lo.to_string(),
                    1 => format!("{lo}, {hi}"),
                    _ => format!("{lo}-{hi}"),
                })
                .collect();
            format!("ranks {}", parts.join(", "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{rank_list, RanksBeyond};

    #[test]
    fn ranks_as_ranges_or_a_count() {
        let all = RanksBeyond::default();
        let first: Vec<i64> = (0..256).collect();
        let beyond = |total, max, uncounted| RanksBeyond {
            total: Some(total),
            max,
            uncounted,
            at_least: uncounted.is_some(),
        };
        assert_eq!(
            rank_list(&first, beyond(1_000_000, Some(999_999), None)),
            "ranks 0-999999"
        );
        let every_third: Vec<i64> = (0..256).map(|r| r * 3).collect();
        assert_eq!(
            rank_list(&every_third, beyond(66_667, Some(199_998), None)),
            "66667 ranks from 0 to 199998"
        );
        assert_eq!(
            rank_list(&every_third, beyond(66_667, Some(199_998), Some(1))),
            "66667 ranks from 0 to 199998, and 1 line naming ranks not counted"
        );
        // A report from before `ranks_max`: the first ranks and the count.
        assert_eq!(
            rank_list(&first, beyond(1_000_000, None, None)),
            "ranks 0-255, and 999744 more"
        );
        let old = RanksBeyond {
            at_least: true,
            ..beyond(300, None, None)
        };
        assert_eq!(rank_list(&first, old), "ranks 0-255, and at least 44 more");
        assert_eq!(rank_list(&[], all), "");
        assert_eq!(rank_list(&[3], all), "rank 3");
        assert_eq!(rank_list(&[0, 1], all), "ranks 0, 1");
        assert_eq!(
            rank_list(&[0, 1, 2, 3, 7, 9, 10], all),
            "ranks 0-3, 7, 9, 10"
        );
        let many: Vec<i64> = (0..1_000_000).collect();
        assert_eq!(rank_list(&many, all), "ranks 0-999999");
        let scattered: Vec<i64> = (0..1000).map(|r| r * 2).collect();
        assert_eq!(rank_list(&scattered, all), "1000 ranks from 0 to 1998");
    }
}

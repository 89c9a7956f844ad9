//! explain's causes decided by the facts the log states: the offending
//! values and bound the failure gives, and what `catalog/causes.toml`'s
//! `[[log_fact]]` rows read from the lines and frames (`len(tokenizer)`,
//! `ignore_index=`, a position-embedding frame …), through the engine that
//! scan, check, preflight and the guard use (`devassert_core::facts`).

use devassert_core::facts::blend::{blend, Blended};
use devassert_core::facts::{self, Facts, Kind};
use devassert_core::{Bound, Catalog, Cause, LogHits, OpFamily, Scalar};
use std::collections::HashMap;

/// Rules outside the index families whose bad values are indices into a
/// dimension: Inductor's bounds check, max_unpool's, a sparse tensor's,
/// grouped_mm's offsets, `_assert_async` (index_put_ and deterministic
/// `x[idx] = v`).
const INDEX_RULES: &[&str] = &["DA401", "DA503", "DA505", "DA506", "DA508"];

/// What the op's index means: token ids into a table, class labels, or
/// the indices of an indexing op into any dimension.
pub(super) fn kind_of(family: OpFamily, rule: &str) -> Option<Kind> {
    // embedding_bag's offsets (DA103) are positions into its input, not ids.
    if rule == "DA103" {
        return Some(Kind::Index);
    }
    match family {
        OpFamily::IndexSelect | OpFamily::EmbeddingBag => Some(Kind::Ids),
        OpFamily::NllLoss | OpFamily::NllLoss2d | OpFamily::OneHot => Some(Kind::Labels),
        OpFamily::Index | OpFamily::GatherScatter => Some(Kind::Index),
        _ if INDEX_RULES.contains(&rule) => Some(Kind::Index),
        // multi_margin_loss's targets are class labels.
        _ if rule == "DA206" => Some(Kind::Labels),
        _ => None,
    }
}

fn int(s: &Scalar) -> Option<i64> {
    match s {
        Scalar::Int(i) => Some(*i),
        Scalar::Float(_) => None,
    }
}

/// The facts of the stated values: some of the bad values (a CPU error
/// names the first), with the bound when the log states it.
fn value_facts(values: &[i64], low: i64, high: Option<i64>, kind: Kind) -> Facts {
    let counts: HashMap<i64, u64> = values.iter().map(|v| (*v, 1)).collect();
    facts::stated_facts(&counts, low, high, kind)
}

/// Re-rank `causes` by the facts of the log, for values of `kind`
/// ([`kind_of`]; none: the rule's order, each cause said to rest on its prior).
pub(super) fn decide(
    catalog: &Catalog,
    hits: &LogHits,
    frames: &[&str],
    kind: Option<Kind>,
    values: &[Scalar],
    bound: Option<&Bound>,
    causes: Vec<Cause>,
) -> Blended {
    let Some(kind) = kind else {
        return blend(causes, &facts::Decision::default());
    };
    let mut f = Facts::new();
    let low = bound
        .and_then(|b| b.low.as_ref())
        .and_then(int)
        .unwrap_or(0);
    let high = bound.and_then(|b| b.high.as_ref()).and_then(int);
    // What the lines say first: the failure's own values and bound win.
    let mut said = Facts::new();
    catalog.log_facts(hits, kind.as_str(), &mut said);
    facts::log::from_frames(frames, kind.as_str(), &mut said);
    let high = high.or_else(|| said.get("high").map(|h| *h as i64));
    let stated: Vec<i64> = values.iter().filter_map(int).collect();
    if !stated.is_empty() {
        f = value_facts(&stated, low, high, kind);
        // The log names some of the bad values (a CPU error the first).
        f.insert("sampled".into(), 1.0);
    } else if let Some(h) = high {
        f.insert("low".into(), low as f64);
        f.insert("high".into(), h as f64);
    }
    for (k, v) in said {
        f.entry(k).or_insert(v);
    }
    blend(causes, &facts::decide(kind, &f))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_index_rule_decides_its_values_as_indices() {
        for (family, rule) in [
            (OpFamily::Index, "DA111"),
            (OpFamily::Index, "DA115"),
            (OpFamily::GatherScatter, "DA121"),
            (OpFamily::EmbeddingBag, "DA103"),
            (OpFamily::Inductor, "DA401"),
            (OpFamily::Unknown, "DA503"),
            (OpFamily::Unknown, "DA508"),
        ] {
            assert_eq!(kind_of(family, rule), Some(Kind::Index), "{rule}");
        }
        assert_eq!(kind_of(OpFamily::EmbeddingBag, "DA102"), Some(Kind::Ids));
        assert_eq!(kind_of(OpFamily::OneHot, "DA122"), Some(Kind::Labels));
        assert_eq!(kind_of(OpFamily::Unknown, "DA206"), Some(Kind::Labels));
        // Inductor's other assert states no index; a probability is none.
        assert_eq!(kind_of(OpFamily::Inductor, "DA402"), None);
        assert_eq!(kind_of(OpFamily::Multinomial, "DA301"), None);
    }
}

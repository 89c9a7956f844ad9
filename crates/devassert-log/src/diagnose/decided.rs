//! explain's causes decided by the facts the log states: the offending
//! values and bound the failure gives, and what `catalog/causes.toml`'s
//! `[[log_fact]]` rows read from the lines and frames (`len(tokenizer)`,
//! `ignore_index=`, a position-embedding frame …), through the engine that
//! scan, check, preflight and the guard use (`devassert_core::facts`).

use devassert_core::facts::blend::{blend, Blended};
use devassert_core::facts::{self, Facts, Kind};
use devassert_core::{Bound, Catalog, Cause, LogHits, Scalar};
use std::collections::HashMap;

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
/// (the rule's `values` key; none: the rule's order, each cause said to rest on its prior).
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

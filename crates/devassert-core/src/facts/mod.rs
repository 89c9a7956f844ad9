//! Causes decided by measured facts, for every command that measures
//! values (scan, check, preflight and the guard): `catalog/causes.toml`
//! states, per cause, the facts that support it, the facts that refute it
//! and the checks its fixes must pass. [`decide`] keeps the causes the facts
//! allow, ranks them by prior plus support, says which rest on their prior
//! alone, and drops every fix that, applied to the facts, would not make
//! them valid. The guard evaluates the same file, generated into
//! `python/devassert/_findings/rules.py`.

pub mod blend;
mod decision;
mod embedded;
pub mod expr;
pub mod log;
pub mod table;

pub use decision::{Decision, Kind};
pub use embedded::source;
pub use expr::Facts;

use crate::finding::Cause;
use std::collections::HashMap;
use std::sync::OnceLock;
use table::CauseDef;

/// The compiled table; the file is checked by the tests, so a broken one
/// gives an empty table here rather than a panic in the user's run.
pub fn table() -> &'static [CauseDef] {
    static TABLE: OnceLock<Vec<CauseDef>> = OnceLock::new();
    TABLE.get_or_init(|| {
        serde_json::from_str(embedded::json())
            .map_err(|e| format!("causes.toml: {e}"))
            .and_then(|file| table::compile_file(&file))
            .unwrap_or_default()
    })
}

/// -1 as an unsigned array stores it: uint16 65535, uint32 4294967295.
pub const UNSIGNED_MINUS_ONE: [i64; 2] = [u16::MAX as i64, u32::MAX as i64];

/// The facts that the bad values themselves give (`count`, `top`, the
/// sentinels' counts …), from their counts; the caller adds what it knows
/// of the whole column, the tokenizer and the code.
pub fn value_facts(values: &HashMap<i64, u64>, low: i64, high: i64, kind: Kind) -> Facts {
    stated_facts(values, low, Some(high), kind)
}

/// [`value_facts`] where the bound may be unknown (a log that states the
/// offending value but not the table's size or the number of classes).
/// Every value is a bad one, so a value at or past `low` is past the bound
/// whatever it is: it counts in `n_past` and `top`, 255 (labels) in `n_255`
/// (it is bad, so `high <= 255`), -1 stored unsigned in `n_wrapped`; only
/// `high` and `base_vocab` stay unknown.
pub fn stated_facts(values: &HashMap<i64, u64>, low: i64, high: Option<i64>, kind: Kind) -> Facts {
    let mut f = Facts::new();
    let n = |v: u64| v as f64;
    let count: u64 = values.values().sum();
    // Past the bound: with no bound stated, every bad value not below `low`.
    let beyond = |v: i64| v >= low && high.is_none_or(|h| v >= h);
    let wrapped = |v: i64| beyond(v) && UNSIGNED_MINUS_ONE.contains(&v);
    let border =
        |v: i64| kind == Kind::Labels && v == 255 && beyond(v) && high.is_none_or(|h| h <= 255);
    let sum =
        |p: &dyn Fn(i64) -> bool| n(values.iter().filter(|(v, _)| p(**v)).map(|(_, c)| *c).sum());
    f.insert("low".into(), low as f64);
    if let Some(h) = high {
        f.insert("high".into(), h as f64);
    }
    f.insert("count".into(), n(count));
    f.insert("distinct".into(), values.len() as f64);
    if let Some(b) = values.keys().min() {
        f.insert("bottom".into(), *b as f64);
    }
    let past = |v: i64| beyond(v) && !wrapped(v) && !border(v);
    // An index into any dimension may be a void label (a one-hot scatter's
    // class): 255 is counted in n_255 and, being an index too, in n_past.
    let index_255 = |v: i64| kind == Kind::Index && v == 255 && beyond(v);
    if let Some(t) = values.keys().copied().filter(|v| past(*v)).max() {
        f.insert("top".into(), t as f64);
    }
    f.insert("n_past".into(), sum(&past));
    let neg = |v: i64| v < 0 && (kind != Kind::Labels || v != -100);
    f.insert("n_neg".into(), sum(&neg));
    f.insert("n_m1".into(), sum(&|v| v == -1));
    f.insert("n_m100".into(), sum(&|v| v == -100));
    f.insert("n_255".into(), sum(&|v| border(v) || index_255(v)));
    f.insert("n_wrapped".into(), sum(&wrapped));
    if let Some(w) = values.keys().copied().filter(|v| wrapped(*v)).min() {
        f.insert("wrapped".into(), w as f64);
    }
    if let Some(h) = high {
        let base = if crate::vocab::is_base_vocab(h) {
            1.0
        } else {
            0.0
        };
        f.insert("base_vocab".into(), base);
    }
    f
}

/// Decide the causes of out-of-range values of `kind` from `facts`.
pub fn decide(kind: Kind, facts: &Facts) -> Decision {
    let mut scored: Vec<(f64, Cause, Vec<String>, f64, bool)> = Vec::new();
    let mut ruled_out = Vec::new();
    let defs = || table().iter().filter(|d| d.kind == kind.as_str());
    // Causes that fit none of the values: every definition states what a
    // value must be to fit it, and the facts make that false (where the
    // values are only some of the bad ones, as a log states them, the cause
    // may still fit the others).
    let mut unfit: Vec<String> = Vec::new();
    for def in defs() {
        if !unfit.contains(&def.id)
            && defs()
                .filter(|d| d.id == def.id)
                .all(|d| d.fits.as_ref().is_some_and(|x| x.fails(facts)))
        {
            unfit.push(def.id.clone());
        }
    }
    for def in defs() {
        if !def.requires.holds(facts) {
            continue;
        }
        if let Some(r) = def.refutes.iter().find(|r| r.when.holds(facts)) {
            let fact = expr::render(&r.fact, facts).unwrap_or_default();
            ruled_out.push(format!("{}: {fact}", def.id));
            continue;
        }
        let mut score = def.prior;
        let mut gain = 0.0;
        let mut said = Vec::new();
        for s in def.supports.iter().filter(|s| s.when.holds(facts)) {
            let w = s.weight.eval(facts).unwrap_or(0.0).max(0.0);
            score += w;
            gain += w;
            if let Some(text) = expr::render(&s.fact, facts) {
                said.push(text);
            }
        }
        let why = if said.is_empty() {
            format!(
                "{} (no measured fact decides it: ranked by its prior)",
                def.why
            )
        } else {
            format!("{}: {}", def.why, said.join("; "))
        };
        // Whether a fix was dropped because, applied to the facts, it fails.
        let mut checked_out = false;
        let fixes: Vec<String> = def
            .fixes
            .iter()
            .filter_map(|x| {
                if x.when.as_ref().is_some_and(|w| !w.holds(facts)) {
                    return None;
                }
                if x.check.as_ref().is_some_and(|c| c.fails(facts)) {
                    checked_out = true;
                    return None;
                }
                expr::render(&x.text, facts)
            })
            .collect();
        let confidence = ((score.clamp(0.05, 0.95)) * 100.0).round() / 100.0;
        let cause = Cause::new(def.id.clone(), confidence, why).with_fixes(fixes);
        scored.push((score, cause, said, gain, checked_out));
    }
    // Best first; the table's order breaks ties.
    scored.sort_by(|a, b| b.0.total_cmp(&a.0));
    let mut causes: Vec<Cause> = Vec::new();
    let mut support = Vec::new();
    let mut gains = Vec::new();
    let mut checked_out: Vec<String> = Vec::new();
    for (_, c, said, gain, out) in scored {
        if out && !checked_out.contains(&c.id) {
            checked_out.push(c.id.clone());
        }
        match causes.iter_mut().find(|m| m.id == c.id) {
            // One entry per cause id: the best explanation, with the
            // others' fixes.
            Some(m) => {
                for x in c.fixes {
                    if !m.fixes.contains(&x) {
                        m.fixes.push(x);
                    }
                }
            }
            None => {
                causes.push(c);
                support.push(said);
                gains.push(gain);
            }
        }
    }
    // A kept cause left with no fix because its checks failed.
    let fixes_refuted = causes
        .iter()
        .filter(|c| c.fixes.is_empty() && checked_out.contains(&c.id))
        .map(|c| c.id.clone())
        .collect();
    Decision {
        causes,
        support,
        ruled_out,
        gain: gains,
        unfit,
        fixes_refuted,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_compiles() {
        let t = table::compile(source()).expect("catalog/causes.toml compiles");
        assert!(!t.is_empty());
        assert_eq!(t.len(), table().len());
    }

    // `blend` over the engine's decisions (here, since `blend` must not
    // import its parent).
    #[test]
    fn negative_values_stated_put_negative_index_first() {
        let values = HashMap::from([(-1i64, 1u64)]);
        let f = value_facts(&values, 0, 10, Kind::Ids);
        let b = blend::blend(blend::tests::rule_causes(), &decide(Kind::Ids, &f));
        assert_eq!(b.causes[0].id, "negative_index", "{b:#?}");
        assert!(b.causes[0].why.contains("(facts:"), "{}", b.causes[0].why);
        let t = b
            .causes
            .iter()
            .find(|c| c.id == "token_id_ge_vocab")
            .expect("kept");
        // -1 is no id past the table: kept (a log states one bad value,
        // others may be past it), by its prior, without a fix.
        assert!(t.why.ends_with(blend::UNFIT_BY_PRIOR), "{}", t.why);
        assert!(t.fixes.is_empty());
        assert!(b.ruled_out.is_empty());
        // A cause that any value may fit keeps saying it rests on its prior.
        let values = HashMap::from([(12i64, 1u64)]);
        let f = value_facts(&values, 0, 10, Kind::Ids);
        let b = blend::blend(blend::tests::rule_causes(), &decide(Kind::Ids, &f));
        let n = b
            .causes
            .iter()
            .find(|c| c.id == "negative_index")
            .expect("kept");
        assert!(n.why.ends_with(blend::UNFIT_BY_PRIOR), "{}", n.why);
        let t = b
            .causes
            .iter()
            .find(|c| c.id == "token_id_ge_vocab")
            .expect("kept");
        assert!(!t.why.contains("none of the offending values"), "{}", t.why);
    }

    #[test]
    fn a_refuted_cause_is_dropped_and_said() {
        // Positions 1..=10 on a 10-row table: off by one, the input is not too long.
        let values = HashMap::from([(10i64, 1u64)]);
        let mut f = value_facts(&values, 0, 10, Kind::Ids);
        for (k, v) in [
            ("col_min", 1.0),
            ("col_max", 10.0),
            ("seq_len", 10.0),
            ("positions", 1.0),
            ("offset", 0.0),
        ] {
            f.insert(k.into(), v);
        }
        let b = blend::blend(blend::tests::rule_causes(), &decide(Kind::Ids, &f));
        assert_eq!(b.causes[0].id, "off_by_one", "{b:#?}");
        assert!(b.causes.iter().all(|c| c.id != "seq_len_gt_max_positions"));
        assert!(b
            .ruled_out
            .iter()
            .any(|r| r.starts_with("seq_len_gt_max_positions:")));
        // Its fix is not shown, nor a general one that says the same.
        assert!(b.refutes_fix("truncate the inputs to 512 tokens"));
        assert!(!b.refutes_fix("subtract 1"));
    }
}

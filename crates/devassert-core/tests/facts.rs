//! The cases of `catalog/causes.toml` shared with the guard
//! (`tests/fact_cases.json`): the Rust engine's answers. The guard's
//! `test_facts.py` holds the Python engine to the same file.

use devassert_core::facts::{decide, stated_facts, Facts, Kind};
use serde_json::Value;
use std::collections::HashMap;

fn strings(v: &Value, key: &str) -> Vec<String> {
    v.get(key)
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

fn kind_of(case: &Value) -> Kind {
    match case["kind"].as_str() {
        Some("ids") => Kind::Ids,
        Some("index") => Kind::Index,
        Some("labels") => Kind::Labels,
        other => panic!("{}: unknown kind {other:?}", case["name"]),
    }
}

#[test]
fn every_shared_case_decides_as_written() {
    let text = include_str!("fact_cases.json");
    let doc: Value = serde_json::from_str(text).expect("fact_cases.json is JSON");
    let cases = doc["cases"].as_array().expect("cases");
    assert!(cases.len() >= 10);
    for case in cases {
        let name = case["name"].as_str().unwrap_or("?");
        let kind = kind_of(case);
        let values: HashMap<i64, u64> = case["values"]
            .as_array()
            .expect("values")
            .iter()
            .map(|p| (p[0].as_i64().expect("value"), p[1].as_u64().expect("count")))
            .collect();
        // `"high": null`: a log that states the values but not the bound.
        let (low, high) = (case["low"].as_i64().unwrap_or(0), case["high"].as_i64());
        let mut facts: Facts = stated_facts(&values, low, high, kind);
        if let Some(extra) = case["facts"].as_object() {
            for (k, v) in extra {
                facts.insert(k.clone(), v.as_f64().expect("a number"));
            }
        }
        let d = decide(kind, &facts);
        let ids: Vec<&str> = d.causes.iter().map(|c| c.id.as_str()).collect();
        let fixes: Vec<&str> = d
            .causes
            .iter()
            .flat_map(|c| c.fixes.iter().map(String::as_str))
            .collect();
        let want = strings(case, "causes");
        if !want.is_empty() {
            assert_eq!(ids, want, "{name}: {:#?}", d);
        }
        if let Some(first) = case["first"].as_str() {
            assert_eq!(ids.first().copied(), Some(first), "{name}: {:#?}", d);
        }
        let want_fixes = strings(case, "fixes");
        if !want_fixes.is_empty() {
            assert_eq!(fixes, want_fixes, "{name}");
        }
        for part in strings(case, "fixes_has") {
            assert!(
                fixes.iter().any(|f| f.contains(&part)),
                "{name}: no fix has {part:?}: {fixes:?}"
            );
        }
        for part in strings(case, "no_fix_has") {
            assert!(
                !fixes.iter().any(|f| f.contains(&part)),
                "{name}: a fix has {part:?}: {fixes:?}"
            );
        }
        for id in strings(case, "ruled_out") {
            assert!(
                d.ruled_out.iter().any(|r| r.starts_with(&format!("{id}:"))),
                "{name}: {id} not ruled out: {:?}",
                d.ruled_out
            );
        }
        // `fits` is what `requires` needs: a listed cause fits some value.
        for c in &d.causes {
            assert!(
                !d.unfit.contains(&c.id),
                "{name}: {} listed and unfit",
                c.id
            );
        }
        if case["no_ruled_out"] == true {
            assert!(d.ruled_out.is_empty(), "{name}: {:?}", d.ruled_out);
        }
        for id in strings(case, "unfit") {
            assert!(d.unfit.contains(&id), "{name}: {id} fits: {:?}", d.unfit);
        }
        for id in strings(case, "not_unfit") {
            assert!(!d.unfit.contains(&id), "{name}: {id} unfit: {:?}", d.unfit);
        }
        // A kept cause whose every checked fix fails: the engine says so,
        // so that explain shows none of the rule's general fixes for it.
        for id in strings(case, "fixes_refuted") {
            assert!(ids.contains(&id.as_str()), "{name}: {id} not kept");
            assert!(
                d.fixes_refuted.contains(&id),
                "{name}: {id}: {:?}",
                d.fixes_refuted
            );
        }
        for id in &d.fixes_refuted {
            assert!(
                strings(case, "fixes_refuted").contains(id),
                "{name}: {id} unexpectedly has every fix refuted"
            );
        }
        for part in strings(case, "why_has") {
            assert!(
                d.causes[0].why.contains(&part),
                "{name}: {:?}",
                d.causes[0].why
            );
        }
    }
}

/// A shown fix, applied to the case's facts: whether they come out valid.
/// None for a fix this test does not model (it must then carry no number).
fn applied(fix: &str, f: &Facts) -> Option<bool> {
    let get = |k: &str| f.get(k).copied();
    let num = |re: &str| {
        regex::Regex::new(re)
            .ok()?
            .captures(fix)?
            .get(1)?
            .as_str()
            .parse::<f64>()
            .ok()
    };
    let (low, high) = (get("low")?, get("high")?);
    if fix.starts_with("subtract 1") || fix.starts_with("count from 0: subtract 1") {
        let (lo, hi) = (get("col_min")?, get("col_max")?);
        return Some(lo - 1.0 >= low && hi - 1.0 < high);
    }
    if let Some(n) = num(r"num_classes to (\d+)").or_else(|| num(r"at least (\d+) rows")) {
        return Some(n > get("top")?);
    }
    if let Some(n) = num(r"max_length=(\d+)").or_else(|| num(r"idx\[:, -(\d+):\]")) {
        // It must shorten some sequence, and what it keeps must fit.
        let start = get("col_min").unwrap_or(0.0);
        return Some(get("seq_len")? > n && start + n <= high);
    }
    if fix.starts_with("model.resize_token_embeddings(len(tokenizer))") {
        return get("tok_len").map(|t| t > get("top").unwrap_or(high));
    }
    None
}

#[test]
fn every_shown_fix_makes_its_facts_valid() {
    let doc: Value = serde_json::from_str(include_str!("fact_cases.json")).expect("JSON");
    let mut modelled = 0;
    for case in doc["cases"].as_array().expect("cases") {
        let kind = kind_of(case);
        let values: HashMap<i64, u64> = case["values"]
            .as_array()
            .expect("values")
            .iter()
            .map(|p| (p[0].as_i64().expect("v"), p[1].as_u64().expect("c")))
            .collect();
        let high = case["high"].as_i64();
        let mut facts = stated_facts(&values, case["low"].as_i64().unwrap_or(0), high, kind);
        for (k, v) in case["facts"].as_object().into_iter().flatten() {
            facts.insert(k.clone(), v.as_f64().expect("number"));
        }
        for c in decide(kind, &facts).causes {
            for fix in &c.fixes {
                if let Some(ok) = applied(fix, &facts) {
                    modelled += 1;
                    assert!(ok, "{}: {fix:?} leaves the facts invalid", case["name"]);
                }
            }
        }
    }
    assert!(modelled >= 8, "only {modelled} fixes modelled");
}

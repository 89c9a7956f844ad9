//! `devassert rule` and the generated rule pages.

mod common;

use common::{bin, repo_root};
use devassert_core::{docs, Catalog};
use std::collections::BTreeSet;

#[test]
fn docs_rules_are_current() {
    let dir = repo_root().join("docs/rules");
    let pages = docs::all_pages(Catalog::builtin());
    let mut stale = Vec::new();
    for (name, text) in &pages {
        match std::fs::read_to_string(dir.join(name)) {
            Ok(on_disk) if on_disk == *text => {}
            _ => stale.push(name.clone()),
        }
    }
    let expected: BTreeSet<String> = pages.iter().map(|(n, _)| n.clone()).collect();
    let present: BTreeSet<String> = std::fs::read_dir(&dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    let extra: Vec<_> = present.difference(&expected).collect();
    assert!(
        stale.is_empty() && extra.is_empty(),
        "docs/rules is stale (run `make docs`): stale {stale:?}, extra {extra:?}"
    );
}

#[test]
fn python_rules_are_current() {
    let path = repo_root().join(devassert_core::python_rules::PATH);
    let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        on_disk == devassert_core::python_rules::module(Catalog::builtin()),
        "{} is stale (run `make docs`)",
        path.display()
    );
}

#[test]
fn rule_lists_every_rule() {
    let out = bin()
        .arg("rule")
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    for r in Catalog::builtin().rules() {
        assert!(
            text.contains(&r.id) && text.contains(&r.name),
            "{} missing from the list",
            r.id
        );
    }
}

#[test]
fn rule_page_by_id_and_by_name() {
    let by_id = bin()
        .args(["rule", "DA101"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let by_name = bin()
        .args(["rule", "embedding-index-out-of-range"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    assert_eq!(by_id, by_name);
    let page = String::from_utf8(by_id).unwrap();
    for heading in [
        "## What it means",
        "## Why it happens",
        "## How to confirm",
        "## How to fix",
        "## What the guard checks",
    ] {
        assert!(page.contains(heading), "page lacks {heading}");
    }
    let lower = bin()
        .args(["rule", "da101"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    assert_eq!(String::from_utf8(lower).unwrap(), page);
}

#[test]
fn unknown_rule_is_a_clear_error() {
    let out = bin()
        .args(["rule", "DA999x"])
        .assert()
        .code(2)
        .get_output()
        .stderr
        .clone();
    let err = String::from_utf8(out).unwrap();
    assert!(err.contains("no rule \"DA999x\""), "{err}");
}

#[test]
fn rule_json_lists_ids() {
    let out = bin()
        .args(["rule", "--format", "json"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["schema"], "devassert/1");
    assert_eq!(v["command"], "rule");
    assert!(v["rules"]
        .as_array()
        .is_some_and(|a| a.iter().any(|r| r["rule"] == "DA101")));
}

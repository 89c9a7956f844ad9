//! Rule pages, generated from the catalog: `devassert rule ID` prints one and
//! `docs/rules/` holds them all (a test keeps the folder current).

use crate::catalog::{Catalog, CompiledRule};
use crate::facts::Kind;
use std::fmt::Write;

pub fn rule_page(rule: &CompiledRule) -> String {
    let r = &rule.rule;
    let mut s = String::new();
    let _ = writeln!(s, "# {} {}: {}\n", r.id, r.name, r.title);
    let _ = writeln!(s, "{}.\n", capitalise(&r.summary));
    let _ = writeln!(s, "- op family: `{}`", r.op_family);
    if !r.ops.is_empty() {
        let _ = writeln!(
            s,
            "- ops: {}",
            r.ops
                .iter()
                .map(|o| format!("`{o}`"))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    if !r.bad_argument.is_empty() {
        let _ = writeln!(s, "- bad argument: {}", r.bad_argument);
    }
    if let Some(kind) = r.values {
        let what = match kind {
            Kind::Ids => "token ids into a table",
            Kind::Labels => "class labels",
            Kind::Index => "indices into a dimension",
        };
        let _ = writeln!(
            s,
            "- its values: {what} (the `{}` causes of [causes.toml](../../catalog/causes.toml) decide them by the stated values)",
            kind.as_str()
        );
    }
    if !r.bound.is_empty() {
        let _ = writeln!(s, "- valid range: {}", r.bound);
    }
    if r.internal {
        let _ = writeln!(
            s,
            "- internal: this is a PyTorch invariant, not a check on your data"
        );
    }
    for (title, body) in [
        ("What it means", &r.doc.what),
        ("Why it happens", &r.doc.why),
        ("How to confirm", &r.doc.confirm),
        ("How to fix", &r.doc.fix),
    ] {
        let _ = writeln!(s, "\n## {title}\n\n{}", body.trim());
    }
    if !r.fixes.is_empty() || r.causes.iter().any(|c| !c.fixes.is_empty()) {
        let _ = writeln!(s, "\n### Fixes by cause\n");
        for c in &r.causes {
            for f in &c.fixes {
                let _ = writeln!(s, "- `{}`: {f}", c.id);
            }
        }
        for f in &r.fixes {
            let _ = writeln!(s, "- {f}");
        }
    }
    if !r.causes.is_empty() {
        let _ = writeln!(s, "\n## Causes, most likely first\n");
        for c in &r.causes {
            let _ = writeln!(s, "- `{}` (prior {:.0}%): {}", c.id, c.prior * 100.0, c.why);
            for e in &c.evidence {
                let (kind, pat) = match (&e.frame, &e.log, &e.assertion) {
                    (Some(p), _, _) => ("traceback frame", p),
                    (_, Some(p), _) => ("log line", p),
                    (_, _, Some(p)) => ("assertion", p),
                    _ => continue,
                };
                let vocab = if e.value_is_base_vocab {
                    " and its value is a base vocabulary's size"
                } else {
                    ""
                };
                let _ = writeln!(
                    s,
                    "  - +{:.0}% when a {kind} matches `{}`{vocab}: {}",
                    e.weight * 100.0,
                    pat.replace('`', "\\`"),
                    e.why
                );
            }
        }
    }
    let _ = writeln!(
        s,
        "\n## What the guard checks\n\n{}",
        if r.guard.trim().is_empty() {
            "Nothing: no guarded op reaches this failure."
        } else {
            r.guard.trim()
        }
    );
    if !r.asserts.is_empty() {
        let _ = writeln!(s, "\n## Device assertions matched\n\n| file | kernel | assertion | releases |\n|---|---|---|---|");
        for a in &r.asserts {
            let cell = |v: &Option<String>| {
                v.as_deref()
                    .map(|p| format!("`{}`", p.replace('|', "\\|")))
                    .unwrap_or_else(|| "any".into())
            };
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} |",
                cell(&a.file),
                cell(&a.kernel),
                cell(&a.assertion),
                a.releases.replace('|', "\\|")
            );
        }
    }
    if !r.cpu_messages.is_empty() {
        let _ = writeln!(s, "\n## Host-side messages of the same failure\n");
        for m in &r.cpu_messages {
            let _ = writeln!(s, "- `{}`", m.replace('`', "\\`"));
        }
    }
    if !r.doc.example.trim().is_empty() {
        let _ = writeln!(s, "\n## Example\n\n```text\n{}\n```", r.doc.example.trim());
    }
    s
}

/// The index page: one line per rule.
pub fn index_page(catalog: &Catalog) -> String {
    let mut s = String::from("# devassert rules\n\nGenerated from `catalog/` by `make docs`; do not edit.\n\n| id | name | op family | summary |\n|---|---|---|---|\n");
    for r in catalog.rules() {
        let _ = writeln!(
            s,
            "| [{}]({}-{}.md) | {} | `{}` | {} |",
            r.id, r.id, r.name, r.name, r.op_family, r.summary
        );
    }
    s
}

/// Every generated file: `(file name, contents)`.
pub fn all_pages(catalog: &Catalog) -> Vec<(String, String)> {
    let mut v = vec![("README.md".to_string(), index_page(catalog))];
    for r in catalog.rules() {
        v.push((format!("{}-{}.md", r.id, r.name), rule_page(r)));
    }
    v
}

fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
        None => String::new(),
    }
}

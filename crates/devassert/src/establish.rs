//! `explain` with the user's own files: a cause the log only makes likely
//! is **established** when measured facts show it: the user's script (read
//! under the source rules: `.py` under the source root), the `check`
//! findings of `--model DIR`, the `scan` findings of `--data PATH…`. An
//! established cause carries its proof (the file and line, or the data
//! place) and ranks first.

use devassert_core::source::SourceRoot;
use devassert_core::{Finding, OpFamily, Report, Scalar};
use devassert_model::ModelDir;
use regex::Regex;
use std::sync::OnceLock;

/// An established cause is as sure as a static check's finding.
const ESTABLISHED: f64 = 0.95;

/// What the user's own files can say.
pub struct Facts<'a> {
    pub sources: Option<&'a SourceRoot>,
    pub model: Option<&'a ModelDir>,
    /// The `check` findings of the model directory.
    pub model_findings: &'a [Finding],
    /// The `scan` report of the data.
    pub data: Option<&'a Report>,
}

/// Mark each finding's causes that the facts establish, and rank them first.
pub fn establish(report: &mut Report, facts: &Facts<'_>) {
    for f in &mut report.findings {
        let mut proofs = script_proofs(f, facts);
        proofs.extend(model_proofs(facts.model_findings));
        if let Some(m) = facts.model {
            proofs.extend(config_proofs(f, m));
        }
        if let Some(d) = facts.data {
            proofs.extend(data_proofs(d));
        }
        apply(f, proofs);
    }
}

fn apply(f: &mut Finding, proofs: Vec<(String, String)>) {
    for (id, text) in proofs {
        let Some(c) = f.causes.iter_mut().find(|c| c.id == id) else {
            continue;
        };
        c.established = true;
        c.confidence = c.confidence.max(ESTABLISHED);
        c.proof = Some(match c.proof.take() {
            Some(p) if !p.contains(&text) => format!("{p}; {text}"),
            Some(p) => p,
            None => text,
        });
    }
    // Stable: the likely ones keep their order after the established ones.
    f.causes.sort_by_key(|c| !c.established);
}

fn re(cell: &'static OnceLock<Option<Regex>>, pattern: &str) -> Option<&'static Regex> {
    cell.get_or_init(|| Regex::new(pattern).ok()).as_ref()
}

macro_rules! pattern {
    ($name:ident, $re:expr) => {
        fn $name() -> Option<&'static Regex> {
            static CELL: OnceLock<Option<Regex>> = OnceLock::new();
            re(&CELL, $re)
        }
    };
}

pattern!(add_tokens, r"\.add_(?:special_)?tokens\s*\(");
pattern!(new_pad_token, r#"pad_token['"]?\s*[:=]\s*['"]"#);
pattern!(
    bce_probabilities,
    r"\bBCELoss\s*\(|\bbinary_cross_entropy\s*\("
);
pattern!(
    cross_entropy,
    r"\bCrossEntropyLoss\s*\(|\bcross_entropy\s*\(|\bnll_loss\s*\("
);
pattern!(
    loads_masks,
    r"(?i)\bmasks?\b|\.png\b|Image\.open|imread|segment"
);
pattern!(
    num_classes,
    r"\b(?:num_classes|num_labels|n_classes|nb_classes)\s*=\s*(\d+)\b"
);
pattern!(
    generate_length,
    r"\b(?:max_length|max_new_tokens)\s*=\s*(\d+)\b"
);

/// The readable scripts the finding's frames name (the user's frames).
fn scripts(f: &Finding, src: &SourceRoot) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for loc in [&f.location, &f.noticed_at].into_iter().flatten() {
        let Some(file) = loc.source_file() else {
            continue;
        };
        if out.iter().any(|(name, _)| name == file) {
            continue;
        }
        if let Some(text) = src.read(file) {
            out.push((file.to_string(), text.to_string()));
        }
    }
    out
}

/// The largest label the log or the data shows for this finding, but 255:
/// the void label says ignore_index, not a wider head.
fn largest_value(f: &Finding, data: Option<&Report>) -> Option<i64> {
    let ints = |vals: &[Scalar]| {
        vals.iter()
            .filter_map(|v| match v {
                Scalar::Int(i) => Some(*i),
                _ => None,
            })
            .collect::<Vec<_>>()
    };
    let mut all = ints(&f.values);
    for d in data.map(|d| d.findings.as_slice()).unwrap_or_default() {
        all.extend(ints(&d.values));
    }
    all.into_iter().filter(|v| *v != 255).max()
}

fn script_proofs(f: &Finding, facts: &Facts<'_>) -> Vec<(String, String)> {
    let Some(src) = facts.sources else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut push = |id: &str, text: String| out.push((id.to_string(), text));
    for (file, text) in scripts(f, src) {
        let resizes = text.contains("resize_token_embeddings");
        let sigmoid = text.contains("sigmoid") || text.contains("Sigmoid");
        let masks = loads_masks().is_some_and(|r| r.is_match(&text));
        for (i, line) in text.lines().enumerate() {
            let at = format!("{file}:{}", i + 1);
            let code = line.trim();
            if code.starts_with('#') {
                continue;
            }
            let has = |r: Option<&Regex>| r.is_some_and(|r| r.is_match(code));
            if !resizes && has(add_tokens()) {
                push(
                    "added_tokens_no_resize",
                    format!("{at} adds tokens (`{code}`) and {file} never calls resize_token_embeddings"),
                );
            }
            if !resizes && has(new_pad_token()) {
                push(
                    "pad_token_id_out_of_range",
                    format!("{at} sets the pad token to a new token (`{code}`) and {file} never calls resize_token_embeddings"),
                );
            }
            if !sigmoid && has(bce_probabilities()) {
                push(
                    "bce_on_logits",
                    format!("{at} uses a loss that takes probabilities (`{code}`) and {file} applies no sigmoid"),
                );
            }
            if masks && has(cross_entropy()) && !code.contains("ignore_index") {
                push(
                    "ignore_label_not_ignored",
                    format!("{at} builds the loss with no ignore_index (`{code}`) in code that loads masks"),
                );
            }
            if let Some(n) = num_classes()
                .and_then(|r| r.captures(code))
                .and_then(|c| c[1].parse::<i64>().ok())
            {
                // 255 is the void label: a wider head would not fix it (ignore_index would).
                if let Some(v) = largest_value(f, facts.data).filter(|v| *v >= n) {
                    push(
                        "label_ge_num_classes",
                        format!("{at} hard-codes `{code}` but label {v} was seen"),
                    );
                }
            }
            if code.contains("generate(") {
                let n = generate_length()
                    .and_then(|r| r.captures(code))
                    .and_then(|c| c[1].parse::<u64>().ok());
                let positions = facts.model.and_then(|m| m.usable_positions());
                if let (Some(n), Some(p)) = (n, positions) {
                    if n > p.value {
                        push(
                            "seq_len_gt_max_positions",
                            format!(
                                "{at} generates up to {n} tokens (`{code}`) but the model has {} positions ({})",
                                p.value, p.from
                            ),
                        );
                    }
                }
            }
        }
    }
    out
}

/// Each `check` finding's own cause is measured: its why names the files and fields.
fn model_proofs(findings: &[Finding]) -> Vec<(String, String)> {
    findings
        .iter()
        .flat_map(|m| {
            m.causes.first().map(|c| {
                (
                    c.id.clone(),
                    format!("model ({} {}): {}", m.rule, m.name, c.why),
                )
            })
        })
        .collect()
}

/// The integers the log states for a finding, and the upper end of its bound.
fn stated(f: &Finding) -> (Vec<i64>, Option<i64>) {
    let values = f
        .values
        .iter()
        .filter_map(|v| match v {
            Scalar::Int(i) => Some(*i),
            _ => None,
        })
        .collect();
    let high = f.bound.as_ref().and_then(|b| match b.high {
        Some(Scalar::Int(h)) => Some(h),
        _ => None,
    });
    (values, high)
}

/// Whether the log itself points at a cause: some of its catalog evidence
/// fired (its confidence is above the rule's prior for it).
fn pointed(f: &Finding, id: &str) -> bool {
    let prior = devassert_core::Catalog::builtin()
        .get(&f.rule)
        .and_then(|r| r.rule.causes.iter().find(|c| c.id == id))
        .map(|c| c.prior);
    let seen = f.causes.iter().find(|c| c.id == id).map(|c| c.confidence);
    matches!((prior, seen), (Some(p), Some(c)) if c > p + 1e-9)
}

/// The model directory's sizes against what the log states: a cause is
/// measured when the table it is about is the one the log's value or bound
/// runs past (the model's sizes from config.json, the weights or the
/// tokenizer, whichever `devassert-model` reads). `check` findings establish
/// what the directory gets wrong by itself; these need the crash too.
fn config_proofs(f: &Finding, model: &ModelDir) -> Vec<(String, String)> {
    let (values, high) = stated(f);
    let mut out = Vec::new();
    // The first stated value at or past `size`, or the bound being `size`.
    let past = |size: u64| -> Option<String> {
        let size = size as i64;
        if let Some(v) = values.iter().find(|v| **v >= size) {
            return Some(format!("the log's value {v} is >= {size}"));
        }
        (high == Some(size)).then(|| format!("the log's bound is {size}"))
    };
    if let Some(t) = model.type_vocab().filter(|_| pointed(f, "type_vocab_size")) {
        let shown = past(t.value).or_else(|| {
            (t.value <= 1).then(|| {
                "any token_type_id 1 (a sentence pair's second segment, a BERT-style collator) runs past it".to_string()
            })
        });
        if let Some(shown) = shown {
            out.push((
                "type_vocab_size".into(),
                format!("model ({}): the token type table has {} row(s) and the traceback is at the token type embedding; {shown}", t.from, t.value),
            ));
        }
    }
    if let Some(p) = model
        .usable_positions()
        .filter(|_| pointed(f, "seq_len_gt_max_positions"))
    {
        if let Some(shown) = past(p.value) {
            out.push((
                "seq_len_gt_max_positions".into(),
                format!(
                    "model ({}): {} usable positions and the log points at positions; {shown}",
                    p.from, p.value
                ),
            ));
        }
    }
    if let (Some(rows), Some(tok)) = (model.embedding_rows(), &model.tokenizer) {
        let max_id = tok.max_id.unwrap_or(0) as i64;
        let added = values
            .iter()
            .find(|v| **v >= rows.value as i64 && **v <= max_id);
        if let Some(v) = added {
            out.push((
                "added_tokens_no_resize".into(),
                format!("model: the log's id {v} is a tokenizer id (up to {max_id}) past the embedding's {} rows ({})", rows.value, rows.from),
            ));
        }
    }
    if let (Some(rows), Some(c)) = (model.embedding_rows(), &model.config) {
        let pad = c.special_ids.iter().find(|s| s.name == "pad_token_id");
        if let Some(pad) = pad.filter(|p| p.value < 0 || p.value >= rows.value as i64) {
            if values.contains(&pad.value) || pointed(f, "pad_token_id_out_of_range") {
                out.push((
                    "pad_token_id_out_of_range".into(),
                    format!("model (config.json {} = {}): the pad id is outside the embedding's {} rows ({}) and the log points at it", pad.name, pad.value, rows.value, rows.from),
                ));
            }
        }
    }
    let loss = matches!(f.op_family, OpFamily::NllLoss | OpFamily::NllLoss2d);
    if let Some(c) = model
        .num_classes()
        .filter(|_| loss || pointed(f, "label_ge_num_classes"))
    {
        // 255 is the void label: ignore_index, not a wider head, is its fix.
        let label = values
            .iter()
            .find(|v| **v >= c.value as i64 && **v != 255)
            .map(|v| format!("the log's label {v} is >= {}", c.value))
            .or_else(|| {
                (high == Some(c.value as i64)).then(|| format!("the log's bound is {}", c.value))
            });
        if let Some(shown) = label {
            out.push((
                "label_ge_num_classes".into(),
                format!("model ({}): {} classes; {shown}", c.from, c.value),
            ));
        }
    }
    out
}

/// Each `scan` finding's first cause, with the values and where they are.
fn data_proofs(data: &Report) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for d in &data.findings {
        let Some(c) = d.causes.first() else { continue };
        let values: Vec<String> = d.values.iter().take(6).map(|v| v.to_string()).collect();
        let place = d.locations.first().map(|l| {
            let file = l.file.as_deref().unwrap_or("data");
            match (&l.position, l.row, l.offset) {
                (Some(p), _, _) => format!("{file} {p:?}"),
                (None, Some(r), _) => format!("{file} row {r}"),
                (None, None, Some(o)) => format!("{file} offset {o}"),
                _ => format!("{file} element {}", l.index),
            }
        });
        let mut text = format!("data holds {}", values.join(", "));
        if let Some(p) = place {
            text.push_str(&format!(" at {p}"));
        }
        text.push_str(&format!(": {}", c.why));
        out.push((c.id.clone(), text));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use devassert_core::{Cause, OpFamily, SourceLocation};

    fn finding(causes: &[&str], file: &str) -> Finding {
        let mut f = Finding::new("DA101", "x", OpFamily::IndexSelect, "s");
        f.causes = causes.iter().map(|c| Cause::new(*c, 0.3, "why")).collect();
        f.noticed_at = Some(SourceLocation {
            file: file.into(),
            line: 3,
            function: None,
            code: None,
        });
        f
    }

    #[test]
    fn a_script_establishes_and_ranks_first() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(
            dir.path().join("train.py"),
            "tok.add_tokens(['<x>'])\n# tok.resize_token_embeddings is not called\nmodel(ids)\n",
        )
        .expect("write");
        let src = SourceRoot::new(dir.path()).expect("root");
        let mut r = Report::new(devassert_core::Command::Explain);
        r.findings.push(finding(
            &["token_id_ge_vocab", "added_tokens_no_resize"],
            "train.py",
        ));
        let facts = Facts {
            sources: Some(&src),
            model: None,
            model_findings: &[],
            data: None,
        };
        // The comment names resize_token_embeddings: the text has it, so nothing is established.
        establish(&mut r, &facts);
        assert!(!r.findings[0].causes.iter().any(|c| c.established));
        std::fs::write(
            dir.path().join("train.py"),
            "tok.add_tokens(['<x>'])\nmodel(ids)\n",
        )
        .expect("write");
        let src = SourceRoot::new(dir.path()).expect("root");
        let facts = Facts {
            sources: Some(&src),
            ..facts
        };
        establish(&mut r, &facts);
        let c = &r.findings[0].causes[0];
        assert_eq!(c.id, "added_tokens_no_resize");
        assert!(c.established);
        assert!(c
            .proof
            .as_deref()
            .is_some_and(|p| p.starts_with("train.py:1 ")));
    }
}

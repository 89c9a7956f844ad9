//! Deciding: each mismatch between config, tokenizer and weights becomes a
//! finding of the catalog rule whose runtime failure it would cause, with the
//! files and fields that disagree, by how much, and the fix. Legal setups
//! (tied embeddings, padded vocabularies, rotary positions) give nothing, or a
//! note.

use crate::model_dir::{ModelDir, Sourced};
use devassert_core::{ids, Bound, Catalog, Cause, Finding, RuleId, Scalar, Severity};
use serde_json::{json, Map, Value};

const EMBEDDING: RuleId = ids::EMBEDDING_INDEX_OUT_OF_RANGE;
const CROSS_ENTROPY: RuleId = ids::CROSS_ENTROPY_TARGET_OUT_OF_RANGE;
/// A static check knows its cause; it is as sure as the catalog allows.
const SURE: f64 = 0.95;

fn finding(
    rule: RuleId,
    severity: Severity,
    cause: Option<(&str, String)>,
    evidence: Map<String, Value>,
    fixes: Vec<String>,
) -> Finding {
    let mut f = Catalog::builtin_finding(rule);
    f.severity = severity;
    f.evidence = evidence;
    // The rule's general fixes are for a crash seen at run time; a static
    // finding knows the one that applies: its cause's.
    match cause {
        Some((id, why)) => {
            f.causes = vec![Cause::new(id, SURE, why).with_fixes(fixes.iter().cloned())];
            f.fixes = fixes;
        }
        None => f.fixes = fixes,
    }
    f
}

fn file_of(s: &Sourced) -> String {
    s.from.split(' ').next().unwrap_or_default().to_string()
}

fn ev(pairs: Vec<(&str, Value)>) -> Map<String, Value> {
    pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
}

fn files(list: &[String]) -> Value {
    let mut v: Vec<String> = Vec::new();
    for f in list {
        if !v.contains(f) {
            v.push(f.clone());
        }
    }
    json!(v)
}

/// All findings for a model directory, errors first.
pub fn check(model: &ModelDir) -> Vec<Finding> {
    let mut out = Vec::new();
    let rows = model.embedding_rows();
    vocab_vs_rows(model, rows.as_ref(), &mut out);
    config_vocab_vs_rows(model, &mut out);
    special_ids(model, rows.as_ref(), &mut out);
    positions(model, &mut out);
    token_types(model, &mut out);
    classifier(model, &mut out);
    output_head(model, &mut out);
    out.sort_by_key(|f| std::cmp::Reverse(f.severity));
    out
}

/// Tokenizer ids (added tokens included) against the embedding rows.
fn vocab_vs_rows(model: &ModelDir, rows: Option<&Sourced>, out: &mut Vec<Finding>) {
    let (Some(tok), Some(rows)) = (&model.tokenizer, rows) else {
        return;
    };
    let Some(max_id) = tok.max_id else { return };
    let config_vocab = model
        .config
        .as_ref()
        .and_then(|c| c.vocab_size.as_ref())
        .map(|f| f.value);
    let mut evidence = ev(vec![
        ("files", files(&[tok.files[0].clone(), file_of(rows)])),
        ("config.vocab_size", json!(config_vocab)),
        ("tokenizer.size", json!(tok.size)),
        ("tokenizer.base_size", json!(tok.base_size)),
        ("tokenizer.max_id", json!(max_id)),
        ("embedding_rows", json!(rows.value)),
        ("embedding_rows_from", json!(rows.from)),
    ]);
    if max_id >= rows.value {
        let mut past: Vec<&crate::tokenizer::AddedToken> =
            tok.added.iter().filter(|t| t.id >= rows.value).collect();
        past.sort_by_key(|t| t.id);
        let added_past = !past.is_empty();
        evidence.insert(
            "missing_rows".into(),
            json!((max_id - rows.value).saturating_add(1)),
        );
        if added_past {
            evidence.insert(
                "added_tokens_past_rows".into(),
                json!(past
                    .iter()
                    .take(10)
                    .map(|t| json!({"id": t.id, "content": t.content}))
                    .collect::<Vec<_>>()),
            );
        }
        let mut past_ids: Vec<u64> = past.iter().map(|t| t.id).collect();
        if past_ids.is_empty() {
            past_ids.push(max_id);
        }
        // The engine decides between the token-table causes (a pad token
        // added past the rows is padding's story); its why for any but the
        // two this check words itself.
        let decided = crate::decided::past_rows(tok, rows.value, &past_ids);
        if !decided.ruled_out.is_empty() {
            evidence.insert("ruled_out".into(), json!(decided.ruled_out));
        }
        let first = decided.causes.first();
        let (cause, why) = match first.map(|c| c.id.as_str()) {
            Some("added_tokens_no_resize") if added_past => ("added_tokens_no_resize", format!("the tokenizer has {} added token(s) with ids {}..={} past the embedding's {} rows: they were added without resizing the embeddings", past.len(), past[0].id, max_id, rows.value)),
            Some(id @ ("added_tokens_no_resize" | "pad_token_id_out_of_range" | "negative_index")) => (
                id,
                first.map(|c| c.why.clone()).unwrap_or_default(),
            ),
            _ => (
                "token_id_ge_vocab",
                format!(
                    "the tokenizer's vocabulary reaches id {max_id} but the embedding has {} rows",
                    rows.value
                ),
            ),
        };
        let mut f = finding(
            EMBEDDING,
            Severity::Error,
            Some((cause, why)),
            evidence,
            vec![format!("model.resize_token_embeddings(len(tokenizer))  # {} -> {} rows, then save the model", rows.value, max_id.saturating_add(1))],
        );
        f.values = past_ids
            .iter()
            .take(24)
            .map(|&v| Scalar::Int(v as i64))
            .collect();
        f.count = Some((max_id - rows.value).saturating_add(1));
        f.bound = Some(Bound::index(0, rows.value as i64));
        out.push(f);
    } else if max_id.saturating_add(1) < rows.value {
        // Padded vocabularies (rows rounded up for speed) are legal.
        evidence.insert("unused_rows".into(), json!(rows.value - max_id - 1));
        let mut f = finding(EMBEDDING, Severity::Note, None, evidence, vec![]);
        f.summary = format!("the embedding has {} rows, {} more than the tokenizer uses (a padded vocabulary is fine)", rows.value, rows.value - max_id - 1);
        out.push(f);
    }
}

/// `config.vocab_size` against the real table.
fn config_vocab_vs_rows(model: &ModelDir, out: &mut Vec<Finding>) {
    let (Some(l), Some(f)) = (
        &model.roles.input_embeddings,
        model.config.as_ref().and_then(|c| c.vocab_size.as_ref()),
    ) else {
        return;
    };
    let rows = l.rows() as i64;
    if f.value == rows {
        return;
    }
    let evidence = ev(vec![
        ("files", json!(["config.json", l.tensor.file])),
        (&format!("config.{}", f.name), json!(f.value)),
        ("embedding_rows", json!(rows)),
        ("embedding_tensor", json!(l.tensor.name)),
        ("difference", json!(f.value - rows)),
    ]);
    if f.value > rows {
        let why = format!("config.json says {} = {} but {} has {rows} rows: ids in [{rows}, {}) that the config allows reach past the table", f.name, f.value, l.tensor.name, f.value);
        let mut x = finding(
            EMBEDDING,
            Severity::Error,
            Some(("token_id_ge_vocab", why)),
            evidence,
            vec![format!(
                "set \"{}\": {rows} in config.json, or resize: model.resize_token_embeddings({})",
                f.name, f.value
            )],
        );
        x.bound = Some(Bound::index(0, rows));
        x.values = vec![Scalar::Int(f.value - 1)];
        out.push(x);
    } else {
        let why = format!("config.json says {} = {} but {} has {rows} rows: code that takes the vocabulary size from the config builds too small a table or output", f.name, f.value, l.tensor.name);
        out.push(finding(
            EMBEDDING,
            Severity::Warning,
            Some(("token_id_ge_vocab", why)),
            evidence,
            vec![format!("set \"{}\": {rows} in config.json", f.name)],
        ));
    }
}

/// `pad_token_id`, `bos`, `eos`, `decoder_start` must be rows of the table.
fn special_ids(model: &ModelDir, rows: Option<&Sourced>, out: &mut Vec<Finding>) {
    let (Some(c), Some(rows)) = (&model.config, rows) else {
        return;
    };
    for field in &c.special_ids {
        if field.value >= 0 && (field.value as u64) < rows.value {
            continue;
        }
        let hint = if field.value == -100 {
            " (-100 is the loss's ignore_index, not a token id)"
        } else if field.value as u64 == rows.value {
            " (one past the last row)"
        } else {
            ""
        };
        let why = format!(
            "config.json {} = {}{hint}, outside the embedding's [0, {})",
            field.name, field.value, rows.value
        );
        let tok_id = model.tokenizer.as_ref().and_then(|t| {
            let role = field
                .name
                .trim_start_matches("text_config.")
                .trim_end_matches("_id")
                .replace("decoder_start_token", "pad_token");
            t.specials
                .iter()
                .find(|s| s.role == role)
                .and_then(|s| s.id)
        });
        let fix = special_id_fix(&field.name, tok_id, rows.value);
        let evidence = ev(vec![
            ("files", files(&["config.json".to_string(), file_of(rows)])),
            (&format!("config.{}", field.name), json!(field.value)),
            ("embedding_rows", json!(rows.value)),
            ("embedding_rows_from", json!(rows.from)),
        ]);
        let mut f = finding(
            EMBEDDING,
            Severity::Error,
            Some(("pad_token_id_out_of_range", why)),
            evidence,
            vec![fix],
        );
        f.values = vec![Scalar::Int(field.value)];
        f.bound = Some(Bound::index(0, rows.value as i64));
        out.push(f);
    }
}

/// The fix for a special id outside `[0, rows)`: the tokenizer's id for the
/// token only when that id is itself a row of the table (an added pad token
/// is often the very id that is out of range).
fn special_id_fix(name: &str, tok_id: Option<u64>, rows: u64) -> String {
    match tok_id {
        Some(id) if id < rows => {
            format!("set \"{name}\": {id} in config.json (the tokenizer's id for it)")
        }
        Some(id) => format!(
            "the tokenizer's token for it is id {id}, also outside [0, {rows}): resize the embedding to the tokenizer (`model.resize_token_embeddings(len(tokenizer))`) or set \"{name}\" in config.json to an existing token id below {rows} (e.g. the eos token id)"
        ),
        None => format!(
            "set \"{name}\" in config.json to a token id below {rows} (e.g. the tokenizer's pad/eos token id)"
        ),
    }
}

/// The tokenizer's `model_max_length` against the usable positions.
fn positions(model: &ModelDir, out: &mut Vec<Finding>) {
    let (Some(tok), Some(usable)) = (&model.tokenizer, model.usable_positions()) else {
        return;
    };
    let evidence = |extra: Vec<(&str, Value)>| {
        let mut m = ev(vec![
            (
                "files",
                files(&["tokenizer_config.json".to_string(), file_of(&usable)]),
            ),
            ("tokenizer.model_max_length", json!(tok.model_max_length)),
            ("usable_positions", json!(usable.value)),
            ("usable_positions_from", json!(usable.from)),
        ]);
        m.extend(extra.into_iter().map(|(k, v)| (k.to_string(), v)));
        m
    };
    match tok.model_max_length {
        Some(max) if max > usable.value => {
            let why = format!("tokenizer_config.json allows {max} tokens but the position table takes {} positions ({}): longer inputs index past it", usable.value, usable.from);
            let mut f = finding(
                EMBEDDING,
                Severity::Error,
                Some(("seq_len_gt_max_positions", why)),
                evidence(vec![("difference", json!(max - usable.value))]),
                vec![
                    format!(
                        "tokenizer(..., truncation=True, max_length={})",
                        usable.value
                    ),
                    format!(
                        "set \"model_max_length\": {} in tokenizer_config.json",
                        usable.value
                    ),
                ],
            );
            f.values = vec![Scalar::Int(max as i64 - 1)];
            f.bound = Some(Bound::index(0, usable.value as i64));
            out.push(f);
        }
        None if tok.files.iter().any(|f| f == "tokenizer_config.json") => {
            let mut f = finding(
                EMBEDDING,
                Severity::Note,
                None,
                evidence(vec![]),
                vec![format!(
                    "tokenizer(..., truncation=True, max_length={})",
                    usable.value
                )],
            );
            f.summary = format!("the tokenizer sets no model_max_length; inputs longer than {} tokens would index past the position table", usable.value);
            out.push(f);
        }
        _ => {}
    }
}

/// Pair inputs get type id 1; a table of one row cannot take it.
fn token_types(model: &ModelDir, out: &mut Vec<Finding>) {
    let (Some(tok), Some(types)) = (&model.tokenizer, model.type_vocab()) else {
        return;
    };
    let Some(max_type) = tok.max_type_id else {
        return;
    };
    if max_type < types.value {
        return;
    }
    let why = format!("the tokenizer returns token_type_ids up to {max_type} for sequence pairs but the token type table has {} row(s) ({})", types.value, types.from);
    let evidence = ev(vec![
        ("files", files(&[tok.files[0].clone(), file_of(&types)])),
        ("tokenizer.max_type_id", json!(max_type)),
        ("tokenizer.class", json!(tok.class)),
        ("type_vocab_size", json!(types.value)),
        ("type_vocab_size_from", json!(types.from)),
    ]);
    let mut f = finding(
        EMBEDDING,
        Severity::Warning,
        Some(("type_vocab_size", why)),
        evidence,
        vec!["tokenizer(a, b, return_token_type_ids=False), or do not pass token_type_ids to the model".into(), format!("a model with type_vocab_size >= {}", max_type.saturating_add(1))],
    );
    f.values = vec![Scalar::Int(max_type as i64)];
    f.bound = Some(Bound::index(0, types.value as i64));
    out.push(f);
}

/// A classification head with fewer rows than the labels the config names.
fn classifier(model: &ModelDir, out: &mut Vec<Finding>) {
    let (Some(l), Some(labels)) = (
        &model.roles.classifier,
        model.config.as_ref().and_then(|c| c.num_labels.as_ref()),
    ) else {
        return;
    };
    let rows = l.rows() as i64;
    if labels.value <= rows {
        return;
    }
    let why = format!("config.json {} names {} classes but {} has {rows} rows: labels {rows}..{} reach past the head", labels.name, labels.value, l.tensor.name, labels.value - 1);
    let evidence = ev(vec![
        ("files", json!(["config.json", l.tensor.file])),
        (&format!("config.{}", labels.name), json!(labels.value)),
        ("classifier_rows", json!(rows)),
        ("classifier_tensor", json!(l.tensor.name)),
        ("difference", json!(labels.value - rows)),
    ]);
    let mut f = finding(
        CROSS_ENTROPY,
        Severity::Error,
        Some(("label_ge_num_classes", why)),
        evidence,
        vec![format!("AutoModelForSequenceClassification.from_pretrained(DIR, num_labels={}, ignore_mismatched_sizes=True)", labels.value)],
    );
    f.values = (rows..labels.value).take(24).map(Scalar::Int).collect();
    f.bound = Some(Bound::index(0, rows));
    out.push(f);
}

/// An untied output head resized apart from the input table: LM labels are
/// token ids, and the loss asserts on the ones past its rows.
fn output_head(model: &ModelDir, out: &mut Vec<Finding>) {
    let (Some(head), Some(input), Some(tok)) = (
        &model.roles.output_head,
        &model.roles.input_embeddings,
        &model.tokenizer,
    ) else {
        return;
    };
    let Some(max_id) = tok.max_id else { return };
    if head.rows() == input.rows() || max_id < head.rows() {
        return;
    }
    let why = format!("{} has {} rows but the tokenizer emits ids up to {max_id}; as language-model labels they reach past the output head", head.tensor.name, head.rows());
    let evidence = ev(vec![
        (
            "files",
            files(&[tok.files[0].clone(), head.tensor.file.clone()]),
        ),
        ("output_head_rows", json!(head.rows())),
        ("output_head_tensor", json!(head.tensor.name)),
        ("embedding_rows", json!(input.rows())),
        ("tokenizer.max_id", json!(max_id)),
    ]);
    let mut f = finding(
        CROSS_ENTROPY,
        Severity::Error,
        Some(("added_tokens_no_resize", why)),
        evidence,
        vec!["model.resize_token_embeddings(len(tokenizer))  # resizes the output head too".into()],
    );
    f.bound = Some(Bound::index(0, head.rows() as i64));
    out.push(f);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A model whose added pad token is the id past the table: config and
    /// tokenizer agree on 498, the embedding has 498 rows.
    #[test]
    fn no_fix_sets_the_bad_id() {
        let dir = tempfile::tempdir().unwrap();
        let vocab: serde_json::Map<String, Value> =
            (0..498).map(|i| (format!("t{i}"), json!(i))).collect();
        let w =
            |name: &str, v: Value| std::fs::write(dir.path().join(name), v.to_string()).unwrap();
        w("vocab.json", Value::Object(vocab));
        w(
            "tokenizer_config.json",
            json!({"pad_token": "[PAD]", "eos_token": "t1",
                   "added_tokens_decoder": {"498": {"content": "[PAD]", "special": true}}}),
        );
        w(
            "config.json",
            json!({"model_type": "gpt2", "vocab_size": 498, "pad_token_id": 498, "eos_token_id": 1}),
        );
        let model = ModelDir::read(dir.path()).unwrap();
        let found = check(&model);
        let pad = found
            .iter()
            .find(|f| f.causes.iter().any(|c| c.id == "pad_token_id_out_of_range"))
            .expect("the pad id is out of range");
        assert!(!pad.fixes.is_empty());
        for fix in &pad.fixes {
            assert!(!fix.contains(": 498"), "a fix sets the bad id: {fix}");
        }
        assert!(
            pad.fixes[0].contains("resize_token_embeddings"),
            "{:?}",
            pad.fixes
        );
    }

    #[test]
    fn the_tokenizers_id_is_advised_when_it_is_a_row() {
        assert_eq!(
            special_id_fix("pad_token_id", Some(0), 498),
            "set \"pad_token_id\": 0 in config.json (the tokenizer's id for it)"
        );
        assert!(!special_id_fix("pad_token_id", Some(498), 498).contains(": 498"));
        assert!(special_id_fix("pad_token_id", None, 498).contains("below 498"));
    }
}

//! Why the bad values are there, read off the values themselves: how many are
//! negative, how many are -1 written into an unsigned array (65535,
//! 4294967295), how many sit just past a well-known base vocabulary, how many
//! are the 255 / -100 borders of label data. A cause's score is the share of
//! the bad values it covers, scaled down because the data cannot show
//! intent; each cause carries its own fixes (`advice` lists them in rank
//! order).

use crate::options::{Bounds, Target};
use devassert_core::Cause;
use std::collections::HashMap;

/// How far past a base vocabulary added special tokens usually reach.
const ADDED_TOKENS_SPAN: i64 = 1024;

/// -1 as an unsigned array stores it: `np.array([-1]).astype(np.uint16)` is
/// 65535, as uint32 4294967295 (also what int32 -1 reads as unsigned).
const UNSIGNED_MINUS_ONE: [(i64, &str); 2] =
    [(u16::MAX as i64, "uint16"), (u32::MAX as i64, "uint32")];

fn unsigned_minus_one(v: i64) -> Option<&'static str> {
    UNSIGNED_MINUS_ONE
        .iter()
        .find(|(m, _)| *m == v)
        .map(|(_, t)| *t)
}

pub struct Explained {
    pub causes: Vec<Cause>,
    /// Lines for the human summary.
    pub hints: Vec<String>,
}

fn cause(id: &str, share: f64, scale: f64, why: String, fixes: &[String]) -> Cause {
    let confidence = ((share * scale * 100.0).round() / 100.0).clamp(0.05, 0.95);
    Cause::new(id, confidence, why).with_fixes(fixes.iter().cloned())
}

pub fn explain(
    values: &HashMap<i64, u64>,
    bounds: Bounds,
    target: Target,
    image: bool,
) -> Explained {
    let total: u64 = values.values().sum::<u64>().max(1);
    let share = |pred: &dyn Fn(i64) -> bool| {
        values
            .iter()
            .filter(|(v, _)| pred(**v))
            .map(|(_, c)| *c)
            .sum::<u64>() as f64
            / total as f64
    };
    // A wrapped -1 explains itself, whatever the range: never a larger
    // vocabulary or more classes. (255, the void label, is not one here.)
    let wrapped = |v: i64| v >= bounds.high && unsigned_minus_one(v).is_some();
    let sentinel = share(&wrapped);
    let max = values
        .keys()
        .copied()
        .filter(|v| !wrapped(*v))
        .max()
        .unwrap_or(bounds.high);
    let min = values.keys().copied().min().unwrap_or(bounds.low);
    let mut causes = Vec::new();
    let mut hints = Vec::new();
    if sentinel > 0.0 {
        let mut seen: Vec<i64> = values.keys().copied().filter(|v| wrapped(*v)).collect();
        seen.sort_unstable();
        let what: Vec<String> = seen
            .iter()
            .map(|v| {
                format!(
                    "{v} (-1 as {})",
                    unsigned_minus_one(*v).unwrap_or("unsigned")
                )
            })
            .collect();
        let v = seen[0];
        let (id, fix) = match target {
            Target::Tokens => (
                "negative_index",
                format!("write padding as pad_token_id (or drop it) before saving unsigned tokens; after loading, map the sentinel back: `ids[ids == {v}] = pad_token_id`"),
            ),
            Target::Labels => (
                "negative_label",
                format!("map the sentinel to the loss's ignore_index before saving unsigned labels (or save them signed); after loading: `labels[labels == {v}] = -100`"),
            ),
        };
        causes.push(cause(
            id,
            sentinel,
            0.95,
            format!("{} of the bad values are {}: a -1 sentinel (padding / ignore) written into an unsigned array, not a real id", pct(sentinel), what.join(", ")),
            &[fix],
        ));
        hints.push(format!(
            "{}: -1 written into an unsigned array (a padding / ignore sentinel)?",
            what.join(", ")
        ));
    }
    match target {
        Target::Tokens => {
            let neg = share(&|v| v < 0);
            let base = devassert_core::vocab::is_base_vocab(bounds.high);
            let near_end = if base {
                bounds.high + ADDED_TOKENS_SPAN
            } else {
                bounds.high
            };
            let near = share(&|v| v >= bounds.high && v < near_end && !wrapped(v));
            let far = share(&|v| v >= near_end && !wrapped(v));
            let near_max = values
                .keys()
                .copied()
                .filter(|&v| v >= bounds.high && v < near_end)
                .max()
                .unwrap_or(bounds.high);
            if near > 0.0 {
                let what = if near_max == bounds.high {
                    format!("id {near_max} sits")
                } else {
                    format!("ids {}..={near_max} sit", bounds.high)
                };
                causes.push(cause(
                    "added_tokens_no_resize",
                    near,
                    0.7,
                    format!("{what} just past {}, a common base vocabulary: tokens were added to the tokenizer but the embeddings were not resized", bounds.high),
                    &["model.resize_token_embeddings(len(tokenizer))".into()],
                ));
                causes.push(cause("token_id_ge_vocab", near, 0.25, format!("ids up to {near_max} came from a tokenizer with a larger vocabulary than {}", bounds.high), &[]));
                hints.push(format!("max id {near_max} with vocab {}: tokens added without resizing the embeddings?", bounds.high));
            }
            if far > 0.0 {
                causes.push(cause(
                    "token_id_ge_vocab",
                    far,
                    0.8,
                    format!("ids up to {max} need a vocabulary of at least {}, the model has {}: the data was tokenized with a different tokenizer", max.saturating_add(1), bounds.high),
                    &["re-tokenize the data with the model's own tokenizer, or pass the model's real vocabulary size".into()],
                ));
                hints.push(format!(
                    "max id {max} with vocab {}: tokenized with a different (larger) tokenizer?",
                    bounds.high
                ));
            }
            if neg > 0.0 {
                causes.push(cause(
                    "negative_index",
                    neg,
                    0.85,
                    format!("{} of the bad ids are negative (down to {min}): a padding or label sentinel (-1, -100) in the input ids", pct(neg)),
                    &["replace the sentinel with pad_token_id before the embedding (labels may keep -100)".into()],
                ));
                hints.push(format!(
                    "negative ids down to {min}: a sentinel such as -100 written into input_ids?"
                ));
            }
        }
        Target::Labels => {
            let border = share(&|v| v == 255 && bounds.high <= 255);
            let hf = share(&|v| v == -100);
            let neg = share(&|v| v < 0 && v != -100);
            let past =
                |v: i64| v >= bounds.high && !(v == 255 && bounds.high <= 255) && !wrapped(v);
            let high = share(&past);
            let max = values
                .keys()
                .copied()
                .filter(|&v| past(v))
                .max()
                .unwrap_or(max);
            if border > 0.0 {
                causes.push(cause(
                    "ignore_label_not_ignored",
                    border,
                    0.9,
                    "255 is the void / border label of VOC-style masks; the loss does not ignore it".into(),
                    &["pass ignore_index=255 to CrossEntropyLoss (and --ignore 255 here)".into()],
                ));
                hints.push("255 in the labels: the void/border label, not ignored?".into());
            }
            if hf > 0.0 {
                causes.push(cause(
                    "ignore_label_not_ignored",
                    hf,
                    0.9,
                    "-100 is the usual ignore label, but the loss's ignore_index is something else"
                        .into(),
                    &["keep ignore_index=-100 (the default) in the loss".into()],
                ));
                hints.push("-100 in the labels: the usual ignore label, but a different ignore_index is set?".into());
            }
            if neg > 0.0 {
                causes.push(cause("negative_label", neg, 0.85, format!("{} of the bad labels are negative (down to {min}): a -1 'unlabelled' marker", pct(neg)), &["map -1 to the loss's ignore_index (e.g. labels[labels == -1] = -100), or pass ignore_index=-1".into()]));
                hints.push(format!("negative labels down to {min}: an 'unlabelled' marker that the loss does not ignore?"));
            }
            if high > 0.0 {
                let one_based = max == bounds.high
                    && values
                        .keys()
                        .all(|&v| v == bounds.high || v < 0 || v == 255 || wrapped(v));
                let why = if one_based {
                    format!("the only label past the range is {max} = num_classes: the labels look 1-based")
                } else {
                    format!(
                        "labels up to {max} need at least {} classes, the model has {}",
                        max.saturating_add(1),
                        bounds.high
                    )
                };
                let mut fixes = Vec::new();
                if one_based {
                    hints.push(format!(
                        "max label {max} with {} classes: 1-based labels?",
                        bounds.high
                    ));
                    fixes.push("subtract 1 from 1-based labels".to_string());
                } else {
                    hints.push(format!(
                        "max label {max} with {} classes: the model has too few classes?",
                        bounds.high
                    ));
                }
                fixes.push(format!(
                    "set num_labels / num_classes to {} or remap the labels",
                    max.saturating_add(1)
                ));
                causes.push(cause("label_ge_num_classes", high, 0.85, why, &fixes));
            }
            if image && causes.is_empty() {
                hints.push("mask values outside the class range".into());
            }
        }
    }
    causes.sort_by(|a, b| b.confidence.total_cmp(&a.confidence));
    // One entry per cause id: the best explanation, with the others' weight
    // and fixes.
    let mut merged: Vec<Cause> = Vec::new();
    for c in causes {
        match merged.iter_mut().find(|m| m.id == c.id) {
            Some(m) => {
                m.confidence = (m.confidence + c.confidence).min(0.95);
                for x in c.fixes {
                    if !m.fixes.contains(&x) {
                        m.fixes.push(x);
                    }
                }
            }
            None => merged.push(c),
        }
    }
    let mut causes = merged;
    causes.sort_by(|a, b| b.confidence.total_cmp(&a.confidence));
    if causes.is_empty() {
        causes.push(Cause::new(
            "unknown",
            0.5,
            "values outside the range with no recognisable pattern",
        ));
    }
    Explained { causes, hints }
}

fn pct(share: f64) -> String {
    format!("{:.0}%", share * 100.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn just_past_gpt2_is_added_tokens() {
        let v = HashMap::from([(50257, 3), (50260, 1)]);
        let e = explain(&v, Bounds::new(0, 50257), Target::Tokens, false);
        assert_eq!(e.causes[0].id, "added_tokens_no_resize");
        assert!(e.hints[0].contains("max id 50260 with vocab 50257"));
    }

    #[test]
    fn far_past_is_a_different_tokenizer() {
        let v = HashMap::from([(128000, 1)]);
        let e = explain(&v, Bounds::new(0, 50257), Target::Tokens, false);
        assert_eq!(e.causes[0].id, "token_id_ge_vocab");
    }

    #[test]
    fn an_unsigned_minus_one_is_a_sentinel_not_a_larger_tokenizer() {
        // nanoGPT-style uint16 tokens padded with -1, and one real id past the vocabulary.
        let v = HashMap::from([(65535, 40), (60000, 1)]);
        let e = explain(&v, Bounds::new(0, 50257), Target::Tokens, false);
        assert_eq!(e.causes[0].id, "negative_index", "{:?}", e.causes);
        assert!(e.causes[0].why.contains("65535 (-1 as uint16)"));
        assert!(e.causes[0].confidence > e.causes[1].confidence);
        assert!(
            e.causes[1].why.contains("ids up to 60000"),
            "{:?}",
            e.causes[1]
        );
        let v = HashMap::from([(4294967295, 3)]);
        let e = explain(&v, Bounds::new(0, 21), Target::Labels, false);
        assert_eq!(e.causes[0].id, "negative_label");
        assert!(e.causes[0].why.contains("-1 as uint32"));
        assert_eq!(e.causes.len(), 1, "{:?}", e.causes);
    }

    #[test]
    fn label_borders_and_markers() {
        let v = HashMap::from([(255, 90), (-1, 10)]);
        let e = explain(&v, Bounds::new(0, 21), Target::Labels, true);
        assert_eq!(e.causes[0].id, "ignore_label_not_ignored");
        assert_eq!(e.causes[1].id, "negative_label");
        let v = HashMap::from([(3, 50)]);
        let e = explain(&v, Bounds::new(0, 3), Target::Labels, false);
        assert!(e.causes[0].why.contains("1-based"));
    }
}

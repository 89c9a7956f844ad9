//! Why the bad values are there, read off the values themselves: how many are
//! negative, how many sit just past a well-known base vocabulary, how many are
//! the 255 / -100 borders of label data. Confidences are the share of the bad
//! values each explanation covers, scaled down because the data cannot show
//! intent.

use crate::options::{Bounds, Target};
use devassert_core::catalog::push_fix;
use devassert_core::Cause;
use std::collections::HashMap;

/// How far past a base vocabulary added special tokens usually reach.
const ADDED_TOKENS_SPAN: i64 = 1024;

pub struct Explained {
    pub causes: Vec<Cause>,
    pub fixes: Vec<String>,
    /// Lines for the human summary.
    pub hints: Vec<String>,
}

fn cause(id: &str, share: f64, scale: f64, why: String) -> Cause {
    Cause {
        established: false,
        proof: None,
        id: id.into(),
        confidence: ((share * scale * 100.0).round() / 100.0).clamp(0.05, 0.95),
        why,
    }
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
    let max = values.keys().copied().max().unwrap_or(bounds.high);
    let min = values.keys().copied().min().unwrap_or(bounds.low);
    let mut causes = Vec::new();
    let mut fixes = Vec::new();
    let mut hints = Vec::new();
    match target {
        Target::Tokens => {
            let neg = share(&|v| v < 0);
            let base = devassert_core::vocab::is_base_vocab(bounds.high);
            let near_end = if base {
                bounds.high + ADDED_TOKENS_SPAN
            } else {
                bounds.high
            };
            let near = share(&|v| v >= bounds.high && v < near_end);
            let far = share(&|v| v >= near_end);
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
                ));
                causes.push(cause("token_id_ge_vocab", near, 0.25, format!("ids up to {near_max} came from a tokenizer with a larger vocabulary than {}", bounds.high)));
                hints.push(format!("max id {near_max} with vocab {}: tokens added without resizing the embeddings?", bounds.high));
                push_fix(&mut fixes, "model.resize_token_embeddings(len(tokenizer))");
            }
            if far > 0.0 {
                causes.push(cause(
                    "token_id_ge_vocab",
                    far,
                    0.8,
                    format!("ids up to {max} need a vocabulary of at least {}, the model has {}: the data was tokenized with a different tokenizer", max.saturating_add(1), bounds.high),
                ));
                hints.push(format!(
                    "max id {max} with vocab {}: tokenized with a different (larger) tokenizer?",
                    bounds.high
                ));
                push_fix(&mut fixes, "re-tokenize the data with the model's own tokenizer, or pass the model's real vocabulary size");
            }
            if neg > 0.0 {
                causes.push(cause(
                    "negative_index",
                    neg,
                    0.85,
                    format!("{} of the bad ids are negative (down to {min}): a padding or label sentinel (-1, -100) in the input ids", pct(neg)),
                ));
                hints.push(format!(
                    "negative ids down to {min}: a sentinel such as -100 written into input_ids?"
                ));
                push_fix(&mut fixes, "replace the sentinel with pad_token_id before the embedding (labels may keep -100)");
            }
        }
        Target::Labels => {
            let border = share(&|v| v == 255 && bounds.high <= 255);
            let hf = share(&|v| v == -100);
            let neg = share(&|v| v < 0 && v != -100);
            let high = share(&|v| v >= bounds.high && !(v == 255 && bounds.high <= 255));
            let max = values
                .keys()
                .copied()
                .filter(|&v| v >= bounds.high && !(v == 255 && bounds.high <= 255))
                .max()
                .unwrap_or(max);
            if border > 0.0 {
                causes.push(cause(
                    "ignore_label_not_ignored",
                    border,
                    0.9,
                    "255 is the void / border label of VOC-style masks; the loss does not ignore it".into(),
                ));
                hints.push("255 in the labels: the void/border label, not ignored?".into());
                push_fix(
                    &mut fixes,
                    "pass ignore_index=255 to CrossEntropyLoss (and --ignore 255 here)",
                );
            }
            if hf > 0.0 {
                causes.push(cause(
                    "ignore_label_not_ignored",
                    hf,
                    0.9,
                    "-100 is the usual ignore label, but the loss's ignore_index is something else"
                        .into(),
                ));
                hints.push("-100 in the labels: the usual ignore label, but a different ignore_index is set?".into());
                push_fix(
                    &mut fixes,
                    "keep ignore_index=-100 (the default) in the loss",
                );
            }
            if neg > 0.0 {
                causes.push(cause("negative_label", neg, 0.85, format!("{} of the bad labels are negative (down to {min}): a -1 'unlabelled' marker", pct(neg))));
                hints.push(format!("negative labels down to {min}: an 'unlabelled' marker that the loss does not ignore?"));
                push_fix(&mut fixes, "map -1 to the loss's ignore_index (e.g. labels[labels == -1] = -100), or pass ignore_index=-1");
            }
            if high > 0.0 {
                let one_based = max == bounds.high
                    && values
                        .keys()
                        .all(|&v| v == bounds.high || v < 0 || v == 255);
                let why = if one_based {
                    format!("the only label past the range is {max} = num_classes: the labels look 1-based")
                } else {
                    format!(
                        "labels up to {max} need at least {} classes, the model has {}",
                        max.saturating_add(1),
                        bounds.high
                    )
                };
                causes.push(cause("label_ge_num_classes", high, 0.85, why));
                if one_based {
                    hints.push(format!(
                        "max label {max} with {} classes: 1-based labels?",
                        bounds.high
                    ));
                    push_fix(&mut fixes, "subtract 1 from 1-based labels");
                } else {
                    hints.push(format!(
                        "max label {max} with {} classes: the model has too few classes?",
                        bounds.high
                    ));
                }
                push_fix(
                    &mut fixes,
                    &format!(
                        "set num_labels / num_classes to {} or remap the labels",
                        max.saturating_add(1)
                    ),
                );
            }
            if image && causes.is_empty() {
                hints.push("mask values outside the class range".into());
            }
        }
    }
    causes.sort_by(|a, b| b.confidence.total_cmp(&a.confidence));
    // One entry per cause id: the best explanation, with the others' weight.
    let mut merged: Vec<Cause> = Vec::new();
    for c in causes {
        match merged.iter_mut().find(|m| m.id == c.id) {
            Some(m) => m.confidence = (m.confidence + c.confidence).min(0.95),
            None => merged.push(c),
        }
    }
    let mut causes = merged;
    causes.sort_by(|a, b| b.confidence.total_cmp(&a.confidence));
    if causes.is_empty() {
        causes.push(Cause {
            established: false,
            proof: None,
            id: "unknown".into(),
            confidence: 0.5,
            why: "values outside the range with no recognisable pattern".into(),
        });
    }
    Explained {
        causes,
        fixes,
        hints,
    }
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

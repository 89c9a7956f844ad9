//! check's cause for tokenizer ids past the embedding, decided by the same
//! engine (`catalog/causes.toml`) as scan, preflight, the guard and explain:
//! the ids past the rows, `len(tokenizer)`, its added tokens and pad id.

use crate::tokenizer::{TokenizerInfo, VocabSource};
use devassert_core::facts::{self, Decision, Kind};
use std::collections::HashMap;

/// The causes of `ids` (each >= `rows`) reaching an embedding of `rows`.
pub(crate) fn past_rows(tok: &TokenizerInfo, rows: u64, ids: &[u64]) -> Decision {
    let as_i64 = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
    let counts: HashMap<i64, u64> = ids.iter().map(|&v| (as_i64(v), 1)).collect();
    let mut f = facts::value_facts(&counts, 0, as_i64(rows), Kind::Ids);
    // Without the base vocabulary (a sentencepiece model or ByT5's bytes are
    // not read) the size counts the added tokens only; their largest id is
    // the tokenizer's own, so len(tokenizer) reaches at least one past it.
    let len = match tok.source {
        VocabSource::AddedOnly => tok.max_id.map(|m| m.saturating_add(1).max(tok.size)),
        _ => Some(tok.size),
    };
    if let Some(len) = len {
        f.insert("tok_len".into(), len as f64);
        f.insert("tok_added".into(), tok.added.len() as f64);
    }
    let pad = tok.specials.iter().find(|s| s.role == "pad_token");
    if let Some(p) = pad.and_then(|s| s.id) {
        f.insert("pad_id".into(), p as f64);
    }
    // The word embedding of a Hugging Face model, read from its files: the
    // ids are the tokenizer's, not positions.
    f.insert("hint_tok".into(), 1.0);
    f.insert("hf".into(), 1.0);
    f.insert("positions".into(), 0.0);
    facts::decide(Kind::Ids, &f)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokenizer::{AddedToken, SpecialToken};

    fn tokenizer(base: u64, added: &[(u64, &str)], pad: Option<u64>) -> TokenizerInfo {
        TokenizerInfo {
            source: VocabSource::TokenizerJson,
            files: vec!["tokenizer.json".into()],
            base_size: base,
            size: base + added.len() as u64,
            max_id: added.iter().map(|a| a.0).max().or(base.checked_sub(1)),
            added: added
                .iter()
                .map(|(id, c)| AddedToken {
                    id: *id,
                    content: (*c).into(),
                    special: true,
                })
                .collect(),
            specials: pad
                .map(|id| SpecialToken {
                    role: "pad_token".into(),
                    content: "[PAD]".into(),
                    id: Some(id),
                })
                .into_iter()
                .collect(),
            model_max_length: None,
            class: None,
            emits_type_ids: false,
            max_type_id: None,
        }
    }

    #[test]
    fn tokens_added_past_the_rows_are_added_tokens() {
        let t = tokenizer(50257, &[(50257, "<a>"), (50258, "<b>")], None);
        let d = past_rows(&t, 50257, &[50257, 50258]);
        assert_eq!(d.causes[0].id, "added_tokens_no_resize", "{d:#?}");
        assert!(d
            .ruled_out
            .iter()
            .any(|r| r.starts_with("token_id_ge_vocab:")));
    }

    #[test]
    fn added_tokens_without_the_base_vocabulary_are_still_added_tokens() {
        // ByT5 (bytes, no vocabulary file) or a sentencepiece model that is
        // not read: only added_tokens.json names ids, 384 and 385 among them.
        let mut t = tokenizer(0, &[(259, "<extra>"), (384, "<a>"), (385, "<b>")], None);
        t.source = VocabSource::AddedOnly;
        let d = past_rows(&t, 384, &[384, 385]);
        assert_eq!(d.causes[0].id, "added_tokens_no_resize", "{d:#?}");
    }

    #[test]
    fn a_base_vocabulary_past_the_rows_is_no_added_token_story() {
        // Another model's tokenizer (base 32000) on a 30522-row embedding,
        // with two added tokens of its own.
        let t = tokenizer(32000, &[(32000, "<a>"), (32001, "<b>")], None);
        let d = past_rows(&t, 30522, &[32000, 32001]);
        assert_eq!(d.causes[0].id, "token_id_ge_vocab", "{d:#?}");
        assert!(d
            .ruled_out
            .iter()
            .any(|r| r.starts_with("added_tokens_no_resize:")));
    }
}

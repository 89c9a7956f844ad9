//! The causes the measured facts refute (`evidence.ruled_out`, each
//! `"cause_id: the fact"`), one line each under the ranking: a reader who
//! expected one of them sees why it is not there.

use crate::finding::Finding;
use serde_json::Value;

/// `ruled out: <cause> — <fact>` per refuted cause, in the order decided.
pub(super) fn ruled_out_lines(f: &Finding) -> Vec<String> {
    let Some(Value::Array(rows)) = f.evidence.get("ruled_out") else {
        return Vec::new();
    };
    rows.iter()
        .filter_map(Value::as_str)
        .map(|row| match row.split_once(": ") {
            Some((id, fact)) if !fact.trim().is_empty() => {
                format!("ruled out: {id} — {}", fact.trim())
            }
            // A refutation whose fact rendered to nothing names the cause alone.
            _ => format!("ruled out: {}", row.trim_end_matches(':').trim()),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocabulary::OpFamily;
    use serde_json::json;

    fn finding(rows: Value) -> Finding {
        let mut f = Finding::new(
            "DA101",
            "embedding-index-out-of-range",
            OpFamily::IndexSelect,
            "s",
        );
        f.evidence.insert("ruled_out".into(), rows);
        f
    }

    #[test]
    fn each_refuted_cause_names_its_fact() {
        let f = finding(json!([
            "added_tokens_no_resize: len(tokenizer) = 32000 does not reach id 32000",
            "seq_len_gt_max_positions:",
        ]));
        assert_eq!(
            ruled_out_lines(&f),
            [
                "ruled out: added_tokens_no_resize — len(tokenizer) = 32000 does not reach id 32000",
                "ruled out: seq_len_gt_max_positions",
            ]
        );
        assert!(ruled_out_lines(&finding(json!("not a list"))).is_empty());
    }
}

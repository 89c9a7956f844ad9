//! Why the bad values are there: the facts the scan measured (the bad
//! values and their counts, the sentinels among them, the whole column's
//! smallest and largest value) decided by the one cause engine
//! (`devassert_core::facts`, `catalog/causes.toml`) that the guard, check
//! and preflight use too. Each cause carries its own fixes, each checked
//! against the facts (`advice` lists them in rank order).

use crate::options::{Bounds, Target};
use devassert_core::facts::{self, Facts, Kind};
use devassert_core::Cause;
use std::collections::HashMap;

pub struct Explained {
    pub causes: Vec<Cause>,
    /// Lines for the human summary: the facts behind each supported cause.
    pub hints: Vec<String>,
    /// The causes the facts refute, `cause_id: the fact`.
    pub ruled_out: Vec<String>,
}

/// The smallest and largest value of the whole scanned column (ignored
/// values left out), valid ones included.
pub type Column = Option<(i64, i64)>;

pub fn explain(
    values: &HashMap<i64, u64>,
    bounds: Bounds,
    target: Target,
    image: bool,
    column: Column,
) -> Explained {
    let kind = match target {
        Target::Tokens => Kind::Ids,
        Target::Labels => Kind::Labels,
    };
    let mut f: Facts = facts::value_facts(values, bounds.low, bounds.high, kind);
    if let Some((lo, hi)) = column {
        f.insert("col_min".into(), lo as f64);
        f.insert("col_max".into(), hi as f64);
    }
    // Scanned data are token or label columns, not positions; the fixes
    // speak of Hugging Face's tokenizer and model.
    f.insert("positions".into(), 0.0);
    f.insert("hf".into(), 1.0);
    let d = facts::decide(kind, &f);
    let mut hints: Vec<String> = d
        .causes
        .iter()
        .zip(&d.support)
        .filter(|(_, said)| !said.is_empty())
        .map(|(c, said)| format!("{}? {}", c.id, said.join("; ")))
        .collect();
    let mut causes = d.causes;
    if causes.is_empty() {
        if image {
            hints.push("mask values outside the class range".into());
        }
        causes.push(Cause::new(
            "unknown",
            0.5,
            "values outside the range with no recognisable pattern",
        ));
    }
    Explained {
        causes,
        hints,
        ruled_out: d.ruled_out,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(e: &Explained) -> Vec<&str> {
        e.causes.iter().map(|c| c.id.as_str()).collect()
    }

    #[test]
    fn just_past_gpt2_is_added_tokens() {
        let v = HashMap::from([(50257, 3), (50260, 1)]);
        let e = explain(
            &v,
            Bounds::new(0, 50257),
            Target::Tokens,
            false,
            Some((0, 50260)),
        );
        assert_eq!(e.causes[0].id, "added_tokens_no_resize");
        assert!(
            e.hints[0].contains("go a little past it (to 50260)"),
            "{:?}",
            e.hints
        );
    }

    #[test]
    fn far_past_is_a_different_tokenizer() {
        let v = HashMap::from([(128000, 1)]);
        let e = explain(&v, Bounds::new(0, 50257), Target::Tokens, false, None);
        assert_eq!(e.causes[0].id, "token_id_ge_vocab");
    }

    #[test]
    fn an_unsigned_minus_one_is_a_sentinel_not_a_larger_tokenizer() {
        // nanoGPT-style uint16 tokens padded with -1, and one real id past the vocabulary.
        let v = HashMap::from([(65535, 40), (60000, 1)]);
        let e = explain(
            &v,
            Bounds::new(0, 50257),
            Target::Tokens,
            false,
            Some((0, 65535)),
        );
        assert_eq!(e.causes[0].id, "negative_index", "{:?}", e.causes);
        assert!(e.causes[0]
            .why
            .contains("are 65535, -1 as an unsigned integer"));
        assert!(e.causes[0].confidence > e.causes[1].confidence);
        assert!(
            e.causes.iter().any(|c| c.why.contains("ids reach 60000")),
            "{:?}",
            e.causes
        );
        let v = HashMap::from([(4294967295, 3)]);
        let e = explain(&v, Bounds::new(0, 21), Target::Labels, false, None);
        assert_eq!(ids(&e), ["negative_label"]);
    }

    #[test]
    fn label_borders_and_markers() {
        let v = HashMap::from([(255, 90), (-1, 10)]);
        let e = explain(&v, Bounds::new(0, 21), Target::Labels, true, Some((0, 20)));
        assert_eq!(ids(&e), ["ignore_label_not_ignored", "negative_label"]);
        assert!(e.causes[0]
            .fixes
            .iter()
            .any(|x| x.contains("ignore_index=-1")));
    }

    #[test]
    fn one_based_only_when_no_zero_occurs() {
        // 1..3 with 3 classes: counted from 1.
        let v = HashMap::from([(3, 50)]);
        let e = explain(&v, Bounds::new(0, 3), Target::Labels, false, Some((1, 3)));
        assert_eq!(e.causes[0].id, "off_by_one");
        assert!(e.causes[0].fixes[0].starts_with("subtract 1"));
        // 0..3 with 3 classes: 0 occurs, so subtracting 1 would make -1.
        let e = explain(&v, Bounds::new(0, 3), Target::Labels, false, Some((0, 3)));
        assert_eq!(ids(&e), ["label_ge_num_classes"]);
        assert!(e
            .causes
            .iter()
            .all(|c| c.fixes.iter().all(|x| !x.contains("subtract"))));
    }
}

//! Offending values and valid ranges that host-side messages and assertion
//! texts state outright: `Target 10 is out of bounds.`, `index 5 is out of
//! bounds for dimension 0 with size 5`, Inductor's `0 <= tmp3 < 50257`, …

use devassert_core::{Bound, Scalar};
use regex::Regex;
use std::sync::OnceLock;

/// `(pattern, bound_is_rows_minus_one)`: named groups `value`, `low`, `high`.
const PATTERNS: &[(&str, bool)] = &[
    // `bound` alone: the message retyped or cut in a post (DA201's).
    (r"Target (?P<value>-?\d+) is out of bounds?\b", false),
    (
        r"index (?P<value>-?\d+) is out of bounds for dimension \d+ with size (?P<high>\d+)",
        false,
    ),
    (
        r#"index out of bounds: (?:(?P<low>-?\d+) <= )?tmp\d+ < (?P<high>\d+)L?(?:[`'".,;)]|\s*$)"#,
        false,
    ),
    (
        r"Index \d+ of input takes value (?P<value>-?\d+) which is not in the valid range \[(?P<low>-?\d+), (?P<high>\d+)\)",
        false,
    ),
    (
        r"tried to access index (?P<value>-?\d+) on a tensor of (?P<high>\d+) elements",
        false,
    ),
    (
        r"Tried to access index (?P<value>-?\d+) out of table with (?P<high>\d+) rows",
        true,
    ),
    (
        r"index (?P<value>-?\d+) out of range for tensor of size \[(?P<high>\d+)",
        false,
    ),
    (r"found idx to be (?P<value>-?\d+)", false),
    (r"id=(?P<value>-?\d+) axis_dim=(?P<high>\d+)", false),
    (r"Found an invalid max index: (?P<value>\d+)", false),
    // "value V exceeds bound(s) B" in its shapes: Ascend's `index value
    // 151645 exceeds bounds 129280!`, `index 12 exceeds the upper bound of 10`.
    (
        r"(?i)\b(?:value|index|idx|id)\s+(?:value\s+)?(?P<value>-?\d+)\s+exceeds\s+(?:the\s+)?(?:upper\s+)?bounds?\s*(?:of\s+)?[:=]?\s*(?P<high>\d+)",
        false,
    ),
];

/// One of `PATTERNS`, compiled the first time a text holds one of the
/// literals its matches start with: compiling all eleven at the first
/// evidence line was a sixth of explaining a two-line log.
struct Pattern {
    pattern: &'static str,
    rows: bool,
    /// regex-syntax's prefix literals: every match starts with one (None:
    /// too many to list, or the pattern does not parse).
    starts: Option<Vec<Vec<u8>>>,
    compiled: OnceLock<Option<Regex>>,
}

impl Pattern {
    fn new(pattern: &'static str, rows: bool) -> Self {
        use regex_syntax::hir::literal::{ExtractKind, Extractor};
        let starts = regex_syntax::parse(pattern).ok().and_then(|hir| {
            let seq = Extractor::new().kind(ExtractKind::Prefix).extract(&hir);
            Some(
                seq.literals()?
                    .iter()
                    .map(|l| l.as_bytes().to_vec())
                    .collect(),
            )
        });
        Pattern {
            pattern,
            rows,
            starts,
            compiled: OnceLock::new(),
        }
    }

    /// The regex, when `text` may match it (None: it cannot, or the
    /// pattern does not compile).
    fn for_text(&self, text: &str) -> Option<&Regex> {
        let may = self.starts.as_ref().is_none_or(|starts| {
            starts
                .iter()
                .any(|l| memchr::memmem::find(text.as_bytes(), l).is_some())
        });
        if !may {
            return None;
        }
        self.compiled
            .get_or_init(|| Regex::new(self.pattern).ok())
            .as_ref()
    }
}

fn patterns() -> &'static [Pattern] {
    static ALL: OnceLock<Vec<Pattern>> = OnceLock::new();
    ALL.get_or_init(|| {
        PATTERNS
            .iter()
            .map(|&(p, rows)| Pattern::new(p, rows))
            .collect()
    })
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Stated {
    pub values: Vec<Scalar>,
    pub bound: Option<Bound>,
}

/// What `text` states about the offending value and the valid range.
pub fn stated(text: &str) -> Stated {
    let mut out = Stated::default();
    if !(text.contains("ound")
        || text.contains("range")
        || text.contains("index")
        || text.contains("idx"))
    {
        return out;
    }
    for p in patterns() {
        let Some(c) = p.for_text(text).and_then(|re| re.captures(text)) else {
            continue;
        };
        let rows = &p.rows;
        let num = |n: &str| c.name(n).and_then(|m| m.as_str().parse::<i64>().ok());
        if let Some(v) = num("value") {
            if !out.values.contains(&Scalar::Int(v)) {
                out.values.push(Scalar::Int(v));
            }
        }
        if let Some(h) = num("high") {
            let high = if *rows { h + 1 } else { h };
            out.bound = Some(Bound::index(num("low").unwrap_or(0), high));
        }
        if !out.values.is_empty() || out.bound.is_some() {
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pattern is compiled only for a text that holds one of its prefix
    /// literals, and every text it matches holds one.
    #[test]
    fn a_pattern_compiles_only_for_a_text_it_may_match() {
        let texts = [
            "IndexError: Target 10 is out of bounds.",
            "index 5 is out of bounds for dimension 0 with size 5",
            "RuntimeError: index out of bounds: 0 <= tmp3 < 50257",
            "Index 1 of input takes value -1 which is not in the valid range [0, 4)",
            "tried to access index 7 on a tensor of 3 elements",
            "Tried to access index 10 out of table with 9 rows.",
            "index 9 out of range for tensor of size [4",
            "found idx to be -3",
            "id=12 axis_dim=10",
            "Found an invalid max index: 77",
            "index value 151645 exceeds bounds 129280!",
            "INDEX 12 exceeds the upper bound of 10",
            "Value 3 Exceeds Bound 2",
        ];
        for &(pattern, rows) in PATTERNS {
            let p = Pattern::new(pattern, rows);
            assert!(
                p.starts
                    .as_ref()
                    .is_some_and(|s| s.iter().all(|l| !l.is_empty())),
                "{pattern}: no prefix literals to look for"
            );
            assert!(p.for_text("step 8: loss 2.1").is_none());
            assert!(p.compiled.get().is_none(), "{pattern} compiled for nothing");
            let re = Regex::new(pattern).expect("compiles");
            let matched: Vec<&str> = texts.into_iter().filter(|t| re.is_match(t)).collect();
            assert!(!matched.is_empty(), "no text for {pattern}");
            for t in matched {
                assert!(p.for_text(t).is_some(), "{pattern} missed {t:?}");
            }
        }
    }

    #[test]
    fn messages_state_values() {
        assert_eq!(
            stated("IndexError: Target 10 is out of bounds.").values,
            vec![Scalar::Int(10)]
        );
        assert_eq!(
            stated("Target -1 is out of bound").values,
            vec![Scalar::Int(-1)]
        );
        let s = stated("IndexError: index 5 is out of bounds for dimension 0 with size 5");
        assert_eq!(
            (s.values, s.bound),
            (vec![Scalar::Int(5)], Some(Bound::index(0, 5)))
        );
        assert_eq!(
            stated("RuntimeError: index out of bounds: 0 <= tmp3 < 50257").bound,
            Some(Bound::index(0, 50257))
        );
        assert_eq!(
            stated("what():  kernel, .../main.cpp:38, index out of bounds: 0 <= tmp8 < 92544L")
                .bound,
            Some(Bound::index(0, 92544))
        );
        assert_eq!(
            stated("index out of bounds: 0 <= tmp4 < 1 + ks0").bound,
            None
        );
        let s = stated("index out of range: Tried to access index 10 out of table with 9 rows.");
        assert_eq!(s.bound, Some(Bound::index(0, 10)));
        let s =
            stated("Index out of range in dimension 1: index value 151645 exceeds bounds 129280!");
        assert_eq!(
            (s.values, s.bound),
            (vec![Scalar::Int(151645)], Some(Bound::index(0, 129280)))
        );
        let s = stated("idx 12 exceeds the upper bound of 10");
        assert_eq!(
            (s.values, s.bound),
            (vec![Scalar::Int(12)], Some(Bound::index(0, 10)))
        );
    }
}

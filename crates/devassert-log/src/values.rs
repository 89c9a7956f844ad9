//! Offending values and valid ranges that host-side messages and assertion
//! texts state outright: `Target 10 is out of bounds.`, `index 5 is out of
//! bounds for dimension 0 with size 5`, Inductor's `0 <= tmp3 < 50257`, …

use devassert_core::{Bound, Scalar};
use regex::Regex;
use std::sync::OnceLock;

/// `(pattern, bound_is_rows_minus_one)`: named groups `value`, `low`, `high`.
const PATTERNS: &[(&str, bool)] = &[
    (r"Target (?P<value>-?\d+) is out of bounds", false),
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

fn compiled() -> &'static [(Regex, bool)] {
    static RE: OnceLock<Vec<(Regex, bool)>> = OnceLock::new();
    RE.get_or_init(|| {
        PATTERNS
            .iter()
            .filter_map(|(p, rows)| Regex::new(p).ok().map(|r| (r, *rows)))
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
    for (re, rows) in compiled() {
        let Some(c) = re.captures(text) else { continue };
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

    #[test]
    fn messages_state_values() {
        assert_eq!(
            stated("IndexError: Target 10 is out of bounds.").values,
            vec![Scalar::Int(10)]
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

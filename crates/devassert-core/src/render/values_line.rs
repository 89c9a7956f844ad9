//! A finding's values line: the offending values (or what they are, such as
//! row lengths), the valid range, and how many were out of range in all.

use crate::finding::Finding;
use std::fmt::Write;

/// The line, or None when the finding has neither values nor a bound.
pub(super) fn values_line(f: &Finding) -> Option<String> {
    if f.values.is_empty() && f.bound.is_none() {
        return None;
    }
    let mut line = String::new();
    // What the values are when they are no index values (row lengths).
    let what = f.evidence.get("values_are").and_then(|v| v.as_str());
    let what = what.unwrap_or("values");
    if !f.values.is_empty() {
        let shown: Vec<String> = f
            .values
            .iter()
            .take(12)
            .enumerate()
            .map(|(i, v)| match f.value_counts.get(i) {
                Some(c) if *c > 1 => format!("{v} (×{c})"),
                _ => v.to_string(),
            })
            .collect();
        // `values` is a sample: name the true extremes when they are known.
        let more = match (&f.value_max, f.values.len() > 12) {
            (Some(max), true) => format!(", … up to {max}"),
            (None, true) => format!(", … {} more", f.values.len() - 12),
            (Some(max), false) if f.values.last() != Some(max) => format!(", … up to {max}"),
            _ => String::new(),
        };
        let _ = write!(line, "offending {what}: {}{more}", shown.join(", "));
    }
    if let Some(b) = &f.bound {
        if !line.is_empty() {
            line.push_str("; ");
        }
        if what == "values" {
            let _ = write!(line, "valid range {b}");
        } else {
            let _ = write!(line, "valid {what} {b}");
        }
    }
    if let Some(c) = f.count {
        let _ = write!(line, "; {c} out of range in all");
        // Only when the values shown do not already say it.
        if let (Some(lo), Some(hi)) = (&f.value_min, &f.value_max) {
            let shown_all =
                f.values.len() <= 12 && f.values.first() == Some(lo) && f.values.last() == Some(hi);
            if lo != hi && !shown_all {
                let _ = write!(line, " (min {lo}, max {hi})");
            }
        }
    }
    Some(line)
}

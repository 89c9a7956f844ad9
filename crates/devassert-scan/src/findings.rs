//! Findings from the scanned parts: one range finding per rule (token ids →
//! DA101, labels → DA201, image masks → DA202), one for u16 files that cannot
//! hold the vocabulary, and one each for rows longer than `--max-len` or
//! shorter than `--min-len`.

use crate::causes;
use crate::dtype::Dtype;
use crate::options::{Bounds, ScanOptions, Target};
use devassert_core::{ids, Bound, Catalog, Cause, DataLocation, Finding, RuleId, Scalar, Severity};
use serde_json::json;
use std::collections::{BTreeSet, HashMap};

/// Distinct values a finding lists.
pub const MAX_LISTED_VALUES: usize = 32;

/// Which range check a part feeds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Check {
    Tokens,
    Labels,
    Mask,
}

impl Check {
    pub fn rule(self) -> RuleId {
        match self {
            Check::Tokens => ids::EMBEDDING_INDEX_OUT_OF_RANGE,
            Check::Labels => ids::CROSS_ENTROPY_TARGET_OUT_OF_RANGE,
            Check::Mask => ids::SPATIAL_CROSS_ENTROPY_TARGET_OUT_OF_RANGE,
        }
    }

    /// The range check that reports under `rule`, if one does.
    pub fn of_rule(rule: RuleId) -> Option<Check> {
        [Check::Tokens, Check::Labels, Check::Mask]
            .into_iter()
            .find(|c| c.rule() == rule)
    }
}

/// What one part contributed.
pub struct PartFindings {
    pub file: String,
    pub check: Check,
    pub bad: u64,
    pub bad_values: HashMap<i64, u64>,
    pub places: Vec<DataLocation>,
    pub wrapped_u16: bool,
    /// The smallest / largest value scanned (ignored ones left out).
    pub min: Option<i64>,
    pub max: Option<i64>,
    /// Read as the default u16, the bytes look like this wider type.
    pub wider: Option<Dtype>,
    pub too_long: u64,
    pub too_long_places: Vec<DataLocation>,
    pub too_short: u64,
    pub too_short_places: Vec<DataLocation>,
}

/// A finding for `rule` from the catalog.
pub fn base(rule: RuleId) -> Finding {
    Catalog::builtin_finding(rule)
}

/// The listed values: all when few, else the most frequent; ascending.
pub fn listed(values: &HashMap<i64, u64>) -> (Vec<Scalar>, Vec<u64>) {
    let mut v: Vec<(i64, u64)> = values.iter().map(|(a, b)| (*a, *b)).collect();
    if v.len() > MAX_LISTED_VALUES {
        v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        v.truncate(MAX_LISTED_VALUES);
    }
    v.sort();
    (
        v.iter().map(|(a, _)| Scalar::Int(*a)).collect(),
        v.iter().map(|(_, c)| *c).collect(),
    )
}

/// Fill a range finding's causes, fixes and hint from its values.
pub fn explain_range(
    f: &mut Finding,
    values: &HashMap<i64, u64>,
    bounds: Bounds,
    target: Target,
    check: Check,
    column: causes::Column,
) {
    let e = causes::explain(values, bounds, target, check == Check::Mask, column);
    f.causes = e.causes;
    if let Some((lo, hi)) = column {
        f.evidence.insert("column_min".into(), json!(lo));
        f.evidence.insert("column_max".into(), json!(hi));
    }
    if !e.ruled_out.is_empty() {
        f.evidence.insert("ruled_out".into(), json!(e.ruled_out));
    }
    // The causes carry the data's own fixes; the rule's follow them, but
    // not one telling the user to run this scan.
    f.fixes.retain(|x| !x.starts_with("devassert scan"));
    if !e.hints.is_empty() {
        f.evidence.insert("hints".into(), json!(e.hints));
    }
}

fn target_name(t: Target) -> &'static str {
    match t {
        Target::Tokens => "tokens",
        Target::Labels => "labels",
    }
}

/// The whole column's range over `parts`, bad values or not: whether 0
/// occurs decides between causes (a part with no value counted adds none).
fn column(parts: &[&PartFindings]) -> causes::Column {
    let lo = parts.iter().filter_map(|p| p.min).min()?;
    let hi = parts.iter().filter_map(|p| p.max).max()?;
    Some((lo, hi))
}

pub fn build(parts: &[PartFindings], opts: &ScanOptions) -> Vec<Finding> {
    let mut out = Vec::new();
    let b = opts.bounds;
    for check in [Check::Tokens, Check::Labels, Check::Mask] {
        let mine: Vec<&PartFindings> = parts
            .iter()
            .filter(|p| p.check == check && p.bad > 0)
            .collect();
        if mine.is_empty() {
            continue;
        }
        let mut values: HashMap<i64, u64> = HashMap::new();
        let mut places = Vec::new();
        let mut files = BTreeSet::new();
        for p in &mine {
            for (v, c) in &p.bad_values {
                *values.entry(*v).or_insert(0) += c;
            }
            for l in &p.places {
                if places.len() < opts.limit {
                    places.push(l.clone());
                }
            }
            files.insert(p.file.clone());
        }
        let mut f = base(check.rule());
        (f.values, f.value_counts) = listed(&values);
        f.count = Some(mine.iter().map(|p| p.bad).sum());
        f.bound = Some(Bound::index(b.low, b.high));
        f.locations = places;
        f.evidence.insert("check".into(), json!("range"));
        f.evidence
            .insert("target".into(), json!(target_name(opts.target)));
        f.evidence.insert("files".into(), json!(files.len()));
        f.evidence.insert("min".into(), json!(values.keys().min()));
        f.evidence.insert("max".into(), json!(values.keys().max()));
        if !opts.ignore.is_empty() {
            f.evidence.insert("ignore".into(), json!(opts.ignore));
        }
        let same: Vec<&PartFindings> = parts.iter().filter(|p| p.check == check).collect();
        explain_range(&mut f, &values, b, opts.target, check, column(&same));
        out.push(f);
    }

    let wrapped: BTreeSet<&str> = parts
        .iter()
        .filter(|p| p.wrapped_u16)
        .map(|p| p.file.as_str())
        .collect();
    if !wrapped.is_empty() {
        let mut f = base(ids::EMBEDDING_INDEX_OUT_OF_RANGE);
        f.bound = Some(Bound::index(b.low, b.high));
        f.count = Some(wrapped.len() as u64);
        f.locations = file_places(&wrapped, opts.limit);
        f.evidence.insert("check".into(), json!("dtype_overflow"));
        f.evidence.insert("files".into(), json!(wrapped.len()));
        f.evidence.insert(
            "hints".into(),
            json!([format!("u16 token files cannot hold ids >= 65536, and the vocabulary has {}: ids were silently wrapped when written", b.high)]),
        );
        f.causes = vec![Cause::new(
            "index_overflow",
            0.9,
            format!(
                "{} file(s) store tokens as uint16 but the vocabulary has {} ids: every id >= 65536 was wrapped modulo 65536 when written, so the range check passes on corrupted data",
                wrapped.len(),
                b.high
            ),
        )];
        f.fixes =
            vec!["re-tokenize and write uint32 tokens (np.uint32; llm.c header version 2)".into()];
        out.push(f);
    }

    out.extend(wider_findings(parts, opts));

    let long: u64 = parts.iter().map(|p| p.too_long).sum();
    if long > 0 {
        let mut f = base(ids::EMBEDDING_INDEX_OUT_OF_RANGE);
        let max = opts.max_len.unwrap_or(0);
        f.count = Some(long);
        f.bound = Some(Bound::index(
            opts.min_len.unwrap_or(0) as i64,
            max as i64 + 1,
        ));
        f.locations = parts
            .iter()
            .flat_map(|p| p.too_long_places.iter().cloned())
            .take(opts.limit)
            .collect();
        let lens: HashMap<i64, u64> = f
            .locations
            .iter()
            .filter_map(|l| match l.value {
                Some(Scalar::Int(v)) => Some(v),
                _ => None,
            })
            .fold(HashMap::new(), |mut m, v| {
                *m.entry(v).or_insert(0) += 1;
                m
            });
        (f.values, f.value_counts) = listed(&lens);
        f.value_counts.clear();
        f.summary = format!(
            "rows longer than {max} tokens: their position ids reach past the position table"
        );
        f.evidence.insert("check".into(), json!("max_len"));
        // The values are lengths, not ids: renderers name them so.
        f.evidence.insert("values_are".into(), json!("row lengths"));
        f.evidence.insert(
            "hints".into(),
            json!([format!(
                "{long} rows longer than {max}: positions past max_position_embeddings"
            )]),
        );
        f.causes = vec![Cause::new(
            "seq_len_gt_max_positions",
            0.9,
            format!("{long} rows are longer than {max}: their position ids reach past the position embedding table"),
        )];
        f.fixes = vec![format!(
            "truncate when tokenizing: tokenizer(..., truncation=True, max_length={max})"
        )];
        out.push(f);
    }

    let short: u64 = parts.iter().map(|p| p.too_short).sum();
    if short > 0 {
        let mut f = base(ids::EMBEDDING_INDEX_OUT_OF_RANGE);
        let min = opts.min_len.unwrap_or(0);
        f.severity = Severity::Warning;
        f.summary = format!("rows shorter than --min-len {min}");
        f.count = Some(short);
        f.locations = parts
            .iter()
            .flat_map(|p| p.too_short_places.iter().cloned())
            .take(opts.limit)
            .collect();
        f.evidence.insert("check".into(), json!("min_len"));
        f.evidence.insert(
            "hints".into(),
            json!([format!("{short} rows shorter than {min}")]),
        );
        f.causes = vec![Cause::new(
            "unknown",
            0.3,
            "short or empty rows are not an out-of-range index on their own, but indexing the last token of an empty row (index -1 of size 0) is",
        )];
        f.fixes = vec!["drop or pad rows shorter than the minimum before batching".into()];
        out.push(f);
    }
    out
}

/// One warning per wider type that u16 reads looked like: the scan checked
/// the wrong numbers there (twice as many, the high halves as tokens).
fn wider_findings(parts: &[PartFindings], opts: &ScanOptions) -> Vec<Finding> {
    let mut by_type: Vec<(Dtype, Vec<&str>)> = Vec::new();
    for p in parts {
        let Some(d) = p.wider else { continue };
        match by_type.iter_mut().find(|(t, _)| *t == d) {
            Some((_, files)) => files.push(&p.file),
            None => by_type.push((d, vec![&p.file])),
        }
    }
    by_type
        .into_iter()
        .map(|(d, files)| {
            let mut f = base(ids::EMBEDDING_INDEX_OUT_OF_RANGE);
            f.severity = Severity::Warning;
            f.summary = format!(
                "read as u16 (no --dtype given), the data looks like {} values: the scan checked the wrong numbers",
                d.numpy_name()
            );
            f.count = Some(files.len() as u64);
            f.locations = file_places(&files, opts.limit);
            f.evidence.insert("check".into(), json!("dtype_mismatch"));
            f.evidence.insert("files".into(), json!(files.len()));
            f.evidence.insert("dtype".into(), json!(d.name()));
            f.evidence.insert(
                "hints".into(),
                json!([format!(
                    "every {} u16 value is below 256 (mostly 0) or 0xffff, as in the high halves of little-endian {}: a Megatron .bin whose .idx is missing, or tokens saved with np.{}",
                    if d == Dtype::I64 { "2nd to 4th" } else { "other" },
                    d.numpy_name(),
                    d.numpy_name()
                )]),
            );
            f.fixes = vec![format!(
                "rerun with --dtype {} (or put the Megatron .idx beside the .bin: it records the dtype)",
                d.numpy_name()
            )];
            f
        })
        .collect()
}

/// Places that name a whole file (no index in it): the first `limit` of `files`.
fn file_places<'a>(
    files: impl IntoIterator<Item = &'a &'a str>,
    limit: usize,
) -> Vec<DataLocation> {
    files
        .into_iter()
        .take(limit)
        .map(|file| DataLocation {
            file: Some(file.to_string()),
            ..DataLocation::default()
        })
        .collect()
}

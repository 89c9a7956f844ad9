//! `catalog/causes.toml` as written and as compiled: every expression
//! parsed, every fact name and cause id checked against the vocabularies.

use super::expr::{parse, parse_template, Expr, Part};
use crate::vocabulary::CAUSE_IDS;
use serde::Deserialize;

/// The facts a cause may read (the file's header says what each is).
pub const FACT_NAMES: &[&str] = &[
    "low",
    "high",
    "count",
    "distinct",
    "top",
    "bottom",
    "n_past",
    "n_neg",
    "n_m1",
    "n_m100",
    "n_255",
    "n_wrapped",
    "wrapped",
    "col_min",
    "col_max",
    "ignore",
    "positions",
    "seq_len",
    "offset",
    "trailing",
    "bad_rows",
    "base_vocab",
    "tok_len",
    "tok_added",
    "tok_bare",
    "pad_id",
    "hint_pos",
    "hint_type",
    "hint_tok",
    "hf",
    "adds_tokens",
    "sampled",
];

/// What the values index.
pub const KINDS: &[&str] = &["ids", "labels", "index"];

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct File {
    pub cause: Vec<CauseRow>,
    /// What explain reads from a log's lines and frames (see [`super::log`]).
    #[serde(default)]
    pub log_fact: Vec<LogFactRow>,
}

/// One `[[log_fact]]` row as written (compiled by [`super::log`]).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LogFactRow {
    // The regex, or a shared one by name (`catalog/patterns.toml`).
    #[serde(default, deserialize_with = "crate::catalog::patterns::opt")]
    pub log: Option<String>,
    #[serde(default, deserialize_with = "crate::catalog::patterns::opt")]
    pub frame: Option<String>,
    /// The fact a match sets to `value` (1 when not given).
    #[serde(default)]
    pub fact: Option<String>,
    #[serde(default)]
    pub value: Option<f64>,
    /// The line states one offending value as `negative`, not its number
    /// (see [`super::log::Side`]).
    #[serde(default)]
    pub states: Option<String>,
    /// Only for values of this kind (`ids` / `labels`).
    #[serde(default)]
    pub kind: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CauseRow {
    pub id: String,
    pub kind: String,
    pub requires: String,
    /// What a value must be for the cause to explain it (a necessary
    /// condition, unlike `requires`, which may ask for more): when false,
    /// no value fits the cause. None: any value might.
    #[serde(default)]
    pub fits: Option<String>,
    pub prior: f64,
    pub why: String,
    #[serde(default)]
    pub support: Vec<SupportRow>,
    #[serde(default)]
    pub refute: Vec<RefuteRow>,
    #[serde(default)]
    pub fix: Vec<FixRow>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SupportRow {
    pub when: String,
    pub weight: String,
    pub fact: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RefuteRow {
    pub when: String,
    pub fact: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FixRow {
    pub text: String,
    #[serde(default)]
    pub when: Option<String>,
    #[serde(default)]
    pub check: Option<String>,
}

pub struct Support {
    pub when: Expr,
    pub weight: Expr,
    pub fact: Vec<Part>,
}

pub struct Refute {
    pub when: Expr,
    pub fact: Vec<Part>,
}

pub struct Fix {
    pub text: Vec<Part>,
    pub when: Option<Expr>,
    pub check: Option<Expr>,
}

pub struct CauseDef {
    pub id: String,
    pub kind: String,
    pub requires: Expr,
    pub fits: Option<Expr>,
    pub prior: f64,
    pub why: String,
    pub supports: Vec<Support>,
    pub refutes: Vec<Refute>,
    pub fixes: Vec<Fix>,
}

fn expr(src: &str, at: &str) -> Result<Expr, String> {
    let e = parse(src).map_err(|e| format!("{at}: `{src}`: {e}"))?;
    let mut names = Vec::new();
    e.facts(&mut names);
    match names.iter().find(|n| !FACT_NAMES.contains(&n.as_str())) {
        Some(n) => Err(format!("{at}: `{src}` reads `{n}`, which is no fact")),
        None => Ok(e),
    }
}

fn template(src: &str, at: &str) -> Result<Vec<Part>, String> {
    let parts = parse_template(src).map_err(|e| format!("{at}: {e}"))?;
    for p in &parts {
        if let Part::Value(e) = p {
            let mut names = Vec::new();
            e.facts(&mut names);
            if let Some(n) = names.iter().find(|n| !FACT_NAMES.contains(&n.as_str())) {
                return Err(format!("{at}: {src:?} reads `{n}`, which is no fact"));
            }
        }
    }
    Ok(parts)
}

/// Parse and check the file.
pub fn compile(text: &str) -> Result<Vec<CauseDef>, String> {
    let file: File = toml::from_str(text).map_err(|e| format!("causes.toml: {e}"))?;
    compile_file(&file)
}

/// Check the file as parsed (from its TOML or its JSON form).
pub fn compile_file(file: &File) -> Result<Vec<CauseDef>, String> {
    let mut out = Vec::new();
    for (i, c) in file.cause.iter().enumerate() {
        let at = format!("causes.toml: cause #{} ({})", i + 1, c.id);
        if !CAUSE_IDS.contains(&c.id.as_str()) {
            return Err(format!("{at}: no cause id of the contract"));
        }
        if !KINDS.contains(&c.kind.as_str()) {
            return Err(format!("{at}: kind must be one of {KINDS:?}"));
        }
        let mut supports = Vec::new();
        for s in &c.support {
            supports.push(Support {
                when: expr(&s.when, &at)?,
                weight: expr(&s.weight, &at)?,
                fact: template(&s.fact, &at)?,
            });
        }
        let mut refutes = Vec::new();
        for r in &c.refute {
            refutes.push(Refute {
                when: expr(&r.when, &at)?,
                fact: template(&r.fact, &at)?,
            });
        }
        let mut fixes = Vec::new();
        for f in &c.fix {
            fixes.push(Fix {
                text: template(&f.text, &at)?,
                when: f.when.as_deref().map(|w| expr(w, &at)).transpose()?,
                check: f.check.as_deref().map(|w| expr(w, &at)).transpose()?,
            });
        }
        out.push(CauseDef {
            id: c.id.clone(),
            kind: c.kind.clone(),
            requires: expr(&c.requires, &at)?,
            fits: c.fits.as_deref().map(|w| expr(w, &at)).transpose()?,
            prior: c.prior,
            why: c.why.clone(),
            supports,
            refutes,
            fixes,
        });
    }
    Ok(out)
}

//! The catalog's files as written: one rule per `DA###-name.toml`, and the
//! shared `op-guesses.toml` (see `catalog/README.md`); a cause evidence's
//! pattern may name one of `patterns.toml`'s instead. Deserialising checks
//! the keys; the values are checked when they are loaded (`load`).

use crate::facts::Kind;
use crate::vocabulary::{OpFamily, Severity};
use serde::Deserialize;

#[derive(Debug, thiserror::Error)]
pub enum CatalogError {
    #[error("catalog file {file}: {source}")]
    Toml {
        file: String,
        source: toml::de::Error,
    },
    /// The JSON form of an embedded file (`build.rs`) that does not read.
    #[error("catalog file {file}: {source}")]
    Json {
        file: String,
        source: serde_json::Error,
    },
    #[error("catalog file {file}: {message}")]
    Invalid { file: String, message: String },
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    pub id: String,
    pub name: String,
    pub op_family: OpFamily,
    pub title: String,
    pub summary: String,
    #[serde(default)]
    pub severity: Severity,
    #[serde(default)]
    pub internal: bool,
    #[serde(default)]
    pub ops: Vec<String>,
    /// The ATen ops (as Inductor's generated code names them, `aten.embedding`
    /// without the prefix) whose bad index this rule is about: explain names
    /// the rule of the op an Inductor `index out of bounds` assert came from.
    #[serde(default)]
    pub aten: Vec<String>,
    #[serde(default)]
    pub bad_argument: String,
    /// What the bad argument's values are: the kind of values whose
    /// causes (`catalog/causes.toml`) the facts of a finding decide.
    #[serde(default)]
    pub values: Option<Kind>,
    #[serde(default)]
    pub bound: String,
    #[serde(default)]
    pub guard: String,
    #[serde(default)]
    pub fixes: Vec<String>,
    #[serde(default, rename = "assert")]
    pub asserts: Vec<AssertPattern>,
    #[serde(default)]
    pub cpu_messages: Vec<String>,
    #[serde(default, rename = "cause")]
    pub causes: Vec<CauseSpec>,
    pub doc: Doc,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AssertPattern {
    pub file: Option<String>,
    pub kernel: Option<String>,
    pub assertion: Option<String>,
    #[serde(default)]
    pub releases: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CauseSpec {
    pub id: String,
    pub prior: f64,
    pub why: String,
    #[serde(default)]
    pub fixes: Vec<String>,
    #[serde(default)]
    pub evidence: Vec<EvidenceSpec>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EvidenceSpec {
    // Each the regex, or a shared one by name (`patterns.toml`).
    #[serde(default, deserialize_with = "super::patterns::opt")]
    pub frame: Option<String>,
    #[serde(default, deserialize_with = "super::patterns::opt")]
    pub log: Option<String>,
    #[serde(default, deserialize_with = "super::patterns::opt")]
    pub assertion: Option<String>,
    /// Fires only when the pattern's `value` is the size of a published base
    /// vocabulary (`catalog/base-vocabs.toml`): an id equal to it is the first
    /// one past that vocabulary, a token added after the embedding was sized.
    #[serde(default)]
    pub value_is_base_vocab: bool,
    pub weight: f64,
    pub why: String,
}

#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Doc {
    pub what: String,
    pub why: String,
    pub confirm: String,
    pub fix: String,
    #[serde(default)]
    pub example: String,
}

/// `catalog/op-guesses.toml`: traceback code → the rule whose kernel would
/// have asserted, for a failure the log shows without a kernel line.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct OpGuessFile {
    /// A memory checker's line naming the faulting kernel; its `kernel`
    /// group is tried against the guesses before the traceback.
    #[serde(default)]
    pub(super) device_frame: Option<String>,
    #[serde(default, rename = "guess")]
    pub(super) guesses: Vec<OpGuessSpec>,
    /// A traceback cut before its error line whose header still names the
    /// exception's class (IPython's): the rule that class most often is.
    #[serde(default, rename = "by_exception")]
    pub(super) by_exception: Vec<ExceptionGuessSpec>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ExceptionGuessSpec {
    pub(super) class: String,
    pub(super) rule: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct OpGuessSpec {
    pub(super) frame: String,
    pub(super) rule: String,
}

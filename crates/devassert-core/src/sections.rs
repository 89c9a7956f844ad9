//! The command-specific sections of a [`Report`](crate::Report): what
//! `explain` read, what `scan` scanned, what `check` found in a model
//! directory, which child `run` ran. Typed, so a section is written by one
//! crate and read by the renderers without decoding JSON twice.
//!
//! Fields are declared in the order the JSON contract prints them
//! (alphabetical, as the untyped map did), so the output stays the same.

use serde::{Deserialize, Serialize};
use std::fmt;

/// The command that produced a report (`"command"` in the JSON).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Command {
    Explain,
    Run,
    Scan,
    Check,
}

impl Command {
    pub fn as_str(self) -> &'static str {
        match self {
            Command::Explain => "explain",
            Command::Run => "run",
            Command::Scan => "scan",
            Command::Check => "check",
        }
    }
}

impl PartialEq<&str> for Command {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl fmt::Display for Command {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One input `explain` read (`inputs[]`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InputSummary {
    pub bytes: u64,
    pub lines: u64,
    pub name: String,
}

/// An input, or part of one, that `explain` left out (`skipped[]`): the
/// path and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkippedInput {
    pub path: String,
    pub why: String,
}

/// What a scan read: every array, every file it could not read, and the
/// scan's settings and totals (`files`, `errors`, `scan` in the JSON).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScanSection {
    pub errors: Vec<FileError>,
    pub files: Vec<FileSummary>,
    pub scan: ScanRun,
}

/// One integer array scanned: a file, or a tensor / member / column of one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileSummary {
    /// Rows outside `--min-len`/`--max-len`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub bad_lengths: u64,
    pub dtype: String,
    pub file: String,
    pub format: String,
    /// Over the values not ignored.
    pub max: Option<i64>,
    /// Longest row, for list formats.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_len: Option<u64>,
    pub min: Option<i64>,
    pub out_of_range: u64,
    /// Tensor, member, column or field name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub part: Option<String>,
    /// Rows, for tabular and list formats.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rows: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shape: Option<Vec<u64>>,
    /// Values scanned (ignored ones included).
    pub values: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// A file that could not be read, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileError {
    pub error: String,
    pub file: String,
}

/// A scan's settings and totals (`scan` in the JSON).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScanRun {
    pub bound: ScanBound,
    pub bytes: u64,
    /// Files scanned (after expanding folders and globs).
    pub files: u64,
    pub ignore: Vec<i64>,
    /// How many shard reports `--merge` joined.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merged: Option<u64>,
    pub seconds: f64,
    /// `K/N` of `--shard`.
    pub shard: Option<String>,
    /// `tokens` or `labels`.
    pub target: String,
}

/// The valid range `[low, high)` a scan checked against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScanBound {
    pub high: i64,
    pub low: i64,
}

/// `check --data`: the scans of the data against the model's bounds.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct DataScans {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels: Option<ScanSection>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<ScanSection>,
}

impl DataScans {
    /// `(what, scan)` for each scan made, in the JSON's order.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, &ScanSection)> {
        [("labels", &self.labels), ("tokens", &self.tokens)]
            .into_iter()
            .filter_map(|(what, s)| s.as_ref().map(|s| (what, s)))
    }
}

/// What `check` read from a model directory (`model` in the JSON).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ModelSummary {
    pub classifier: Option<TensorRole>,
    pub config_vocab_size: Option<i64>,
    pub dir: String,
    pub embedding_rows: Option<SourcedValue>,
    pub input_embeddings: Option<TensorRole>,
    pub model_type: Option<String>,
    pub num_classes: Option<SourcedValue>,
    pub output_head: Option<TensorRole>,
    pub position_embeddings: Option<TensorRole>,
    pub token_type_embeddings: Option<TensorRole>,
    pub tokenizer: Option<TokenizerSummary>,
    pub type_vocab_size: Option<SourcedValue>,
    pub unread_weights: Vec<String>,
    pub usable_positions: Option<SourcedValue>,
    pub weights: Option<WeightsSummary>,
    /// For the terminal only (not in the JSON contract): whether there was a
    /// config.json, its architectures and the name of its vocabulary field.
    #[serde(skip)]
    pub has_config: bool,
    #[serde(skip)]
    pub architectures: Vec<String>,
    #[serde(skip)]
    pub config_vocab_field: Option<String>,
}

/// A tensor found to play a role (input embeddings, output head, …).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TensorRole {
    pub file: String,
    /// `name` (an architecture's tensor name) or `shape` (its shape matched).
    pub found_by: String,
    pub shape: Vec<u64>,
    pub tensor: String,
}

/// A number with where it came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourcedValue {
    pub from: String,
    pub value: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenizerSummary {
    /// Tokens past the base vocabulary: `size - base_size`.
    pub added_tokens: u64,
    pub base_size: u64,
    pub class: Option<String>,
    pub files: Vec<String>,
    pub max_id: Option<u64>,
    pub max_type_id: Option<u64>,
    pub model_max_length: Option<u64>,
    pub size: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WeightsSummary {
    pub files: Vec<String>,
    pub tensors: u64,
}

/// What `run` ran (`child`, `guard`, `log` in the JSON).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunSection {
    pub child: Child,
    /// The guard level: `off`, `on` or `strict`.
    pub guard: String,
    /// Where the whole output was kept.
    pub log: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Child {
    pub argv: Vec<String>,
    pub exit_code: i32,
    /// The signal that ended it, when one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
}

//! The per-file sections of a scan report (`files`, `errors` in the JSON).

use serde::{Deserialize, Serialize};

/// One integer array scanned: a file, or a tensor / member / column of one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileSummary {
    pub file: String,
    pub format: String,
    /// Tensor, member, column or field name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub part: Option<String>,
    pub dtype: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shape: Option<Vec<u64>>,
    /// Values scanned (ignored ones included).
    pub values: u64,
    /// Over the values not ignored.
    pub min: Option<i64>,
    pub max: Option<i64>,
    pub out_of_range: u64,
    /// Rows, for tabular and list formats.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rows: Option<u64>,
    /// Longest row, for list formats.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_len: Option<u64>,
    /// Rows outside `--min-len`/`--max-len`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub bad_lengths: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// A file that could not be read, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileError {
    pub file: String,
    pub error: String,
}

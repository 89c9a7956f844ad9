//! What a scan checks: the valid range, sentinels, and how to read the inputs.

use crate::dtype::Dtype;
use crate::format::InputFormat;
use crate::shard::Shard;

/// The valid range `[low, high)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bounds {
    pub low: i64,
    /// Exclusive.
    pub high: i64,
}

impl Bounds {
    pub fn new(low: i64, high: i64) -> Self {
        Bounds { low, high }
    }
    pub fn contains(&self, v: i64) -> bool {
        v >= self.low && v < self.high
    }
}

impl Default for Bounds {
    fn default() -> Self {
        Bounds {
            low: 0,
            high: i64::MAX,
        }
    }
}

/// What the values are: token ids (an embedding lookup) or class labels (a loss target).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Target {
    #[default]
    Tokens,
    Labels,
}

/// Everything a scan needs besides the paths.
#[derive(Debug, Clone)]
pub struct ScanOptions {
    pub bounds: Bounds,
    /// Legal sentinel values that are never out of range (`-100`, `255`).
    pub ignore: Vec<i64>,
    /// Column (Arrow, Parquet, CSV by name or index) or field path (JSONL, dotted).
    pub column: Option<String>,
    /// Tensor name (safetensors) or member name (npz).
    pub tensor: Option<String>,
    /// Element type of raw token files; u16 when `None` (then a file that
    /// looks like 32- or 64-bit integers read as u16 is reported).
    pub dtype: Option<Dtype>,
    /// Format for files that neither content nor extension identify.
    pub input_format: Option<InputFormat>,
    /// Sequence length bounds for list columns and JSONL arrays.
    pub min_len: Option<u64>,
    pub max_len: Option<u64>,
    /// How many locations each finding keeps.
    pub limit: usize,
    pub target: Target,
    /// Worker threads; all cores when `None`.
    pub threads: Option<usize>,
    /// Scan only this shard of the sorted file list.
    pub shard: Option<Shard>,
    /// Bytes of decoded values one compressed file (PNG, npz member) may
    /// take in memory; a header or stream that needs more is refused before
    /// anything is allocated (a decompression bomb, or a file to scan with a
    /// larger budget). Each scan thread holds at most one file's worth.
    pub decode_budget: u64,
}

/// The default [`ScanOptions::decode_budget`]: 256 MiB.
pub const DECODE_BUDGET: u64 = 256 << 20;

impl Default for ScanOptions {
    fn default() -> Self {
        ScanOptions {
            bounds: Bounds::default(),
            ignore: Vec::new(),
            column: None,
            tensor: None,
            dtype: None,
            input_format: None,
            min_len: None,
            max_len: None,
            limit: 20,
            target: Target::Tokens,
            threads: None,
            shard: None,
            decode_budget: DECODE_BUDGET,
        }
    }
}

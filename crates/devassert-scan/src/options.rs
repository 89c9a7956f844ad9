//! What a scan checks: the valid range, sentinels, and how to read the inputs.

pub use crate::formats::InputFormat;

use std::fmt;
use std::str::FromStr;

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

/// Element types the raw reader accepts (`--dtype`), and the ones other formats report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dtype {
    U8,
    I8,
    U16,
    I16,
    U32,
    I32,
    U64,
    I64,
}

impl Dtype {
    pub fn size(self) -> usize {
        match self {
            Dtype::U8 | Dtype::I8 => 1,
            Dtype::U16 | Dtype::I16 => 2,
            Dtype::U32 | Dtype::I32 => 4,
            Dtype::U64 | Dtype::I64 => 8,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Dtype::U8 => "u8",
            Dtype::I8 => "i8",
            Dtype::U16 => "u16",
            Dtype::I16 => "i16",
            Dtype::U32 => "u32",
            Dtype::I32 => "i32",
            Dtype::U64 => "u64",
            Dtype::I64 => "i64",
        }
    }
    /// The largest value the type holds, saturated to i64.
    pub fn max_value(self) -> i64 {
        match self {
            Dtype::U8 => u8::MAX as i64,
            Dtype::I8 => i8::MAX as i64,
            Dtype::U16 => u16::MAX as i64,
            Dtype::I16 => i16::MAX as i64,
            Dtype::U32 => u32::MAX as i64,
            Dtype::I32 => i32::MAX as i64,
            Dtype::U64 | Dtype::I64 => i64::MAX,
        }
    }
}

impl fmt::Display for Dtype {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Dtype {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Ok(match s.to_ascii_lowercase().as_str() {
            "u8" | "uint8" => Dtype::U8,
            "i8" | "int8" => Dtype::I8,
            "u16" | "uint16" => Dtype::U16,
            "i16" | "int16" => Dtype::I16,
            "u32" | "uint32" => Dtype::U32,
            "i32" | "int32" => Dtype::I32,
            "u64" | "uint64" => Dtype::U64,
            "i64" | "int64" => Dtype::I64,
            other => {
                return Err(format!(
                    "unknown dtype {other:?} (u8, i8, u16, i16, u32, i32, u64, i64)"
                ))
            }
        })
    }
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
    /// Element type of raw token files; u16 when `None`.
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
    pub shard: Option<crate::walk::Shard>,
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

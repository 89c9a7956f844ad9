//! One reader per format behind one trait, and the choice between them:
//! content (magic bytes) first, extension second, `--input-format` last.

mod arrow;
mod csv;
mod ipc;
mod jsonl;
pub(crate) mod npy;
mod npz;
mod parquet;
mod png;
mod raw;
mod safetensors;

use crate::error::{bad, Result, ScanError};
use crate::options::{InputFormat, ScanOptions};
use crate::values::{Bytes, Part};
use std::path::Path;
use std::sync::Arc;

/// An opened input: its path and all its bytes (memory-mapped).
pub struct Input<'a> {
    pub path: &'a Path,
    pub bytes: Arc<Bytes>,
}

impl Input<'_> {
    pub fn data(&self) -> &[u8] {
        self.bytes.as_slice()
    }
}

/// A format's reader: the integer arrays it finds in one input.
pub trait Reader: Sync {
    fn read(&self, input: &Input<'_>, opts: &ScanOptions) -> Result<Vec<Part>>;
}

pub fn reader(format: InputFormat) -> &'static dyn Reader {
    match format {
        InputFormat::Raw => &raw::Raw,
        InputFormat::LlmC => &raw::LlmC,
        InputFormat::Npy => &npy::Npy,
        InputFormat::Npz => &npz::Npz,
        InputFormat::Safetensors => &safetensors::Safetensors,
        InputFormat::ArrowFile | InputFormat::ArrowStream => &arrow::Arrow,
        InputFormat::Parquet => &parquet::Parquet,
        InputFormat::Jsonl => &jsonl::Jsonl,
        InputFormat::Csv => &csv::Csv { delimiter: b',' },
        InputFormat::Tsv => &csv::Csv { delimiter: b'\t' },
        InputFormat::Png => &png::Png,
    }
}

/// The format of a file from its first bytes.
pub fn sniff(head: &[u8], len: u64) -> Option<InputFormat> {
    if head.starts_with(b"\x93NUMPY") {
        return Some(InputFormat::Npy);
    }
    if head.starts_with(b"PK\x03\x04") || head.starts_with(b"PK\x05\x06") {
        return Some(InputFormat::Npz);
    }
    if head.starts_with(b"ARROW1") {
        return Some(InputFormat::ArrowFile);
    }
    if head.starts_with(b"PAR1") {
        return Some(InputFormat::Parquet);
    }
    if head.starts_with(b"\x89PNG\r\n\x1a\n") {
        return Some(InputFormat::Png);
    }
    if head.len() >= 4
        && i32::from_le_bytes([head[0], head[1], head[2], head[3]]) == raw::LLMC_MAGIC
    {
        return Some(InputFormat::LlmC);
    }
    // A stream message starts with the continuation marker and a schema
    // flatbuffer whose length is small.
    if head.len() >= 8 && head[..4] == [0xff; 4] {
        let n = u32::from_le_bytes([head[4], head[5], head[6], head[7]]) as u64;
        if n > 0 && n < len {
            return Some(InputFormat::ArrowStream);
        }
    }
    if head.len() >= 9 {
        let n = u64::from_le_bytes([
            head[0], head[1], head[2], head[3], head[4], head[5], head[6], head[7],
        ]);
        if n >= 2 && n <= len.saturating_sub(8) && head[8] == b'{' {
            return Some(InputFormat::Safetensors);
        }
    }
    None
}

/// The format an extension names, if any.
pub fn by_extension(path: &Path) -> Option<InputFormat> {
    let ext = path.extension()?.to_str()?.to_ascii_lowercase();
    Some(match ext.as_str() {
        "npy" => InputFormat::Npy,
        "npz" => InputFormat::Npz,
        "safetensors" => InputFormat::Safetensors,
        "arrow" | "feather" | "ipc" => InputFormat::ArrowStream,
        "parquet" | "pq" => InputFormat::Parquet,
        "jsonl" | "ndjson" | "json" => InputFormat::Jsonl,
        "csv" => InputFormat::Csv,
        "tsv" | "tab" => InputFormat::Tsv,
        "png" => InputFormat::Png,
        "bin" | "raw" | "tok" | "tokens" | "u16" | "u32" | "ids" => InputFormat::Raw,
        _ => return None,
    })
}

/// Pick the format: content, then extension, then the user's fallback.
pub fn detect(path: &Path, head: &[u8], len: u64, opts: &ScanOptions) -> Result<InputFormat> {
    if let Some(f) = sniff(head, len) {
        return Ok(f);
    }
    if let Some(f) = by_extension(path) {
        return Ok(f);
    }
    if let Some(f) = opts.input_format {
        return Ok(f);
    }
    let names: Vec<&str> = InputFormat::ALL.iter().map(|f| f.name()).collect();
    Err(ScanError::UnknownFormat(names.join(", ")))
}

/// Read the integer arrays of one input.
pub fn read(input: &Input<'_>, format: InputFormat, opts: &ScanOptions) -> Result<Vec<Part>> {
    let parts = reader(format).read(input, opts)?;
    if parts.is_empty() {
        return Err(bad("no integer data found"));
    }
    Ok(parts)
}

/// Product of dims, or an error when it overflows.
pub(crate) fn element_count(dims: &[u64]) -> Result<u64> {
    dims.iter()
        .try_fold(1u64, |acc, &d| acc.checked_mul(d))
        .ok_or_else(|| bad(format!("shape {dims:?} overflows")))
}

//! One reader per format, and the choice between them: content (magic
//! bytes) first, extension second, `--input-format` last. The readers share
//! only `reader` (their interface) and the crate's leaf types; none uses
//! this module, which drives them.

mod arrow;
#[cfg(test)]
mod arrow_tests;
mod column_builder;
mod column_type;
mod csv;
mod ipc;
mod jsonl;
mod jsonl_path;
#[cfg(test)]
mod jsonl_tests;
pub mod megatron;
pub(crate) mod npy;
mod npz;
mod parquet;
mod png;
mod raw;
pub mod reader;
mod safetensors;

use crate::error::{bad, Result, ScanError};
use crate::format::{by_extension, InputFormat};
use crate::options::ScanOptions;
use crate::values::Part;
use reader::{Input, Reader};
use std::path::Path;

/// The reader of each format; the match is exhaustive, so a new variant
/// does not build without its reader.
pub fn reader_of(format: InputFormat) -> &'static dyn Reader {
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
        InputFormat::Megatron => &megatron::Megatron,
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

/// Pick the format: a Megatron index beside a `.bin`, content, then
/// extension, then the user's fallback.
pub fn detect(path: &Path, head: &[u8], len: u64, opts: &ScanOptions) -> Result<InputFormat> {
    if megatron::companion(path).is_some() {
        return Ok(InputFormat::Megatron);
    }
    if let Some(f) = sniff(head, len) {
        return Ok(f);
    }
    if let Some(f) = by_extension(path) {
        return Ok(f);
    }
    if let Some(f) = opts.input_format {
        return Ok(f);
    }
    Err(ScanError::UnknownFormat(InputFormat::names().join(", ")))
}

/// Read the integer arrays of one input.
pub fn read(input: &Input<'_>, format: InputFormat, opts: &ScanOptions) -> Result<Vec<Part>> {
    let parts = reader_of(format).read(input, opts)?;
    if parts.is_empty() {
        return Err(bad("no integer data found"));
    }
    Ok(parts)
}

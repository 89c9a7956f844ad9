//! One reader per format behind one trait, and the choice between them:
//! content (magic bytes) first, extension second, `--input-format` last.

mod arrow;
mod csv;
mod ipc;
mod jsonl;
pub mod megatron;
pub(crate) mod npy;
mod npz;
mod parquet;
mod png;
mod raw;
mod safetensors;

use crate::error::{bad, Result, ScanError};
use crate::options::ScanOptions;
use crate::values::{Bytes, Part};
use std::fmt;
use std::path::Path;
use std::str::FromStr;
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

/// The input formats, for `--input-format` and the per-file summary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum InputFormat {
    Raw,
    LlmC,
    Megatron,
    Npy,
    Npz,
    Safetensors,
    ArrowFile,
    ArrowStream,
    Parquet,
    Jsonl,
    Csv,
    Tsv,
    Png,
}

/// What the program knows of one format. Adding a format is a reader module,
/// a variant above, a row here and, when it has magic bytes, a test in `sniff`.
pub struct Spec {
    pub format: InputFormat,
    /// The `--input-format` value and the name in reports.
    pub name: &'static str,
    /// Other `--input-format` spellings.
    pub aliases: &'static [&'static str],
    /// Extensions that select it when the content does not; the first is the
    /// one its files usually have (`file_extension`).
    pub extensions: &'static [&'static str],
    /// The usual extension of a format no extension selects (content only).
    pub file_extension: &'static str,
    pub reader: &'static dyn Reader,
}

const fn spec(
    format: InputFormat,
    name: &'static str,
    aliases: &'static [&'static str],
    extensions: &'static [&'static str],
    reader: &'static dyn Reader,
) -> Spec {
    Spec {
        format,
        name,
        aliases,
        extensions,
        file_extension: name,
        reader,
    }
}

/// Every format, in `--input-format` order; extensions are looked up in this order.
pub const FORMATS: &[Spec] = &[
    spec(
        InputFormat::Raw,
        "raw",
        &["bin"],
        &["bin", "raw", "tok", "tokens", "u16", "u32", "ids"],
        &raw::Raw,
    ),
    Spec {
        file_extension: "bin",
        ..spec(InputFormat::LlmC, "llm.c", &["llmc"], &[], &raw::LlmC)
    },
    spec(InputFormat::Npy, "npy", &[], &["npy"], &npy::Npy),
    spec(InputFormat::Npz, "npz", &[], &["npz"], &npz::Npz),
    spec(
        InputFormat::Safetensors,
        "safetensors",
        &[],
        &["safetensors"],
        &safetensors::Safetensors,
    ),
    // An Arrow file is told from a stream by its magic; an `.arrow` file
    // without it is read as a stream (the `datasets` cache).
    spec(
        InputFormat::ArrowFile,
        "arrow",
        &["ipc", "feather"],
        &[],
        &arrow::Arrow,
    ),
    Spec {
        file_extension: "arrow",
        ..spec(
            InputFormat::ArrowStream,
            "arrow-stream",
            &[],
            &["arrow", "feather", "ipc"],
            &arrow::Arrow,
        )
    },
    spec(
        InputFormat::Parquet,
        "parquet",
        &[],
        &["parquet", "pq"],
        &parquet::Parquet,
    ),
    spec(
        InputFormat::Jsonl,
        "jsonl",
        &["ndjson"],
        &["jsonl", "ndjson", "json"],
        &jsonl::Jsonl,
    ),
    spec(
        InputFormat::Csv,
        "csv",
        &[],
        &["csv"],
        &csv::Csv { delimiter: b',' },
    ),
    spec(
        InputFormat::Tsv,
        "tsv",
        &[],
        &["tsv", "tab"],
        &csv::Csv { delimiter: b'\t' },
    ),
    spec(InputFormat::Png, "png", &[], &["png"], &png::Png),
    // Told by the `.idx` beside the `.bin` (`megatron::companion`). Last, so
    // the fuzz regressions' format selectors keep their meaning.
    Spec {
        file_extension: "bin",
        ..spec(
            InputFormat::Megatron,
            "megatron",
            &["mmidx", "indexed"],
            &[],
            &megatron::Megatron,
        )
    },
];

impl InputFormat {
    pub fn spec(self) -> &'static Spec {
        // Every variant has a row: the `formats_table_is_complete` test.
        FORMATS
            .iter()
            .find(|s| s.format == self)
            .unwrap_or(&FORMATS[0])
    }
    pub fn name(self) -> &'static str {
        self.spec().name
    }
    /// The file extension this format usually has.
    pub fn extension(self) -> &'static str {
        self.spec().file_extension
    }
    /// The `--input-format` names, for help and errors.
    pub fn names() -> Vec<&'static str> {
        FORMATS.iter().map(|s| s.name).collect()
    }
}

impl fmt::Display for InputFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for InputFormat {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        let s = s.to_ascii_lowercase();
        FORMATS
            .iter()
            .find(|f| f.name == s || f.aliases.contains(&s.as_str()))
            .map(|f| f.format)
            .ok_or_else(|| {
                format!(
                    "unknown input format {s:?} ({})",
                    InputFormat::names().join(", ")
                )
            })
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
    FORMATS
        .iter()
        .find(|f| f.extensions.contains(&ext.as_str()))
        .map(|f| f.format)
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
    let parts = format.spec().reader.read(input, opts)?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_table_is_complete() {
        // One row per variant, names and spellings unique.
        let all = [
            InputFormat::Raw,
            InputFormat::LlmC,
            InputFormat::Megatron,
            InputFormat::Npy,
            InputFormat::Npz,
            InputFormat::Safetensors,
            InputFormat::ArrowFile,
            InputFormat::ArrowStream,
            InputFormat::Parquet,
            InputFormat::Jsonl,
            InputFormat::Csv,
            InputFormat::Tsv,
            InputFormat::Png,
        ];
        for f in all {
            assert_eq!(FORMATS.iter().filter(|s| s.format == f).count(), 1, "{f:?}");
            assert_eq!(f.name().parse::<InputFormat>(), Ok(f));
        }
        assert_eq!(FORMATS.len(), all.len());
        let mut spellings: Vec<&str> = FORMATS
            .iter()
            .flat_map(|s| std::iter::once(s.name).chain(s.aliases.iter().copied()))
            .collect();
        spellings.sort_unstable();
        let n = spellings.len();
        spellings.dedup();
        assert_eq!(spellings.len(), n, "a spelling names two formats");
    }

    #[test]
    fn extensions_keep_their_formats() {
        for (ext, want) in [
            ("bin", InputFormat::Raw),
            ("tokens", InputFormat::Raw),
            ("arrow", InputFormat::ArrowStream),
            ("feather", InputFormat::ArrowStream),
            ("pq", InputFormat::Parquet),
            ("json", InputFormat::Jsonl),
            ("tab", InputFormat::Tsv),
            ("PNG", InputFormat::Png),
        ] {
            let path = format!("x.{ext}");
            assert_eq!(by_extension(Path::new(&path)), Some(want), "{ext}");
        }
        assert_eq!(by_extension(Path::new("x.txt")), None);
        assert_eq!("ipc".parse(), Ok(InputFormat::ArrowFile));
        assert_eq!("BIN".parse(), Ok(InputFormat::Raw));
        assert!("xls".parse::<InputFormat>().is_err());
        assert_eq!(InputFormat::LlmC.extension(), "bin");
        assert_eq!(InputFormat::ArrowFile.extension(), "arrow");
    }
}

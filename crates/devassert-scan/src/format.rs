//! The input formats by name: the `--input-format` spellings, the
//! extensions that select each, and the name in reports. Which reader
//! reads a format is `formats`' business; this table knows no reader, so
//! the options and the values that name a format need none.

use std::fmt;
use std::path::Path;
use std::str::FromStr;

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

/// What the program knows of one format by name. Adding a format is a
/// variant above, a row here, a reader module in `formats/` with its arm in
/// `formats::reader_of` and, when it has magic bytes, a test in `formats::sniff`.
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
}

const fn spec(
    format: InputFormat,
    name: &'static str,
    aliases: &'static [&'static str],
    extensions: &'static [&'static str],
) -> Spec {
    Spec {
        format,
        name,
        aliases,
        extensions,
        file_extension: name,
    }
}

/// Every format, in `--input-format` order; extensions are looked up in this order.
pub const FORMATS: &[Spec] = &[
    spec(
        InputFormat::Raw,
        "raw",
        &["bin"],
        &["bin", "raw", "tok", "tokens", "u16", "u32", "ids"],
    ),
    Spec {
        file_extension: "bin",
        ..spec(InputFormat::LlmC, "llm.c", &["llmc"], &[])
    },
    spec(InputFormat::Npy, "npy", &[], &["npy"]),
    spec(InputFormat::Npz, "npz", &[], &["npz"]),
    spec(
        InputFormat::Safetensors,
        "safetensors",
        &[],
        &["safetensors"],
    ),
    // An Arrow file is told from a stream by its magic; an `.arrow` file
    // without it is read as a stream (the `datasets` cache).
    spec(InputFormat::ArrowFile, "arrow", &["ipc", "feather"], &[]),
    Spec {
        file_extension: "arrow",
        ..spec(
            InputFormat::ArrowStream,
            "arrow-stream",
            &[],
            &["arrow", "feather", "ipc"],
        )
    },
    spec(InputFormat::Parquet, "parquet", &[], &["parquet", "pq"]),
    spec(
        InputFormat::Jsonl,
        "jsonl",
        &["ndjson"],
        &["jsonl", "ndjson", "json"],
    ),
    spec(InputFormat::Csv, "csv", &[], &["csv"]),
    spec(InputFormat::Tsv, "tsv", &[], &["tsv", "tab"]),
    spec(InputFormat::Png, "png", &[], &["png"]),
    // Told by the `.idx` beside the `.bin` (`megatron::companion`). Last, so
    // the fuzz regressions' format selectors keep their meaning.
    Spec {
        file_extension: "bin",
        ..spec(
            InputFormat::Megatron,
            "megatron",
            &["mmidx", "indexed"],
            &[],
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

/// The format an extension names, if any.
pub fn by_extension(path: &Path) -> Option<InputFormat> {
    let ext = path.extension()?.to_str()?.to_ascii_lowercase();
    FORMATS
        .iter()
        .find(|f| f.extensions.contains(&ext.as_str()))
        .map(|f| f.format)
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

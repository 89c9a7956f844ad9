//! JSON Lines: one object per line; `--column` is a dotted field path whose
//! value is an integer or an array of integers.
//!
//! Nothing of a line is held but the field's integers, a batch at a time: a
//! line is parsed in place ([`serde_json`]'s streaming deserializer with
//! visitors that walk the path), the other fields skipped unread
//! ([`IgnoredAny`]), and the values scanned batch by batch as they are
//! found (a line with a 50M-id array took 2 GB as a `Value`). This module
//! reads the lines; `jsonl_path` walks a line's path and collects its
//! integers.

use super::jsonl_path::{default_field, find_path, Sink};
use super::reader::{Input, Reader};
use crate::error::{bad, excerpt, Result};
use crate::format::InputFormat;
use crate::mapped::DropBehind;
use crate::options::ScanOptions;
use crate::values::Part;

pub struct Jsonl;

impl Reader for Jsonl {
    fn read(&self, input: &Input<'_>, opts: &ScanOptions) -> Result<Vec<Part>> {
        read_lines(input, opts, LONG_LINE)
    }
}

/// The reader, with lines longer than `long_line` parsed as they are read.
pub(super) fn read_lines(
    input: &Input<'_>,
    opts: &ScanOptions,
    long_line: usize,
) -> Result<Vec<Part>> {
    {
        let data = input.data();
        // Line by line, the map's pages dropped behind: the file is never
        // held whole, not even to check that it is UTF-8.
        let mut behind = DropBehind::new(&input.bytes, data);
        let mut field: Option<String> = opts.column.clone();
        let mut sink = Sink::new(opts);
        let mut at = 0;
        let mut n = 0;
        while at < data.len() {
            let raw = &data[at..line_end(data, at, &mut behind)];
            n += 1;
            let lineno = n;
            at += raw.len();
            let raw = raw.strip_suffix(b"\n").unwrap_or(raw);
            let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
            // A line past LONG_LINE is parsed as it is read, its pages
            // dropped behind the parser (its strings are checked to be
            // UTF-8 as they are parsed); any other is checked whole first.
            let long = raw.len() > long_line;
            let text = if long {
                ""
            } else {
                std::str::from_utf8(raw)
                    .map_err(|e| bad(format!("line {lineno}: not UTF-8 text: {e}")))?
                    .trim()
            };
            let line = if long {
                raw.trim_ascii()
            } else {
                text.as_bytes()
            };
            if line.is_empty() {
                continue;
            }
            let start = line.as_ptr() as usize - data.as_ptr() as usize;
            macro_rules! parse {
                ($f:expr) => {
                    if long {
                        // Each parse reads the line from its start again.
                        behind.restart(start);
                        let along = Along {
                            data,
                            at: start,
                            end: start + line.len(),
                            behind: &mut behind,
                        };
                        let along = std::io::BufReader::with_capacity(1 << 16, along);
                        $f(&mut serde_json::Deserializer::from_reader(along))
                    } else {
                        $f(&mut serde_json::Deserializer::from_str(text))
                    }
                };
            }
            let path = match &field {
                Some(f) => f.clone(),
                None => {
                    let chosen = parse!(|de| default_field(de, opts.target))
                        .map_err(|e| bad(format!("line {lineno}: not valid JSON: {e}")))?;
                    let chosen = chosen.map_err(|keys| {
                        bad(format!(
                            "line {lineno}: pass --column to choose a field (fields: {})",
                            excerpt(&keys.join(", "))
                        ))
                    })?;
                    field = Some(chosen.clone());
                    chosen
                }
            };
            let keys: Vec<&str> = path.split('.').collect();
            let found = parse!(|de| find_path(de, &keys, &mut sink));
            let found = match found {
                Ok(found) => found,
                Err(e) => {
                    // A batch over the budget stopped the parse: that error.
                    if let Some(stopped) = sink.error.take() {
                        return Err(stopped);
                    }
                    return Err(match sink.failed.take() {
                        Some(why) => bad(format!("line {lineno}: {path}{why}")),
                        None => bad(format!("line {lineno}: not valid JSON: {e}")),
                    });
                }
            };
            if !found {
                return Err(bad(format!("line {lineno}: no field {path:?}")));
            }
            sink.end_row()?;
        }
        let label = if sink.any_array { "array<int>" } else { "int" };
        let mut part = sink
            .finish()?
            .finish(String::new(), label.into(), InputFormat::Jsonl);
        part.name = field;
        Ok(vec![part])
    }
}

/// Lines longer than this are parsed as they are read ([`Along`]), their
/// pages dropped behind the parser: a line this long parsed in place would
/// by itself fill the 256 MiB peak. Reading through `io::Read` is several
/// times slower per byte than parsing the slice, so shorter lines are
/// parsed in place (their pages dropped once the line is done).
const LONG_LINE: usize = 192 << 20;

/// Where the line at `start` ends (past its newline), the pages searched
/// dropped behind as they are read; for a line the parser will read again,
/// the drops start over at its start.
fn line_end(data: &[u8], start: usize, behind: &mut DropBehind<'_>) -> usize {
    const CHUNK: usize = 1 << 20;
    behind.reached(start);
    let mut from = start;
    let end = loop {
        let to = (from + CHUNK).min(data.len());
        if let Some(i) = memchr::memchr(b'\n', &data[from..to]) {
            break from + i + 1;
        }
        if to == data.len() {
            break to;
        }
        from = to;
        behind.reached(from);
    };
    behind.restart(start);
    end
}

/// A long line as the parser reads it: from the map, the pages behind
/// the parser dropped as it goes.
struct Along<'a, 'b> {
    data: &'a [u8],
    at: usize,
    end: usize,
    behind: &'b mut DropBehind<'a>,
}

impl std::io::Read for Along<'_, '_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = buf.len().min(self.end - self.at);
        buf[..n].copy_from_slice(&self.data[self.at..self.at + n]);
        self.at += n;
        self.behind.reached(self.at);
        Ok(n)
    }
}

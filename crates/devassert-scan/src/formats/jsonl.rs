//! JSON Lines: one object per line; `--column` is a dotted field path whose
//! value is an integer or an array of integers.
//!
//! Nothing of a line is held but the field's integers, a batch at a time: a
//! line is parsed in place ([`serde_json`]'s streaming deserializer with
//! visitors that walk the path), the other fields skipped unread
//! ([`IgnoredAny`]), and the values scanned batch by batch as they are
//! found (a line with a 50M-id array took 2 GB as a `Value`).

use super::arrow::ColumnBuilder;
use super::reader::{Input, Reader};
use crate::dtype::Dtype;
use crate::error::{bad, excerpt, Result};
use crate::format::InputFormat;
use crate::mapped::DropBehind;
use crate::options::{ScanOptions, Target};
use crate::values::Part;
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserializer as _;
use std::fmt;

pub struct Jsonl;

/// Values scanned at a time.
pub(super) const BATCH: usize = 1 << 16;

/// Keys of the first line named in a message, at most.
const KEYS_SHOWN: usize = 50;

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

/// Find the value at `keys` in the line and scan it: `true` once found.
fn find_path<'de, R: serde_json::de::Read<'de>>(
    de: &mut serde_json::Deserializer<R>,
    keys: &[&str],
    sink: &mut Sink<'_>,
) -> serde_json::Result<bool> {
    let found = PathSeed { rest: keys, sink }.deserialize(&mut *de)?;
    de.end()?;
    Ok(found)
}

/// The usual field of the line's object, or its keys when none is there.
fn default_field<'de, R: serde_json::de::Read<'de>>(
    de: &mut serde_json::Deserializer<R>,
    target: Target,
) -> serde_json::Result<std::result::Result<String, Vec<String>>> {
    let usual: &[&str] = match target {
        Target::Tokens => &["input_ids", "tokens", "token_ids", "ids"],
        Target::Labels => &["labels", "label", "target", "class", "class_id"],
    };
    let keys = de.deserialize_any(KeysVisitor)?;
    de.end()?;
    Ok(usual
        .iter()
        .find(|u| keys.iter().any(|k| k == *u))
        .map(|u| u.to_string())
        .ok_or(keys))
}

/// The top-level keys of an object (the first [`KEYS_SHOWN`] unseen ones
/// kept, the usual names always), values skipped unread.
struct KeysVisitor;

impl<'de> Visitor<'de> for KeysVisitor {
    type Value = Vec<String>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object")
    }
    fn visit_map<A: MapAccess<'de>>(
        self,
        mut map: A,
    ) -> std::result::Result<Vec<String>, A::Error> {
        let mut keys = Vec::new();
        while let Some(k) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            map.next_value::<IgnoredAny>()?;
            let usual = matches!(
                k.as_ref(),
                "input_ids"
                    | "tokens"
                    | "token_ids"
                    | "ids"
                    | "labels"
                    | "label"
                    | "target"
                    | "class"
                    | "class_id"
            );
            if keys.len() < KEYS_SHOWN || usual {
                keys.push(k.into_owned());
            }
        }
        Ok(keys)
    }
    // Not an object: no fields to choose from.
    fn visit_seq<A: SeqAccess<'de>>(
        self,
        mut seq: A,
    ) -> std::result::Result<Vec<String>, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Vec::new())
    }
    fn visit_i64<E>(self, _: i64) -> std::result::Result<Vec<String>, E> {
        Ok(Vec::new())
    }
    fn visit_u64<E>(self, _: u64) -> std::result::Result<Vec<String>, E> {
        Ok(Vec::new())
    }
    fn visit_f64<E>(self, _: f64) -> std::result::Result<Vec<String>, E> {
        Ok(Vec::new())
    }
    fn visit_bool<E>(self, _: bool) -> std::result::Result<Vec<String>, E> {
        Ok(Vec::new())
    }
    fn visit_str<E>(self, _: &str) -> std::result::Result<Vec<String>, E> {
        Ok(Vec::new())
    }
    fn visit_unit<E>(self) -> std::result::Result<Vec<String>, E> {
        Ok(Vec::new())
    }
}

/// Where the field's integers go: a batch, scanned when full.
struct Sink<'o> {
    builder: ColumnBuilder<'o>,
    values: Vec<i64>,
    /// Where each row of the batch ends, in values from the batch's start.
    ends: Vec<u64>,
    /// Some row of the batch is not exactly one value.
    uneven: bool,
    row_len: u64,
    any_array: bool,
    /// Why the value at the path is unusable (`[j] is "x", not an integer`).
    failed: Option<String>,
    /// Why the scan stopped (a batch over the budget).
    error: Option<crate::error::ScanError>,
}

impl<'o> Sink<'o> {
    fn new(opts: &'o ScanOptions) -> Self {
        Sink {
            builder: ColumnBuilder::new(false, opts),
            values: Vec::with_capacity(BATCH),
            ends: Vec::new(),
            uneven: false,
            row_len: 0,
            any_array: false,
            failed: None,
            error: None,
        }
    }

    /// Add a value; `false` once the scan has stopped (see `error`).
    fn push(&mut self, v: i64) -> bool {
        self.values.push(v);
        self.row_len += 1;
        // A long row is scanned in pieces; its end is recorded with the last.
        if self.values.len() >= BATCH {
            self.uneven = true;
            return self.flush();
        }
        true
    }

    fn end_row(&mut self) -> Result<()> {
        self.uneven |= self.row_len != 1 || self.any_array;
        self.ends.push(self.values.len() as u64);
        self.row_len = 0;
        if self.ends.len() >= BATCH {
            self.flush();
        }
        self.error.take().map_or(Ok(()), Err)
    }

    /// Scan the batch; `false` when it cannot be (over the budget: the
    /// error is kept). Rows still open carry over: their values are scanned
    /// now and their end recorded later, relative to the next batch.
    fn flush(&mut self) -> bool {
        let raw: &[u8] = bytemuck::cast_slice(&self.values);
        let ends = (self.uneven || self.any_array).then_some(self.ends.as_slice());
        if let Err(e) = self.builder.push_decoded(raw, Dtype::I64, Dtype::I64, ends) {
            self.error = Some(e);
            return false;
        }
        self.values.clear();
        self.ends.clear();
        true
    }

    fn finish(mut self) -> Result<ColumnBuilder<'o>> {
        if !self.values.is_empty() || !self.ends.is_empty() {
            self.flush();
        }
        self.error.take().map_or(Ok(self.builder), Err)
    }
}

/// The value at `rest` below the current one: `true` once found.
struct PathSeed<'a, 'o> {
    rest: &'a [&'a str],
    sink: &'a mut Sink<'o>,
}

impl<'de> DeserializeSeed<'de> for PathSeed<'_, '_> {
    type Value = bool;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> std::result::Result<bool, D::Error> {
        if self.rest.is_empty() {
            d.deserialize_any(Target0 { sink: self.sink })
        } else {
            d.deserialize_any(self)
        }
    }
}

impl<'de> Visitor<'de> for PathSeed<'_, '_> {
    type Value = bool;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<bool, A::Error> {
        let (key, below) = (self.rest[0], &self.rest[1..]);
        let mut found = false;
        while let Some(k) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            if !found && k == key {
                found = map.next_value_seed(PathSeed {
                    rest: below,
                    sink: &mut *self.sink,
                })?;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(found)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<bool, A::Error> {
        let want = self.rest[0].parse::<usize>().ok();
        let mut found = false;
        let mut i = 0usize;
        loop {
            let more = if Some(i) == want {
                let seed = PathSeed {
                    rest: &self.rest[1..],
                    sink: &mut *self.sink,
                };
                seq.next_element_seed(seed)?
                    .inspect(|&f| found = f)
                    .is_some()
            } else {
                seq.next_element::<IgnoredAny>()?.is_some()
            };
            if !more {
                return Ok(found);
            }
            i += 1;
        }
    }
    fn visit_bool<E>(self, _: bool) -> std::result::Result<bool, E> {
        Ok(false)
    }
    fn visit_i64<E>(self, _: i64) -> std::result::Result<bool, E> {
        Ok(false)
    }
    fn visit_u64<E>(self, _: u64) -> std::result::Result<bool, E> {
        Ok(false)
    }
    fn visit_f64<E>(self, _: f64) -> std::result::Result<bool, E> {
        Ok(false)
    }
    fn visit_str<E>(self, _: &str) -> std::result::Result<bool, E> {
        Ok(false)
    }
    fn visit_unit<E>(self) -> std::result::Result<bool, E> {
        Ok(false)
    }
}

/// The value at the path: an integer, an array of integers, or null.
struct Target0<'a, 'o> {
    sink: &'a mut Sink<'o>,
}

fn fail<E: de::Error>(sink: &mut Sink<'_>, why: String) -> E {
    sink.failed = Some(why);
    E::custom("not an integer")
}

fn sat(u: u64) -> i64 {
    i64::try_from(u).unwrap_or(i64::MAX)
}

impl<'de> Visitor<'de> for Target0<'_, '_> {
    type Value = bool;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an integer or an array of integers")
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> std::result::Result<bool, E> {
        // A stop is reported by the row's end.
        self.sink.push(v);
        Ok(true)
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> std::result::Result<bool, E> {
        self.sink.push(sat(v));
        Ok(true)
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> std::result::Result<bool, E> {
        Err(fail(self.sink, format!(" is {v}, not an integer")))
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> std::result::Result<bool, E> {
        Err(fail(self.sink, format!(" is {v}, not an integer")))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> std::result::Result<bool, E> {
        let why = format!(" is \"{}\", not an integer", excerpt(v));
        Err(fail(self.sink, why))
    }
    fn visit_unit<E>(self) -> std::result::Result<bool, E> {
        Ok(true)
    }
    fn visit_map<A: MapAccess<'de>>(self, _: A) -> std::result::Result<bool, A::Error> {
        Err(fail(self.sink, " is an object, not an integer".into()))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<bool, A::Error> {
        self.sink.any_array = true;
        let mut j = 0u64;
        while let Some(ok) = seq.next_element_seed(Item {
            sink: &mut *self.sink,
            j,
        })? {
            if !ok {
                return Err(de::Error::custom("the scan stopped"));
            }
            j += 1;
        }
        Ok(true)
    }
}

/// One element of the array at the path.
struct Item<'a, 'o> {
    sink: &'a mut Sink<'o>,
    j: u64,
}

impl<'de> DeserializeSeed<'de> for Item<'_, '_> {
    type Value = bool;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> std::result::Result<bool, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Item<'_, '_> {
    type Value = bool;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an integer")
    }
    fn visit_i64<E>(self, v: i64) -> std::result::Result<bool, E> {
        Ok(self.sink.push(v))
    }
    fn visit_u64<E>(self, v: u64) -> std::result::Result<bool, E> {
        Ok(self.sink.push(sat(v)))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> std::result::Result<bool, E> {
        let why = format!("[{}] is {v}, not an integer", self.j);
        Err(fail(self.sink, why))
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> std::result::Result<bool, E> {
        let why = format!("[{}] is {v}, not an integer", self.j);
        Err(fail(self.sink, why))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> std::result::Result<bool, E> {
        let why = format!("[{}] is \"{}\", not an integer", self.j, excerpt(v));
        Err(fail(self.sink, why))
    }
    fn visit_unit<E: de::Error>(self) -> std::result::Result<bool, E> {
        let why = format!("[{}] is null, not an integer", self.j);
        Err(fail(self.sink, why))
    }
    fn visit_map<A: MapAccess<'de>>(self, _: A) -> std::result::Result<bool, A::Error> {
        let why = format!("[{}] is an object, not an integer", self.j);
        Err(fail(self.sink, why))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> std::result::Result<bool, A::Error> {
        let why = format!("[{}] is an array, not an integer", self.j);
        Err(fail(self.sink, why))
    }
}

//! The JSONL reader's visitors: a line's value at a dotted path found as
//! the line is parsed, the other fields skipped unread ([`IgnoredAny`]), and
//! its integers collected into batches that are scanned when full; the
//! usual field chosen when `--column` is not given.

use super::column_builder::ColumnBuilder;
use crate::dtype::Dtype;
use crate::error::{excerpt, Result};
use crate::options::{ScanOptions, Target};
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserializer as _;
use std::fmt;

/// Values scanned at a time.
pub(super) const BATCH: usize = 1 << 16;

/// Keys of the first line named in a message, at most.
const KEYS_SHOWN: usize = 50;

/// Find the value at `keys` in the line and scan it: `true` once found.
pub(super) fn find_path<'de, R: serde_json::de::Read<'de>>(
    de: &mut serde_json::Deserializer<R>,
    keys: &[&str],
    sink: &mut Sink<'_>,
) -> serde_json::Result<bool> {
    let found = PathSeed { rest: keys, sink }.deserialize(&mut *de)?;
    de.end()?;
    Ok(found)
}

/// The usual field of the line's object, or its keys when none is there.
pub(super) fn default_field<'de, R: serde_json::de::Read<'de>>(
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
pub(super) struct Sink<'o> {
    builder: ColumnBuilder<'o>,
    values: Vec<i64>,
    /// Where each row of the batch ends, in values from the batch's start.
    ends: Vec<u64>,
    /// Some row of the batch is not exactly one value.
    uneven: bool,
    row_len: u64,
    pub(super) any_array: bool,
    /// Why the value at the path is unusable (`[j] is "x", not an integer`).
    pub(super) failed: Option<String>,
    /// Why the scan stopped (a batch over the budget).
    pub(super) error: Option<crate::error::ScanError>,
}

impl<'o> Sink<'o> {
    pub(super) fn new(opts: &'o ScanOptions) -> Self {
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

    pub(super) fn end_row(&mut self) -> Result<()> {
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

    pub(super) fn finish(mut self) -> Result<ColumnBuilder<'o>> {
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

//! The JSON files of a model folder, read within a memory budget.
//!
//! A JSON value in memory takes 10 to 16 times its text (a 120 MB
//! `config.json` peaked at 1.4 GB), so no file is read whole: the parser
//! streams from the file, the keys a caller only counts are skipped unread
//! ([`IgnoredAny`]), and the text of the values kept is metered as it
//! is parsed: past what the command's [`Budget`] has left the read stops,
//! the file left out, before the memory is taken.

use crate::budget::{cost, Budget, BUDGET_WORDS, JSON_PER_BYTE};
use crate::error::ModelError;
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, Visitor};
use serde_json::{Map, Value};
use std::cell::Cell;
use std::fmt;
use std::io::{self, BufReader, Read};
use std::path::Path;
use std::rc::Rc;

/// What to do with one top-level key's value.
pub(crate) enum Take {
    /// Keep it as a [`Value`] (metered).
    Keep,
    /// Keep only how many entries it has (an object or an array), skipped unread.
    Count,
}

/// The top-level object of a JSON file, within the budget.
pub(crate) struct Object {
    pub map: Map<String, Value>,
    /// Entries of each [`Take::Count`] key present.
    pub counts: Vec<(String, u64)>,
}

/// Read the top-level object of `path` (a regular file, opened without
/// blocking), taking each key as `take` says.
pub(crate) fn read_object(
    path: &Path,
    take: &dyn Fn(&str) -> Take,
    budget: &Budget,
) -> Result<Object, ModelError> {
    let meter = Rc::new(Meter::default());
    let de = reader(path, &meter)?;
    parse(
        path,
        &meter,
        budget,
        de,
        ObjectSeed {
            take,
            meter: &meter,
            budget,
        },
    )
}

/// Read all of `path`'s top-level object (metered).
pub(crate) fn read_all(path: &Path, budget: &Budget) -> Result<Map<String, Value>, ModelError> {
    read_object(path, &|_| Take::Keep, budget).map(|o| o.map)
}

/// `read_all` as one JSON value (an object).
pub(crate) fn read_json(path: &Path, budget: &Budget) -> Result<Value, ModelError> {
    read_all(path, budget).map(Value::Object)
}

/// Stream `path` through a seed of the caller's, which draws what it keeps
/// (the tokenizer's vocabulary, the weight map) from `budget` itself.
pub(crate) fn read_with<T>(
    path: &Path,
    budget: &Budget,
    seed: impl for<'de> DeserializeSeed<'de, Value = T>,
) -> Result<T, ModelError> {
    let meter = Rc::new(Meter::default());
    let de = reader(path, &meter)?;
    parse(path, &meter, budget, de, seed)
}

type De = serde_json::Deserializer<serde_json::de::IoRead<Metered>>;

fn reader(path: &Path, meter: &Rc<Meter>) -> Result<De, ModelError> {
    let file = devassert_core::regular::open(path).map_err(|e| ModelError::io(path, e))?;
    Ok(serde_json::Deserializer::from_reader(Metered {
        inner: BufReader::new(file),
        meter: Rc::clone(meter),
    }))
}

fn parse<T>(
    path: &Path,
    meter: &Meter,
    budget: &Budget,
    mut de: De,
    seed: impl for<'de> DeserializeSeed<'de, Value = T>,
) -> Result<T, ModelError> {
    let before = budget.left();
    let r = seed.deserialize(&mut de).and_then(|v| de.end().map(|()| v));
    r.map_err(|source| {
        // What a file not read took is freed with it: given back.
        budget.give(before.saturating_sub(budget.left()));
        if meter.over.get() {
            let asked = cost(budget.left() / JSON_PER_BYTE + 1, JSON_PER_BYTE);
            ModelError::over_budget(path, budget.refusal(asked))
        } else if source.is_data() && source.to_string().contains(BUDGET_WORDS) {
            // A seed's draw refused: said as the budget, not as broken JSON.
            let text = source.to_string();
            let message = text.split(" at line ").next().unwrap_or(&text);
            ModelError::over_budget(path, message)
        } else {
            ModelError::Json {
                path: path.to_path_buf(),
                source,
            }
        }
    })
}

/// Where the parser is in the file, and where a kept value must end.
struct Meter {
    at: Cell<u64>,
    stop_at: Cell<u64>,
    over: Cell<bool>,
}

impl Default for Meter {
    fn default() -> Self {
        Meter {
            at: Cell::new(0),
            stop_at: Cell::new(u64::MAX),
            over: Cell::new(false),
        }
    }
}

/// The file as the parser reads it: a read past `stop_at` fails, so a kept
/// value never grows past the budget.
struct Metered {
    inner: BufReader<std::fs::File>,
    meter: Rc<Meter>,
}

impl Read for Metered {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let m = &self.meter;
        let room = m.stop_at.get().saturating_sub(m.at.get());
        if room == 0 && !buf.is_empty() {
            m.over.set(true);
            return Err(io::Error::other("over the memory budget"));
        }
        let want = buf.len().min(usize::try_from(room).unwrap_or(usize::MAX));
        let n = self.inner.read(&mut buf[..want])?;
        m.at.set(m.at.get() + n as u64);
        Ok(n)
    }
}

struct ObjectSeed<'a> {
    take: &'a dyn Fn(&str) -> Take,
    meter: &'a Meter,
    budget: &'a Budget,
}

impl<'de> DeserializeSeed<'de> for ObjectSeed<'_> {
    type Value = Object;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Object, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for ObjectSeed<'_> {
    type Value = Object;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Object, A::Error> {
        let mut out = Object {
            map: Map::new(),
            counts: Vec::new(),
        };
        while let Some(k) = map.next_key::<String>()? {
            match (self.take)(&k) {
                Take::Keep => {
                    // The value's text may run only as far as the budget
                    // left can hold its values; what it held is then taken.
                    let start = self.meter.at.get();
                    let room = self.budget.left() / JSON_PER_BYTE;
                    self.meter.stop_at.set(start.saturating_add(room));
                    let v: Value = map.next_value()?;
                    self.meter.stop_at.set(u64::MAX);
                    let text = self.meter.at.get() - start + k.len() as u64;
                    self.budget
                        .take(cost(text, JSON_PER_BYTE).min(self.budget.left()))
                        .map_err(de::Error::custom)?;
                    out.map.insert(k, v);
                }
                Take::Count => {
                    let n = map.next_value_seed(CountSeed)?;
                    out.counts.push((k, n));
                }
            }
        }
        Ok(out)
    }
}

/// The number of entries of an object or array, each skipped unread.
struct CountSeed;

impl<'de> DeserializeSeed<'de> for CountSeed {
    type Value = u64;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<u64, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for CountSeed {
    type Value = u64;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object or an array")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<u64, A::Error> {
        let mut n = 0;
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {
            n += 1;
        }
        Ok(n)
    }
    fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<u64, A::Error> {
        let mut n = 0;
        while seq.next_element::<IgnoredAny>()?.is_some() {
            n += 1;
        }
        Ok(n)
    }
    // Anything else (null, a number) counts as no entries; the caller
    // reads the key's type from what it kept.
    fn visit_unit<E>(self) -> Result<u64, E> {
        Ok(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(d: &Path, name: &str, text: &str) -> std::path::PathBuf {
        let p = d.join(name);
        std::fs::write(&p, text).expect("write");
        p
    }

    #[test]
    fn counted_keys_are_never_held() {
        let d = tempfile::tempdir().expect("tempdir");
        // 20 MiB of counted keys: well past the limit had they been kept.
        let big: String = (0..2_000_000).map(|i| format!("{i},")).collect();
        let labels: String = (0..400_000).map(|i| format!("\"{i}\":\"L{i}\",")).collect();
        let text =
            format!("{{\"junk\":[{big}0],\"id2label\":{{{labels}\"x\":\"y\"}},\"vocab_size\":5}}");
        let p = write(d.path(), "config.json", &text);
        let budget = Budget::new(8 << 20);
        let o = read_object(
            &p,
            &|k| match k {
                "junk" | "id2label" => Take::Count,
                _ => Take::Keep,
            },
            &budget,
        )
        .expect("read");
        assert_eq!(o.map.get("vocab_size"), Some(&Value::from(5)));
        assert!(!o.map.contains_key("junk"));
        let counts = [
            ("junk".to_string(), 2_000_001),
            ("id2label".to_string(), 400_001),
        ];
        assert_eq!(o.counts, counts);
    }

    #[test]
    fn a_kept_value_past_the_limit_stops_the_read() {
        let d = tempfile::tempdir().expect("tempdir");
        let big: String = (0..3_000_000).map(|i| format!("{i},")).collect();
        let p = write(d.path(), "c.json", &format!("{{\"a\":[{big}0]}}"));
        let budget = Budget::new(128 << 20);
        let e = read_all(&p, &budget).expect_err("over the budget");
        assert!(matches!(e, ModelError::OverBudget { .. }), "{e}");
        assert!(e.to_string().contains("memory budget"), "{e}");
        // Two files share one budget: one that fits alone fails after another.
        let small: String = (0..300_000).map(|i| format!("{i},")).collect();
        let p = write(d.path(), "s.json", &format!("{{\"a\":[{small}0]}}"));
        let budget = Budget::new(64 << 20);
        read_all(&p, &budget).expect("fits alone");
        read_all(&p, &budget).expect("fits twice");
        let left = budget.left();
        let e = read_all(&p, &budget).expect_err("not three times");
        assert!(e.to_string().contains("memory budget"), "{e}");
        assert_eq!(budget.left(), left, "a file not read keeps nothing");
    }

    #[test]
    fn broken_json_is_still_named_invalid() {
        let d = tempfile::tempdir().expect("tempdir");
        let p = write(d.path(), "c.json", "{\"a\": ");
        let e = read_all(&p, &Budget::new(1 << 20))
            .expect_err("broken")
            .to_string();
        assert!(e.ends_with("invalid JSON"), "{e}");
    }
}

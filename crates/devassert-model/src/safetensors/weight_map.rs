//! `model.safetensors.index.json`, streamed: its `weight_map` (tensor name →
//! shard file) grouped by shard, the rest (`metadata`) skipped unread, and
//! each name kept drawn from the command's budget.

use crate::budget::{Budget, NAME_ENTRY};
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, Visitor};
use std::collections::BTreeMap;
use std::fmt;

/// Shard file → the tensors it holds, or why the index is unusable.
pub(crate) type Wanted = Result<BTreeMap<String, Vec<String>>, String>;

/// The largest published index (a model of ~100,000 tensors) holds ~8 MB
/// of names: ~13 MiB of the budget.
pub(crate) struct IndexSeed<'a>(pub &'a Budget);

impl<'de> DeserializeSeed<'de> for IndexSeed<'_> {
    type Value = Wanted;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Wanted, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for IndexSeed<'_> {
    type Value = Wanted;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object with a \"weight_map\"")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Wanted, A::Error> {
        let mut found = None;
        while let Some(k) = map.next_key::<String>()? {
            if k == "weight_map" && found.is_none() {
                found = Some(map.next_value_seed(MapSeed(self.0))?);
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(found.unwrap_or_else(|| {
            Err("no \"weight_map\" object of tensor names to shard files".into())
        }))
    }
}

struct MapSeed<'a>(&'a Budget);

impl<'de> DeserializeSeed<'de> for MapSeed<'_> {
    type Value = Wanted;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Wanted, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for MapSeed<'_> {
    type Value = Wanted;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object of tensor names to shard files")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Wanted, A::Error> {
        let mut wanted: BTreeMap<String, Vec<String>> = BTreeMap::new();
        let mut bad = None;
        while let Some(tensor) = map.next_key::<String>()? {
            if bad.is_some() {
                map.next_value::<IgnoredAny>()?;
                continue;
            }
            match map.next_value::<Option<String>>() {
                Ok(Some(file)) => {
                    let held = (tensor.len() + file.len()) as u64 + NAME_ENTRY;
                    self.0.take(held).map_err(de::Error::custom)?;
                    wanted.entry(file).or_default().push(tensor);
                }
                _ => bad = Some(format!("weight_map entry {tensor:?} is not a file name")),
            }
        }
        Ok(bad.map_or(Ok(wanted), Err))
    }
    // Not an object: the same message as a missing one.
    fn visit_unit<E>(self) -> Result<Wanted, E> {
        Ok(Err(
            "no \"weight_map\" object of tensor names to shard files".into(),
        ))
    }
}
